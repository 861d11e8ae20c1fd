"""The executor's data-parallel mode on two GPUs (the side stream): ddp_worker.py's training
equals one GPU's on the whole global batch for every bucket size, and mixed dtypes reduce right.
With the peer-memory all-reduce (the default on GPUs of one host) the small model's buckets are
recorded into the plan's one CUDA graph; with it off (NCCL), the plan replays as CUDA graph
segments with the collectives between them.
Skips without two GPUs or without NCCL (test_ddp.py runs the same worker on two CPU ranks)."""
import json
import os
import subprocess
import sys

import pytest

import dlarray

HERE = os.path.dirname(os.path.abspath(__file__))
GPUS = [c for c in dlarray.devices() if c.device_type == 2]


@pytest.mark.skipif(len(GPUS) < 2, reason="fewer than two GPUs (the data-parallel mode on NCCL)")
@pytest.mark.parametrize("peer", ["1", "0"], ids=["peer-all-reduce-in-the-graph", "nccl-segments"])
def test_two_gpus_train_as_one_gpu_on_the_global_batch(tmp_path, peer):
    import dlarray.distributed as dist
    try:
        dist.nccl_library()
    except RuntimeError as e:
        pytest.skip("NCCL is not installed: %s" % e)
    env = dict(os.environ, NCCL_NVLS_ENABLE="0", PYTHONUNBUFFERED="1", DLARRAY_DIST_TIMEOUT="120",
               DLARRAY_PEER_ALLREDUCE=peer)
    env.pop("DLARRAY_DIST_DEVICE", None)
    done = subprocess.run([sys.executable, "-m", "dlarray.distributed.run", "--nproc-per-node",
                           "2", os.path.join(HERE, "ddp_worker.py"), str(tmp_path)],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    ranks = [json.loads((tmp_path / ("rank%d.json" % r)).read_text()) for r in (0, 1)]
    for r in ranks:
        assert r["mixed_failures"] == []
        runs = r["runs"]
        assert runs["1e-06"]["buckets"] == 4 and runs["25.0"]["buckets"] == 1
        for key, run in runs.items():  # cuBLAS may sum in another order on half the rows
            # every bucket of this small float32 model goes to the peer kernel when it is on
            assert run["recordable"] is (peer == "1"), (key, run)
            # with an sgd_update_op, the peer kernels step the four parameters themselves
            stepped = 4 if peer == "1" and key.endswith("sgd_update_op") else 0
            assert run["in_all_reduce"] == stepped, (key, run)
            # run 1 op by op, run 2 records the graphs, runs 2 and 3 replay them (a recording
            # allocates the scratch no cache holds). Recorded all-reduces: one graph. NCCL: a
            # cut at each bucket start and at the wait before an update (the collectives run
            # between the segments); one bucket and no update node leave one graph.
            cut = run["buckets"] > 1 or key.endswith("sgd_update_op")
            assert run["graph"][:4] == [1, 2, 1, []], (key, run)
            assert len(run["graph"][4]) == 1, (key, run)
            if run["recordable"]:
                assert run["graph"][4][0] == 1, (key, run)
            else:
                assert run["graph"][4][0] >= 1 + cut, (key, run)
            assert run["loss_error"] < 1e-4, run
            assert run["weight_error"] < 1e-4, run
    assert ranks[0]["runs"] == ranks[1]["runs"]
