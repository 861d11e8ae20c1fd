"""dlarray.distributed on CPU arrays through MPI, with 2 ranks on this host: every dtype and op
against NumPy (mpirun), the launcher's CPU ranks on one and on two "nodes" (rendezvous over
loopback), a rank count that does not match, different dtypes in debug mode, a rank that dies
mid-collective, data-parallel MNIST. Skipped where Open MPI's mpirun is not installed."""
import json
import os
import shutil
import subprocess
import sys
import time

import pytest

import dlarray
import dlarray.distributed as dist
from dlarray.distributed import run as launcher_module

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "mpi_worker.py")
MPIRUN = shutil.which("mpirun")
# Under scripts/sanitize.sh the ASan runtime is preloaded into every process, mpirun's and
# Open MPI's helpers too, whose memory hooks it does not expect; the plain test stage covers MPI.
pytestmark = [
    pytest.mark.skipif(MPIRUN is None, reason="Open MPI's mpirun is not installed"),
    pytest.mark.skipif("asan" in os.environ.get("LD_PRELOAD", ""),
                       reason="Open MPI under the preloaded ASan runtime (scripts/sanitize.sh)"),
]


def mpi_env(**extra):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_vader_single_copy_mechanism="none",  # containers without CMA
               DLARRAY_NUM_THREADS="1", DLARRAY_DIST_TIMEOUT="60")
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT",
                 "DLARRAY_DIST_DEVICE"):
        env.pop(name, None)
    env.update(extra)
    return env


def results(out, ranks=2):
    return [json.loads((out / ("rank%d.json" % r)).read_text()) for r in range(ranks)]


def mpirun(out, scenario, timeout=120, **extra):
    cmd = [MPIRUN, "-n", "2", "--oversubscribe", sys.executable, WORKER, scenario, str(out)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env=mpi_env(**dict({"DLARRAY_DIST_DEVICE": "cpu"}, **extra)))


def launcher(out, scenario, *args, **extra):
    cmd = [sys.executable, "-m", "dlarray.distributed.run", "--device", "cpu", *args, WORKER,
           scenario, str(out)]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=mpi_env(**extra))


def test_every_dtype_and_op_against_numpy_under_mpirun(tmp_path):
    done = mpirun(tmp_path, "collectives", DLARRAY_DIST_DEBUG="1")
    assert done.returncode == 0, done.stdout + done.stderr
    for r in results(tmp_path):
        assert r["failures"] == [], r["failures"]
        assert r["checked"] == 15 * 5 * 5 - 5 * 5  # bool mean, complex max/min refused
        assert "avg of bool is not defined" in r["errors"]["bool mean"]
        assert "not ordered" in r["errors"]["complex64 max"]
        if "opencl array" in r["errors"]:
            assert "is on opencl(0); MPI collectives take host (cpu) arrays" in r["errors"][
                "opencl array"]
        assert r["coalesced"] == [1.5, 1.0]
        assert r["device"] == "cpu(0)"
        assert r["fast"] is False  # debug mode: every call checks first, on the general path
        assert r["library"][0].endswith("libmpi.so.40") and "Open MPI" in r["library"][1]


def test_debug_mode_names_each_rank_s_dtype(tmp_path):
    done = mpirun(tmp_path, "mismatch", DLARRAY_DIST_DEBUG="1")
    assert done.returncode == 0, done.stdout + done.stderr
    for r in results(tmp_path):
        assert "all_reduce: the ranks called it differently" in r["error"]
        assert "rank 0: all_reduce float32(4,), float32(4,) op sum" in r["error"]
        assert "rank 1: all_reduce float64(4,), float64(4,) op sum" in r["error"]
        assert r["after"] == [2.0, 2.0, 2.0]


@pytest.mark.skipif(dlarray.opencl(0) not in dlarray.devices(), reason="no OpenCL device")
def test_opencl_arrays_go_through_the_host(tmp_path):
    done = mpirun(tmp_path, "opencl", DLARRAY_DIST_DEVICE="opencl", DLARRAY_DIST_DEBUG="1")
    assert done.returncode == 0, done.stdout + done.stderr
    for r in results(tmp_path):
        assert r["failures"] == [] and r["device"] == "opencl(0)"


def test_a_collective_a_rank_skips_ends_within_the_timeout(tmp_path):
    start = time.monotonic()
    done = mpirun(tmp_path, "skips", DLARRAY_DIST_TIMEOUT="3", timeout=60)
    assert done.returncode != 0
    assert time.monotonic() - start < 30
    assert "a collective has waited" in done.stderr and "DLARRAY_DIST_TIMEOUT=3" in done.stderr
    assert "an MPI call is still waiting" in done.stderr


def test_rank_count_that_does_not_match_mpirun(tmp_path):
    done = mpirun(tmp_path, "collectives", WORLD_SIZE="3", timeout=60)
    assert done.returncode != 0
    assert "world_size is 3 but MPI_COMM_WORLD has 2 ranks" in done.stderr


def test_launcher_starts_cpu_ranks_on_two_nodes_over_loopback(tmp_path):
    port = str(launcher_module._free_port("127.0.0.1"))
    common = ("--nnodes", "2", "--nproc-per-node", "1", "--master-port", port)
    nodes = [launcher(tmp_path, "collectives", *common, "--node-rank", str(k)) for k in (0, 1)]
    outs = [p.communicate(timeout=180) for p in nodes]
    for p, (o, e) in zip(nodes, outs):
        assert p.returncode == 0, o + e
    for r in results(tmp_path):
        assert r["failures"] == [] and r["checked"] == 350 and r["device"] == "cpu(0)"
        assert r["fast"] is True  # so all_reduce's 350 checks ran through the C++ fast path


def test_all_reduce_fast_path_leaves_errors_to_the_general_path(tmp_path):
    done = mpirun(tmp_path, "fast")
    assert done.returncode == 0, done.stdout + done.stderr
    for r in results(tmp_path):
        assert r["fast"] is True
        e = r["errors"]
        assert e["read-only"].startswith("ValueError: all_reduce: array is read-only")
        assert e["numpy array"] == "TypeError: all_reduce: expected an NDArray, got ndarray"
        assert e["unknown op"].startswith("ValueError: op must be one of") \
            and e["unknown op"].endswith("got 'median'")
        assert e["op None"].endswith("got None") and e["op list"].endswith("got ['sum']")
        assert e["strided view"] == "ValueError: all_reduce: the input is not compact (row-major)"
        assert e["not constructed"].startswith("TypeError: this NDArray was made by __new__")
        assert e["after destroy"] == ("RuntimeError: dlarray.distributed is not initialised: "
                                      "call init_process_group()")
        assert r["results"] == {"str subclass max": [1.0, 3.0], "avg": [1, 1, 1],
                                "after errors": [3.0] * 5}


def test_a_rank_that_dies_mid_collective_ends_the_other_naming_it(tmp_path):
    port = str(launcher_module._free_port("127.0.0.1"))
    common = ("--nnodes", "2", "--nproc-per-node", "1", "--master-port", port)
    nodes = [launcher(tmp_path, "dies", *common, "--node-rank", str(k),
                      DLARRAY_DIST_EXIT_GRACE="60") for k in (0, 1)]
    start = time.monotonic()
    (_, err0), (_, err1) = [p.communicate(timeout=120) for p in nodes]
    assert nodes[1].returncode == 7, err1
    assert nodes[0].returncode == 1, err0
    assert time.monotonic() - start < 60  # well within DLARRAY_DIST_TIMEOUT
    assert "rank 1 (pid" in err0 and "exited or lost its connection to rank 0" in err0
    assert "an MPI call is still waiting for the failed rank(s)" in err0
    assert "started" in results(tmp_path, 1)[0]


def test_data_parallel_mnist_on_two_cpu_ranks_matches_one_process(tmp_path):
    node = launcher(tmp_path, "mnist", "--nproc-per-node", "2")
    out, err = node.communicate(timeout=300)
    assert node.returncode == 0, out + err
    ranks = results(tmp_path)
    sys.path.insert(0, HERE)
    try:
        import mpi_worker
        losses, accuracy, _ = mpi_worker.train_mnist(False)
    finally:
        sys.path.remove(HERE)
    assert ranks[0]["checksum"] == ranks[1]["checksum"]  # every rank holds the same model
    for r in ranks:  # the same global batch: the same training, to float32 rounding
        assert r["losses"] == pytest.approx(losses, rel=1e-4)
        assert abs(r["accuracy"] - accuracy) <= 0.005
    assert accuracy > 0.85


@pytest.mark.skipif(dlarray.gpu(0) in dlarray.devices(), reason="this machine has a GPU")
def test_without_a_gpu_one_process_group_is_on_the_cpu():
    code = ("import dlarray, numpy as np, dlarray.distributed as dist\n"
            "dist.init_process_group(rank=0, world_size=1, master_port=%s)\n"
            "x = dlarray.array(np.arange(3), dist.get_device(), dtype='int32')\n"
            "dist.all_reduce(x, op='mean'); dist.barrier()\n"
            "print(dist.get_device(), x.asnumpy().tolist()); dist.destroy_process_group()\n"
            % launcher_module._free_port("127.0.0.1"))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, env=mpi_env())
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["cpu(0)", "[0,", "1,", "2]"]


def test_mpi_missing_is_a_clear_error():
    code = ("import dlarray.distributed as dist\n"
            "try:\n    dist.mpi_library()\nexcept RuntimeError as e:\n    print(e)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60,
                          env=dict(os.environ, DLARRAY_MPI_LIBRARY="/nonexistent/libmpi.so.40"))
    assert done.returncode == 0, done.stderr
    assert "MPI was not found: install Open MPI" in done.stdout
    assert "/nonexistent/libmpi.so.40: " in done.stdout


def test_launcher_cpu_without_mpirun_says_what_to_install(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("pass\n")
    done = subprocess.run([sys.executable, "-m", "dlarray.distributed.run", "--device", "cpu",
                           str(script)], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PATH=os.path.dirname(sys.executable)))
    assert done.returncode != 0
    assert "mpirun, which is not on PATH: install Open MPI" in done.stderr


def test_launcher_ranks_from_mpi_launchers():
    from dlarray.distributed._mpi import launcher_ranks
    assert launcher_ranks({}) is None
    assert launcher_ranks({"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "4",
                           "OMPI_COMM_WORLD_LOCAL_RANK": "0"})[:3] == (1, 4, 0)
    assert launcher_ranks({"PMI_RANK": "2", "PMI_SIZE": "3"})[:3] == (2, 3, 2)
    assert launcher_ranks({"SLURM_PROCID": "5", "SLURM_NTASKS": "8",
                           "SLURM_LOCALID": "1"})[:3] == (5, 8, 1)
    with pytest.raises(ValueError, match="SLURM_PROCID='x'"):
        launcher_ranks({"SLURM_PROCID": "x", "SLURM_NTASKS": "8"})
