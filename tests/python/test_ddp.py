"""The executor's data-parallel mode (issue 24): gradient buckets all-reduced during the backward
pass. Two CPU ranks under mpirun (skipped without Open MPI): the same losses and parameters as one
process on the whole global batch, for one bucket per gradient, a few, and one for all; mixed
dtypes and odd shapes. Bad arguments, without MPI. The GPU side: test_ddp_gpu.py."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import dlarray
from dlarray import autodiff as ad
from dlarray.distributed._buckets import check_bucket_mb, split

HERE = os.path.dirname(os.path.abspath(__file__))
MPIRUN = shutil.which("mpirun")


def test_split_closes_a_bucket_once_it_holds_the_size():
    assert split([], 10) == []
    assert split([4], 10) == [[0]]
    assert split([4, 4, 4, 4], 8) == [[0, 1], [2, 3]]
    assert split([20, 1, 1], 8) == [[0], [1, 2]]  # larger than a bucket: alone
    assert split([1, 2, 3], 1e-9) == [[0], [1], [2]]
    assert split([1, 2, 3], 1e9) == [[0, 1, 2]]
    assert split([0, 0, 5], 5) == [[0, 1, 2]]  # empty arrays ride along


def test_bad_arguments_are_named():
    x = ad.Variable("x")
    y = x * 2
    g, = ad.gradients(y, [x])
    with pytest.raises(ValueError, match="bucket_mb must be positive"):
        ad.Executor([y, g], dlarray.cpu(), data_parallel=[g], bucket_mb=0)
    with pytest.raises(TypeError, match="bucket_mb must be a number"):
        check_bucket_mb("25")
    with pytest.raises(ValueError, match="not one of the executor's eval_node_list"):
        ad.Executor([y], dlarray.cpu(), data_parallel=[g])
    with pytest.raises(TypeError, match="data_parallel lists Nodes"):
        ad.Executor([y], dlarray.cpu(), data_parallel=[3])
    with pytest.raises(ValueError, match="lists a node twice"):
        ad.Executor([y, g], dlarray.cpu(), data_parallel=[g, g])
    with pytest.raises(ValueError, match="needs a device ctx"):
        ad.Executor([y, g], None, data_parallel=[g])
    executor = ad.Executor([y, g], dlarray.cpu(), data_parallel=[g])
    with pytest.raises(RuntimeError, match="not initialised"):
        executor.run({x: np.ones(3, np.float32)})


@pytest.mark.skipif(MPIRUN is None, reason="Open MPI's mpirun is not installed")
@pytest.mark.skipif("asan" in os.environ.get("LD_PRELOAD", ""),
                    reason="Open MPI under the preloaded ASan runtime (scripts/sanitize.sh)")
def test_two_cpu_ranks_train_as_one_process_on_the_global_batch(tmp_path):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_vader_single_copy_mechanism="none", DLARRAY_NUM_THREADS="1",
               DLARRAY_DIST_TIMEOUT="60", DLARRAY_DIST_DEVICE="cpu")
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(name, None)
    done = subprocess.run([MPIRUN, "-n", "2", "--oversubscribe", sys.executable,
                           os.path.join(HERE, "ddp_worker.py"), str(tmp_path)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    ranks = [json.loads((tmp_path / ("rank%d.json" % r)).read_text()) for r in (0, 1)]
    for r in ranks:
        assert r["mixed_failures"] == []
        runs = r["runs"]
        assert runs["1e-06"]["buckets"] == 4  # one per gradient
        assert 1 < runs["0.0003"]["buckets"] < 4
        assert runs["25.0"]["buckets"] == 1
        for run in runs.values():
            assert run["loss_error"] < 1e-5, run
            assert run["weight_error"] < 1e-5, run
        assert r["reference"][-1] < r["reference"][0]  # it does train
    assert ranks[0]["runs"] == ranks[1]["runs"]  # every rank holds the same model
