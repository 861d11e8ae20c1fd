"""The executor's data-parallel mode on two GPUs (NCCL, the side stream, the CUDA graph):
ddp_worker.py's training equals one GPU's on the whole global batch for every bucket size, mixed
dtypes reduce right, and 2000 graph replays with eager collectives queued between them neither
hang nor drift. Skips without two GPUs or without NCCL (test_ddp.py runs the same worker on two
CPU ranks)."""
import json
import os
import subprocess
import sys

import pytest

import dlarray

HERE = os.path.dirname(os.path.abspath(__file__))
GPUS = [c for c in dlarray.devices() if c.device_type == 2]


def expected_calls(steps):
    """[eager, recorded] NCCL collectives of ddp_worker.stress's data-parallel run: the four
    gradients' all-reduces recorded once on the graphs' communicator (replays call nothing);
    on the other, run 1's four (op by op), the recording's agreement, and the eager calls
    between the steps (the loss every step, an all-gather every 3rd, a broadcast every 5th)."""
    return [4 + 1 + steps + len(range(0, steps, 3)) + len(range(0, steps, 5)), 4]


def run_worker(tmp_path, gpus=2, **env_extra):
    """ddp_worker.py on ``gpus`` GPUs through the launcher; skips without NCCL."""
    import dlarray.distributed as dist
    try:
        dist.nccl_library()
    except RuntimeError as e:
        pytest.skip("NCCL is not installed: %s" % e)
    env = dict(os.environ, NCCL_NVLS_ENABLE="0", PYTHONUNBUFFERED="1", DLARRAY_DIST_TIMEOUT="120")
    env.update(env_extra)
    env.pop("DLARRAY_DIST_DEVICE", None)
    done = subprocess.run([sys.executable, "-m", "dlarray.distributed.run", "--nproc-per-node",
                           str(gpus), os.path.join(HERE, "ddp_worker.py"), str(tmp_path)],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]


@pytest.mark.skipif(len(GPUS) < 2, reason="fewer than two GPUs (the data-parallel mode on NCCL)")
def test_two_gpus_train_as_one_gpu_on_the_global_batch(tmp_path):
    run_worker(tmp_path)
    ranks = [json.loads((tmp_path / ("rank%d.json" % r)).read_text()) for r in (0, 1)]
    for r in ranks:
        assert r["mixed_failures"] == []
        runs = r["runs"]
        assert runs["1e-06"]["buckets"] == 4 and runs["25.0"]["buckets"] == 1
        for run in runs.values():  # cuBLAS may sum in another order on half the rows
            # run 1 op by op, run 2 records the graph (collectives included), run 3 replays it
            assert run["graph"] == [1, 2, 1, []], run
            assert run["loss_error"] < 1e-4, run
            assert run["weight_error"] < 1e-4, run
    assert ranks[0]["runs"] == ranks[1]["runs"]


@pytest.mark.skipif(len(GPUS) < 2, reason="fewer than two GPUs (the data-parallel mode on NCCL)")
def test_graph_replays_between_eager_collectives_neither_hang_nor_drift(tmp_path):
    # A hang fails the group within DLARRAY_DIST_TIMEOUT (the watchdog), well inside the limit.
    run_worker(tmp_path, DDP_STRESS_STEPS="2000", DLARRAY_DIST_TIMEOUT="60")
    ranks = [json.loads((tmp_path / ("stress%d.json" % r)).read_text()) for r in (0, 1)]
    for r in ranks:
        print("graph-replayed data-parallel steps:", r)
        assert r["graph"] == [1, 2000 - 1, 1, []], r  # one recording, then replays
        assert r["calls"] == expected_calls(2000), r
        assert r["unequal_gathers"] == 0, r  # the ranks' weights equal at every check
        assert r["loss_error"] < 1e-3, r  # one GPU on the global batch
        assert r["first_last"][1] < r["first_last"][0], r  # it does train
    assert ranks[0]["first_last"] == ranks[1]["first_last"]


@pytest.mark.skipif(not GPUS, reason="no GPU (the data-parallel mode on NCCL)")
def test_one_rank_replays_its_recorded_collectives_as_one_gpu_trains(tmp_path):
    # One GPU suffices for the machinery: the second communicator, collectives recorded on it
    # next to eager ones on the first, the ranks' agreement, the watchdog's notes.
    run_worker(tmp_path, gpus=1, DDP_STRESS_STEPS="300", DLARRAY_DIST_TIMEOUT="60")
    r = json.loads((tmp_path / "stress0.json").read_text())
    print("one-rank graph-replayed data-parallel steps:", r)
    assert r["graph"] == [1, 300 - 1, 1, []], r
    assert r["calls"] == expected_calls(300), r
    assert r["unequal_gathers"] == 0, r
    assert r["loss_error"] < 1e-5, r
    assert r["first_last"][1] < r["first_last"][0], r
