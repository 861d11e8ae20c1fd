"""examples/mnist.py: short training runs on NumPy and every usable device, the same losses
everywhere from the same seed, no allocation in the step loop, the data loaders and the CLI."""
import gzip
import importlib.util
import pathlib
import pickle

import numpy as np
import pytest

import dlarray

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONTEXTS = [None] + list(dlarray.devices())
IDS = [repr(c) for c in CONTEXTS]


def load_example():
    spec = importlib.util.spec_from_file_location("mnist_example", ROOT / "examples" / "mnist.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


mnist = load_example()
DATA = mnist.load_data(mnist.DEFAULT_DATA)


def train_epoch(trainer, batches, seed=0):
    order = np.random.default_rng(seed).permutation(len(batches.images))
    for images, labels in batches(order):
        trainer.step(images, labels)
    return trainer.mean_loss(reset=True)


def test_data():
    train_x, train_y, test_x, test_y = DATA
    assert train_x.shape == (8000, 784) and test_x.shape == (2000, 784)
    assert train_x.dtype == np.float32 and 0 <= train_x.min() and train_x.max() <= 1
    assert set(np.unique(train_y)) == set(range(10)) and test_y.shape == (2000,)


@pytest.mark.parametrize("model", ["logreg", "mlp"])
@pytest.mark.parametrize("exec_ctx", CONTEXTS, ids=IDS)
def test_one_epoch_learns(exec_ctx, model):
    trainer = mnist.Trainer(model, exec_ctx, mnist.DEFAULT_LR[model], seed=0)
    loss = train_epoch(trainer, mnist.EpochBatches(trainer, DATA[0], DATA[1], 100))
    accuracy = trainer.accuracy(trainer.to_device(DATA[2]), DATA[3])
    assert loss < 1.0 and accuracy > 0.85, (loss, accuracy)


@pytest.mark.parametrize("model", ["logreg", "mlp"])
def test_same_losses_on_every_device(model):
    images, labels = DATA[0][:600], mnist.one_hot(DATA[1][:600])
    runs = {}
    for ctx in CONTEXTS:
        trainer = mnist.Trainer(model, ctx, mnist.DEFAULT_LR[model], seed=3)
        losses = []
        for start in range(0, 600, 100):
            trainer.step(trainer.to_device(images[start:start + 100]),
                         trainer.to_device(labels[start:start + 100]))
            losses.append(trainer.mean_loss(reset=True))
        weights = [w if ctx is None else w.asnumpy() for w in trainer.weights]
        runs[repr(ctx)] = losses, weights
    reference_losses, reference_weights = runs.pop("None")
    assert reference_losses[-1] < reference_losses[0]
    for name, (losses, weights) in runs.items():
        np.testing.assert_allclose(losses, reference_losses, rtol=1e-4, err_msg=name)
        for w, r in zip(weights, reference_weights):
            np.testing.assert_allclose(w, r, rtol=1e-3, atol=1e-5, err_msg=name)


def test_step_loop_allocates_nothing(ctx):
    trainer = mnist.Trainer("mlp", ctx, 0.1, seed=0)
    batches = mnist.EpochBatches(trainer, DATA[0][:1000], DATA[1][:1000], 100)
    train_epoch(trainer, batches)
    before = dlarray.memory_stats(ctx)["num_allocations"]
    train_epoch(trainer, batches, seed=1)
    assert dlarray.memory_stats(ctx)["num_allocations"] == before


def test_load_dlsys_pickle(tmp_path):
    rng = np.random.default_rng(0)
    sets = [(rng.random((n, 784), dtype=np.float32), rng.integers(0, 10, n)) for n in (7, 3, 5)]
    path = tmp_path / "mnist.pkl.gz"
    with gzip.open(path, "wb") as f:
        pickle.dump(tuple(sets), f)
    train_x, train_y, test_x, test_y = mnist.load_data(str(path))
    np.testing.assert_array_equal(train_x, sets[0][0])
    np.testing.assert_array_equal(train_y, sets[0][1])
    np.testing.assert_array_equal(test_x, sets[2][0])
    np.testing.assert_array_equal(test_y, sets[2][1])
    with pytest.raises(ValueError, match=".npz or .pkl.gz"):
        mnist.load_data(str(tmp_path / "mnist.csv"))


def test_command_line(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    plot = tmp_path / "curves.png"
    losses, accuracies = mnist.main(["--model", "logreg", "--epochs", "2", "--plot", str(plot)])
    out = capsys.readouterr().out
    assert "logreg on %s" % mnist.default_device() in out
    assert "epoch  2: loss" in out and "test accuracy" in out
    assert len(losses) == len(accuracies) == 2 and accuracies[-1] > 0.85
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
