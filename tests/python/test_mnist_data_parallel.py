"""examples/mnist.py --gpus N: the batch split, why averaged gradients equal the global batch's
(checked with the NumPy executor), the CLI's checks, and on two GPUs the real run: parameters
identical on every rank after every step, accuracy within 0.5 % of one GPU."""
import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import dlarray


ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "mnist.py"
needs_two_gpus = pytest.mark.skipif(dlarray.gpu(1) not in dlarray.devices(),
                                    reason="fewer than two GPUs")


def load_example():
    spec = importlib.util.spec_from_file_location("mnist_dp_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


mnist = load_example()
DATA = mnist.load_data(mnist.DEFAULT_DATA)


def test_each_global_batch_is_split_into_equal_parts():
    images, labels = DATA[0][:1030], DATA[1][:1030]
    trainer = mnist.Trainer("logreg", None, 0.5, seed=0)
    order = np.random.default_rng(1).permutation(len(images))
    whole = mnist.EpochBatches(trainer, images, labels, 100)(order)
    parts = [mnist.EpochBatches(trainer, images, labels, 100, rank, 3)(order) for rank in range(3)]
    assert len(whole) == 11 and all(len(p) == 11 for p in parts)
    for step, (x, y) in enumerate(whole[:10]):
        local = [p[step] for p in parts]
        assert all(len(lx) == 33 for lx, _ in local)  # 100 // 3; one image left out
        np.testing.assert_array_equal(np.concatenate([lx for lx, _ in local]), x[:99])
        np.testing.assert_array_equal(np.concatenate([ly for _, ly in local]), y[:99])
    assert [len(p[10][0]) for p in parts] == [10, 10, 10]  # the last 30 images, trimmed to 30


@pytest.mark.parametrize("model", ["logreg", "mlp"])
def test_mean_of_the_ranks_gradients_is_the_global_batch_gradient(model):
    trainer = mnist.Trainer(model, None, 0.1, seed=2)
    x, y = DATA[0][:100], mnist.one_hot(DATA[1][:100])

    def gradients(images, labels):
        feed = dict(trainer.params)
        feed[trainer.x], feed[trainer.y_] = images, labels
        _, *grads = trainer.train_executor.run(feed)
        return [np.array(g, np.float64) for g in grads]

    whole = gradients(x, y)
    halves = [gradients(x[:50], y[:50]), gradients(x[50:], y[50:])]
    for g, a, b in zip(whole, *halves):
        np.testing.assert_allclose((a + b) / 2, g, rtol=1e-4, atol=1e-6)


def test_cli_checks_the_data_parallel_options():
    for argv, message in ((["--gpus", "0"], "--gpus must be at least 1"),
                          (["--gpus", "2", "--device", "cpu"], "trains on GPUs"),
                          (["--gpus", "3", "--batch-size", "100"], "does not split over 3")):
        done = subprocess.run([sys.executable, str(EXAMPLE)] + argv, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 2 and message in done.stderr, done.stderr


def final_accuracy(output):
    found = re.findall(r"final test accuracy ([0-9.]+)%", output)
    assert len(found) == 1, output
    return float(found[0])


@needs_two_gpus
def test_two_gpus_train_like_one_gpu_with_the_same_global_batch():
    env = dict(os.environ, NCCL_NVLS_ENABLE="0", PYTHONUNBUFFERED="1")
    args = ["--model", "mlp", "--epochs", "8", "--batch-size", "100"]
    one = subprocess.run([sys.executable, str(EXAMPLE), "--device", "gpu"] + args,
                         capture_output=True, text=True, timeout=400, env=env)
    assert one.returncode == 0, one.stderr[-3000:]
    two = subprocess.run([sys.executable, str(EXAMPLE), "--gpus", "2", "--check-sync"] + args,
                         capture_output=True, text=True, timeout=400, env=env)
    assert two.returncode == 0, two.stderr[-3000:]
    assert "parameters identical on all 2 ranks" in two.stdout and "640 per-step checks" in \
        two.stdout, two.stdout
    assert "2 GPUs (50 per GPU)" in two.stdout
    a, b = final_accuracy(one.stdout), final_accuracy(two.stdout)
    print("\nMNIST mlp, 8 epochs, global batch 100: 1 GPU %.2f%%, 2 GPUs %.2f%%" % (a, b))
    assert a > 90 and abs(a - b) <= 0.5, (a, b)


@needs_two_gpus
def test_two_gpus_per_parameter_all_reduce_keeps_ranks_identical():
    done = subprocess.run([sys.executable, str(EXAMPLE), "--gpus", "2", "--check-sync",
                           "--allreduce", "per-param", "--epochs", "1"], capture_output=True,
                          text=True, timeout=300, env=dict(os.environ, NCCL_NVLS_ENABLE="0"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "parameters identical on all 2 ranks" in done.stdout
