"""dlarray.distributed's process group without GPUs: its failure handling with a fake NCCL
communicator (dist_fake_worker.py: the rendezvous, watchdog and exits are the real ones), the
argument checks, the clear errors where there is no GPU or no NCCL, and NCCL itself opened
through the CUDA plugin where it is installed. The collectives on GPUs: test_distributed_gpu.py;
the rendezvous and the launcher: test_distributed_rendezvous.py, test_distributed_launcher.py."""
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import time

import pytest

import dlarray
import dlarray.distributed as dist

HERE = pathlib.Path(__file__).resolve().parent
FAKE_WORKER = HERE / "dist_fake_worker.py"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- the process group, with a fake communicator ---------------------------------------------

def run_fake_group(scenario, world=2, extra_env=None, timeout=60):
    port = free_port()
    env = dict(os.environ, WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
               DLARRAY_DIST_TIMEOUT="20", PYTHONUNBUFFERED="1")
    env.update(extra_env or {})
    procs = [subprocess.Popen([sys.executable, str(FAKE_WORKER), scenario],
                              env=dict(env, RANK=str(r), LOCAL_RANK=str(r)),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for r in range(world)]
    results = {}
    for r, p in enumerate(procs):
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise AssertionError("rank %d hung in scenario %s" % (r, scenario))
        lines = [json.loads(ln[7:]) for ln in out.splitlines() if ln.startswith("RESULT ")]
        results[r] = (p.returncode, lines[0] if lines else None, err)
    return results


def test_group_collectives_check_their_arguments_and_end_cleanly():
    results = run_fake_group("ok")
    for rank in (0, 1):
        code, result, err = results[rank]
        assert code == 0, err
        assert "aborting" not in err
        assert result["shapes"] == [[12], [6]]
        assert result["calls"] == ["init", "all_reduce", "all_reduce_group:2", "broadcast",
                                   "all_gather", "reduce_scatter", "all_reduce", "finalize",
                                   "destroy"]
        assert result["initialized"] is False
        errors = "\n".join(result["errors"])
        assert "op must be one of max, mean, min, prod, sum, got 'median'" in errors
        assert "src must be a rank in [0, 2), got 5" in errors
        assert "axis 0 of shape (3,) does not split into 2 equal parts" in errors
        assert "out has shape (5,) but 2 ranks of (6,) need (12,)" in errors
        assert "RuntimeError: dlarray.distributed is already initialised (rank %d of 2)" \
            % rank in errors


@pytest.mark.parametrize("scenario, reason", [
    ("peer_exits", "rank 1 (pid"),
    ("peer_raises", "rank 1 failed: uncaught ValueError: boom on rank 1"),
    ("async_error", "rank 1 failed: NCCL reported an asynchronous error: ncclRemoteError"),
    ("stuck_collective", "rank 0 failed: a collective has waited"),
])
def test_a_failure_on_any_rank_aborts_the_others_blocked_collective(scenario, reason):
    results = run_fake_group(scenario)
    waiting = [0] if scenario in ("peer_exits", "peer_raises") else [0, 1]
    for rank in waiting:
        code, result, err = results[rank]
        assert code == 5, err
        assert result["kind"] == "DistributedError"
        assert reason in result["error"], result
        assert "abort" in result["calls"]
        assert result["elapsed"] < 15
        assert "aborting the NCCL communicator" in err
    if scenario == "peer_raises":
        assert "ValueError: boom on rank 1" in results[1][2]


def test_nccl_init_that_never_completes_fails_every_rank_after_the_timeout():
    results = run_fake_group("init_hangs", extra_env={"DLARRAY_DIST_TIMEOUT": "2"})
    code, result, err = results[0]
    assert code == 5, err
    assert "rank 1 failed: NCCL init did not complete within 2 s" in result["error"]
    code, result, err = results[1]
    assert code == 1 and result is None
    assert "DistributedError: rank 1 failed: NCCL init did not complete within 2 s" in err


def test_rank0_that_exits_fails_the_others():
    code, result, err = run_fake_group("rank0_exits")[1]
    assert code == 5, err
    assert "lost the connection to rank 0" in result["error"]


def test_a_process_that_ignores_a_failure_is_ended_after_the_grace_period():
    start = time.monotonic()
    results = run_fake_group("exit_grace", extra_env={"DLARRAY_DIST_EXIT_GRACE": "1"})
    code, result, err = results[0]
    assert code == 1 and result is None, err
    assert "exiting with code 1 (DLARRAY_DIST_EXIT_GRACE)" in err
    assert time.monotonic() - start < 20


def test_leaving_without_destroy_is_clean_at_exit():
    for code, result, err in run_fake_group("exit_without_destroy", world=3).values():
        assert code == 0 and result["ok"], err
        assert "aborting" not in err


# -- errors without a GPU or a launcher ------------------------------------------------------

def test_init_without_rank_or_world_size_says_what_to_set(monkeypatch):
    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ValueError, match="rank and world_size not given and RANK and WORLD_SIZE "
                                         "not set"):
        dist.init_process_group()
    monkeypatch.setenv("WORLD_SIZE", "two")
    with pytest.raises(ValueError, match="world_size must be an integer, got WORLD_SIZE='two'"):
        dist.init_process_group(rank=0)
    with pytest.raises(ValueError, match=r"rank must be in \[0, 2\), got 2"):
        dist.init_process_group(rank=2, world_size=2)
    with pytest.raises(ValueError, match="master_port"):
        dist.init_process_group(rank=0, world_size=1, master_port=0)
    with pytest.raises(TypeError, match="device must be a DLContext"):
        dist.init_process_group(rank=0, world_size=1, device="gpu0")
    assert not dist.is_initialized()


def test_collectives_before_init_raise():
    x = dlarray.empty((2,), dlarray.cpu())
    for call in (lambda: dist.all_reduce(x), dist.barrier, dist.get_rank, dist.get_device):
        with pytest.raises(RuntimeError, match="not initialised: call init_process_group"):
            call()
    dist.destroy_process_group()  # nothing to destroy: no error


@pytest.mark.skipif(dlarray.gpu(0) in dlarray.devices(), reason="this machine has a GPU")
def test_without_a_gpu_init_says_so():
    # Without device=, a process without a GPU takes the CPU path (test_mpi.py).
    with pytest.raises(RuntimeError, match="dlarray.distributed needs a GPU .* and there is none"
                                           ".*device=dlarray.cpu"):
        dist.init_process_group(rank=0, world_size=1, master_port=free_port(),
                                device=dlarray.gpu(0))
    assert not dist.is_initialized()


def _cuda_plugin_or_skip():
    plugin = next((p for p in dlarray.plugins() if p["name"] == "cuda"), None)
    if plugin is None:
        pytest.skip("the CUDA plugin is not built (no CUDA toolkit, or DLARRAY_CUDA=OFF)")
    if plugin["status"] not in ("loaded", "no devices"):
        pytest.skip("the CUDA plugin is not usable here: %s" % plugin["reason"])


def test_nccl_opens_through_the_cuda_plugin_without_a_gpu():
    _cuda_plugin_or_skip()
    try:
        path, version = dist.nccl_library()
    except RuntimeError as e:
        assert "NCCL was not found: tried " in str(e) and "libnccl.so.2 (" in str(e)
        pytest.skip("no NCCL installed: %s" % e)
    assert os.path.isabs(path) and os.path.exists(path)
    assert tuple(int(v) for v in version.split(".")) >= (2, 14, 0)
    a, b = dlarray._core.nccl_unique_id(), dlarray._core.nccl_unique_id()
    assert len(a) == len(b) == 128 and a != b
    if dlarray.gpu(0) not in dlarray.devices():
        with pytest.raises(ValueError, match=r"there is no cuda\(0\): this machine has 0 GPU"):
            dlarray._core.NcclCommunicator(0, 1, 0)
    else:
        with pytest.raises(ValueError, match=r"rank 3 is not in \[0, world_size 2\)"):
            dlarray._core.NcclCommunicator(0, 2, 3)


def test_nccl_not_found_names_where_it_looked():
    _cuda_plugin_or_skip()
    code = ("import dlarray.distributed as dist\n"
            "try:\n    dist.nccl_library()\nexcept RuntimeError as e:\n    print(e)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120,
                          env=dict(os.environ, DLARRAY_NCCL_LIBRARY="/nonexistent/libnccl.so.2"))
    assert done.returncode == 0, done.stderr
    assert "NCCL was not found: tried /nonexistent/libnccl.so.2 (no such file)" in done.stdout
    assert "DLARRAY_NCCL_LIBRARY names the only place tried" in done.stdout


def test_nccl_candidates_loaded_library_first_then_wheels(tmp_path, test_plugin_dir):
    fake = test_plugin_dir / "fake_nccl_good" / "libfake_nccl_good.so"
    if not fake.exists():
        pytest.skip("the fake NCCL library is built with the CUDA plugin only")
    for sub in ("cu13", "nccl", "cublas"):
        (tmp_path / "nvidia" / sub / "lib").mkdir(parents=True)
    for sub in ("cu13", "nccl"):
        (tmp_path / "nvidia" / sub / "lib" / "libnccl.so.2").symlink_to(fake)
    loaded = tmp_path / "loaded" / "libnccl.so.2"
    loaded.parent.mkdir()
    shutil.copy(fake, loaded)  # a file of that name, as the wheels ship it
    code = ("import ctypes, json, sys; ctypes.CDLL(sys.argv[1]); "
            "from dlarray.distributed import _nccl; print(json.dumps(_nccl.wheel_candidates()))")
    done = subprocess.run([sys.executable, "-c", code, str(loaded)], capture_output=True,
                          text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                              [str(tmp_path)] + os.environ.get("PYTHONPATH", "").split(os.pathsep))))
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    wheel = [str(tmp_path / "nvidia" / s / "lib" / "libnccl.so.2") for s in ("nccl", "cu13")]
    # The machine's own nvidia wheels (sys.path after tmp_path) may follow: only ours are checked.
    assert [p for p in found if p.startswith(str(tmp_path / "nvidia"))] == wheel
    assert found[0] == str(loaded)
    assert dist._nccl.version_text(22809) == "2.28.9"
    assert dist._nccl.version_text(2804) == "2.8.4"
