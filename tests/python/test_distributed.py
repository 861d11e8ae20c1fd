"""dlarray.distributed without GPUs: the TCP rendezvous on loopback (payload, timeouts, ranks
that exit, barriers), the launcher (environment, exit codes, stopping the other ranks), the
process group's failure handling with a fake NCCL communicator (dist_fake_worker.py), and the
clear errors where there is no GPU. The NCCL collectives themselves: test_distributed_gpu.py."""
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import dlarray
import dlarray.distributed as dist
from dlarray.distributed import rendezvous, run

HERE = pathlib.Path(__file__).resolve().parent
FAKE_WORKER = HERE / "dist_fake_worker.py"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ranks(world_size, fn, *args):
    """Runs fn(rank, *args) on one thread per rank; returns {rank: result or exception}."""
    results = {}

    def body(rank):
        try:
            results[rank] = fn(rank, *args)
        except Exception as e:  # noqa: BLE001 - handed to the test
            results[rank] = e

    threads = [threading.Thread(target=body, args=(r,)) for r in range(world_size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results


# -- rendezvous ------------------------------------------------------------------------------

def test_rendezvous_hands_rank0_payload_to_every_rank_and_barriers():
    port = free_port()
    failures = []

    def rank_fn(rank):
        r = rendezvous.Rendezvous(rank, 4, "127.0.0.1", port, 20, on_failure=failures.append)
        payload = r.join((lambda: b"id-\x00\xff" * 40) if rank == 0 else b"ignored")
        r.barrier("one")
        r.barrier("two", final=True)
        r.close()
        return payload

    results = run_ranks(4, rank_fn)
    assert results == {r: b"id-\x00\xff" * 40 for r in range(4)}
    assert failures == []  # closing after the final barrier is not a failure


def test_rendezvous_of_one_rank_needs_no_peer():
    r = rendezvous.Rendezvous(0, 1, "127.0.0.1", free_port(), 5)
    assert r.join(b"x") == b"x"
    r.barrier(final=True)
    r.close()


def test_rendezvous_that_never_completes_times_out_naming_missing_ranks():
    port = free_port()
    start = time.monotonic()
    results = run_ranks(2, lambda rank: rendezvous.Rendezvous(
        rank, 3, "127.0.0.1", port, 1.5).join(b"x"))
    elapsed = time.monotonic() - start
    for rank in (0, 1):
        assert isinstance(results[rank], rendezvous.RendezvousTimeout), results
        assert "rank(s) [2] of 3 never joined" in str(results[rank])
    assert isinstance(results[0], TimeoutError)
    assert elapsed < 6


def test_rank_without_rank0_gives_up_after_the_timeout():
    port = free_port()
    start = time.monotonic()
    with pytest.raises(rendezvous.RendezvousTimeout, match="could not reach rank 0 at 127.0.0.1"):
        rendezvous.Rendezvous(1, 2, "127.0.0.1", port, 1.0).join()
    assert 0.9 < time.monotonic() - start < 5


def test_ranks_that_disagree_fail_every_rank():
    port = free_port()
    claims = {0: 0, 1: 1, 2: 1}  # two processes started as rank 1

    def duplicate(rank):
        time.sleep(0.2 * rank)
        return rendezvous.Rendezvous(claims[rank], 3, "127.0.0.1", port, 10).join(b"x")

    results = run_ranks(3, duplicate)
    for rank in range(3):
        assert isinstance(results[rank], rendezvous.DistributedError), results
        assert "two processes joined as rank 1" in str(results[rank])

    port = free_port()
    sizes = {0: 2, 1: 3}
    results = run_ranks(2, lambda rank: rendezvous.Rendezvous(
        rank, sizes[rank], "127.0.0.1", port, 10).join(b"x"))
    for rank in (0, 1):
        assert isinstance(results[rank], rendezvous.DistributedError), results
        assert "rank 1 says world_size is 3 but rank 0 has 2" in str(results[rank])


def test_rank0_port_in_use_is_a_clear_error():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(rendezvous.DistributedError, match="cannot listen on 127.0.0.1:%d" % port):
            rendezvous.Rendezvous(0, 2, "127.0.0.1", port, 2).join(b"x")


def test_unrelated_connections_are_ignored():
    port = free_port()

    def rank_fn(rank):
        if rank == 1:
            time.sleep(0.3)
            for junk in (b"GET / HTTP/1.0\r\n\r\n", b"\x00\x00\x00\x05hello"):
                with socket.create_connection(("127.0.0.1", port)) as s:
                    s.sendall(junk)
        r = rendezvous.Rendezvous(rank, 2, "127.0.0.1", port, 20)
        out = r.join(b"ok")
        r.barrier(final=True)
        r.close()
        return out

    assert run_ranks(2, rank_fn) == {0: b"ok", 1: b"ok"}


def test_arguments_are_checked():
    with pytest.raises(ValueError, match="rank must be in"):
        rendezvous.Rendezvous(2, 2, "127.0.0.1", 1234, 1)
    with pytest.raises(ValueError, match="port"):
        rendezvous.Rendezvous(0, 2, "127.0.0.1", 70000, 1)
    with pytest.raises(ValueError, match="timeout"):
        rendezvous.Rendezvous(0, 2, "127.0.0.1", 1234, 0)


RANK_SCRIPT = textwrap.dedent("""
    import json, os, sys, time
    from dlarray.distributed.rendezvous import Rendezvous, DistributedError
    rank, world, port, scenario = (int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]),
                                   sys.argv[4])
    start = time.monotonic()
    failures = []
    r = Rendezvous(rank, world, "127.0.0.1", port, 20, on_failure=failures.append)
    r.join(b"p")
    print("JOINED", flush=True)
    if scenario == "exit" and rank == world - 1:
        time.sleep(0.3)
        os._exit(3)
    if scenario == "report" and rank == 1:
        time.sleep(0.3)
        r.report_failure("out of patience")
    if scenario == "barrier_timeout" and rank == world - 1:
        time.sleep(30)
    try:
        r.barrier("work", timeout=2 if scenario == "barrier_timeout" else 20)
        error = None
    except DistributedError as e:
        error = "%s: %s" % (type(e).__name__, e)
    print("RESULT " + json.dumps({"rank": rank, "error": error, "failures": failures,
                                  "elapsed": time.monotonic() - start}), flush=True)
""")


def run_rank_processes(world, scenario, timeout=40):
    port = free_port()
    procs = [subprocess.Popen([sys.executable, "-c", RANK_SCRIPT, str(r), str(world), str(port),
                               scenario], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for r in range(world)]
    results = {}
    for r, p in enumerate(procs):
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise AssertionError("rank %d hung in scenario %s" % (r, scenario))
        line = next((ln for ln in out.splitlines() if ln.startswith("RESULT ")), None)
        results[r] = (p.returncode, json.loads(line[7:]) if line else None, err)
    return results


def test_a_rank_that_exits_is_reported_to_every_rank_at_once():
    results = run_rank_processes(3, "exit")
    assert results[2][0] == 3
    for rank in (0, 1):
        code, result, err = results[rank]
        assert code == 0, err
        assert "rank 2 (pid" in result["error"] and "exited or lost its connection" in \
            result["error"], result
        assert result["failures"] == [result["error"].split(": ", 1)[1]]
        assert result["elapsed"] < 10


def test_rank0_exit_is_reported_to_the_others():
    port = free_port()
    script = RANK_SCRIPT.replace('scenario == "exit" and rank == world - 1',
                                 'scenario == "exit" and rank == 0')
    procs = [subprocess.Popen([sys.executable, "-c", script, str(r), "2", str(port), "exit"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for r in range(2)]
    out, err = procs[1].communicate(timeout=40)
    procs[0].wait(timeout=10)
    result = json.loads(next(ln for ln in out.splitlines() if ln.startswith("RESULT "))[7:])
    assert "lost the connection to rank 0 at 127.0.0.1" in result["error"], result
    assert result["elapsed"] < 10


def test_a_reported_failure_reaches_every_rank():
    results = run_rank_processes(3, "report")
    for rank in range(3):
        code, result, err = results[rank]
        assert code == 0, err
        assert "rank 1 failed: out of patience" in result["error"], result
        assert result["failures"] == ["rank 1 failed: out of patience"]


def test_a_barrier_timeout_names_the_missing_rank_and_fails_the_others():
    results = run_rank_processes(3, "barrier_timeout", timeout=60)
    code, result, err = results[0]
    assert "barrier 'work' timed out after 2 s on rank 0: rank(s) [2] did not arrive" in \
        result["error"], result
    assert result["elapsed"] < 15
    assert "RendezvousTimeout" in result["error"] or "DistributedError" in result["error"]
    assert "timed out" in results[1][1]["error"]


# -- launcher --------------------------------------------------------------------------------

ENV_SCRIPT = textwrap.dedent("""
    import json, os, sys
    keys = ["RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR",
            "MASTER_PORT", "NCCL_NVLS_ENABLE"]
    out = {k: os.environ.get(k) for k in keys}
    out["argv"] = sys.argv[1:]
    with open(os.path.join(sys.argv[1], "rank%s.json" % os.environ["RANK"]), "w") as f:
        json.dump(out, f)
""")


def launch(tmp_path, script_text, *launcher_args, env=None, timeout=60):
    script = tmp_path / "script.py"
    script.write_text(script_text)
    cmd = [sys.executable, "-m", "dlarray.distributed.run", *launcher_args, str(script)]
    return subprocess.run(cmd + [str(tmp_path)], capture_output=True, text=True, env=env,
                          timeout=timeout)


def test_launcher_sets_each_rank_environment(tmp_path):
    env = dict(os.environ)
    env.pop("NCCL_NVLS_ENABLE", None)
    env.pop("MASTER_PORT", None)
    done = launch(tmp_path, ENV_SCRIPT, "--nproc-per-node", "3", env=env)
    assert done.returncode == 0, done.stderr
    seen = [json.loads((tmp_path / ("rank%d.json" % r)).read_text()) for r in range(3)]
    ports = {s["MASTER_PORT"] for s in seen}
    assert len(ports) == 1 and int(ports.pop()) > 0
    for r, s in enumerate(seen):
        assert s["RANK"] == s["LOCAL_RANK"] == str(r)
        assert (s["WORLD_SIZE"], s["LOCAL_WORLD_SIZE"], s["GROUP_RANK"]) == ("3", "3", "0")
        assert s["MASTER_ADDR"] == "127.0.0.1"
        assert s["NCCL_NVLS_ENABLE"] == "0"
        assert s["argv"] == [str(tmp_path)]


def test_launcher_on_a_second_node_offsets_ranks_and_keeps_user_settings(tmp_path):
    env = dict(os.environ, NCCL_NVLS_ENABLE="1", MASTER_PORT="29123")
    done = launch(tmp_path, ENV_SCRIPT, "--nnodes", "2", "--node-rank", "1", "--nproc-per-node",
                  "2", "--master-addr", "10.1.2.3", env=env)
    assert done.returncode == 0, done.stderr
    for local in range(2):
        s = json.loads((tmp_path / ("rank%d.json" % (2 + local))).read_text())
        assert (s["RANK"], s["LOCAL_RANK"], s["WORLD_SIZE"]) == (str(2 + local), str(local), "4")
        assert (s["GROUP_RANK"], s["MASTER_ADDR"], s["MASTER_PORT"]) == ("1", "10.1.2.3", "29123")
        assert s["NCCL_NVLS_ENABLE"] == "1"


FAIL_SCRIPT = textwrap.dedent("""
    import os, signal, subprocess, sys, time
    d = sys.argv[1]
    rank = int(os.environ["RANK"])
    if rank == 1:
        time.sleep(0.5)
        sys.exit(3)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    with open(os.path.join(d, "pids%d" % rank), "w") as f:
        f.write("%d %d" % (os.getpid(), child.pid))
    time.sleep(120)
""")


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open("/proc/%d/stat" % pid) as f:  # a zombie is gone too
        return f.read().split()[2] != "Z"


def test_launcher_stops_the_others_when_a_rank_fails_and_exits_with_its_code(tmp_path):
    start = time.monotonic()
    done = launch(tmp_path, FAIL_SCRIPT, "--nproc-per-node", "3", "--kill-grace", "2")
    assert done.returncode == 3, done.stderr
    assert time.monotonic() - start < 30
    assert "rank 1 (pid" in done.stderr and "exited with code 3; stopping the other 2 rank(s)" \
        in done.stderr
    for rank in (0, 2):
        pids = [int(p) for p in (tmp_path / ("pids%d" % rank)).read_text().split()]
        deadline = time.monotonic() + 5
        while any(alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(alive(p) for p in pids), "rank %d or its child survived" % rank


def test_launcher_reports_a_rank_killed_by_a_signal(tmp_path):
    script = "import os, signal\nif os.environ['RANK'] == '0':\n    os.kill(os.getpid(), 9)\n"
    done = launch(tmp_path, script, "--nproc-per-node", "2")
    assert done.returncode == 128 + 9
    assert "rank 0 (pid" in done.stderr and "killed by signal 9" in done.stderr


def test_launcher_passes_sigterm_on_and_stops_every_rank(tmp_path):
    script = tmp_path / "sleep.py"
    script.write_text("import time\ntime.sleep(120)\n")
    proc = subprocess.Popen([sys.executable, "-m", "dlarray.distributed.run", "--nproc-per-node",
                             "2", str(script)], stderr=subprocess.PIPE, text=True)
    time.sleep(2)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM
    assert "got signal %d; stopping every rank" % signal.SIGTERM in err


def test_launcher_runs_a_module_and_rejects_bad_arguments(tmp_path):
    done = subprocess.run([sys.executable, "-m", "dlarray.distributed.run", "--nproc-per-node", "2",
                           "-m", "json.tool", "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("usage:") == 2
    for args, message in ((["--nproc-per-node", "0", "x.py"], "at least 1"),
                          (["--nnodes", "2", "--node-rank", "2", "x.py"], "--node-rank"),
                          ([str(tmp_path / "missing.py")], "no such script")):
        bad = subprocess.run([sys.executable, "-m", "dlarray.distributed.run", *args],
                             capture_output=True, text=True, timeout=60)
        assert bad.returncode == 2 and message in bad.stderr, bad.stderr
    parsed = run.parse_args(["--nproc_per_node", "4", "-m", "pkg.train", "--lr", "0.1"])
    assert (parsed.nproc_per_node, parsed.script, parsed.args) == (4, "pkg.train",
                                                                   ["--lr", "0.1"])
    env = run.child_env(parsed, 3, base={"PATH": "/bin"})
    assert (env["RANK"], env["WORLD_SIZE"], env["PATH"]) == ("3", "4", "/bin")


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
    with pytest.raises(RuntimeError, match="dlarray.distributed needs a GPU .* and there is none"):
        dist.init_process_group(rank=0, world_size=1, master_port=free_port())
    assert not dist.is_initialized()


def _cuda_plugin_or_skip():
    plugin = next((p for p in dlarray.plugins() if p["name"] == "cuda"), None)
    if plugin is None or plugin["status"] not in ("loaded", "no devices"):
        pytest.skip("the CUDA plugin is not usable here: %s" % (plugin and plugin["reason"]))


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
        with pytest.raises(ValueError, match=r"there is no gpu\(0\): this machine has 0 GPU"):
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
                          env=dict(os.environ, PYTHONPATH=str(tmp_path)))
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    wheel = [str(tmp_path / "nvidia" / s / "lib" / "libnccl.so.2") for s in ("nccl", "cu13")]
    assert found[-2:] == wheel
    assert found[0] == str(loaded)
    assert dist._nccl.version_text(22809) == "2.28.9"
    assert dist._nccl.version_text(2804) == "2.8.4"
