"""python -m dlarray.distributed.run on loopback: each rank's environment, exit codes, stopping
the other ranks (and their children) when one fails, signals, argument checks."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

from dlarray.distributed import run


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
    script.write_text("import os, pathlib, time\n"
                      "pathlib.Path(%r, 'up' + os.environ['RANK']).touch()\n"
                      "time.sleep(120)\n" % str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-m", "dlarray.distributed.run", "--nproc-per-node",
                             "2", str(script)], stderr=subprocess.PIPE, text=True)
    # The launcher takes the signal once its ranks run (it installs its handler before it starts
    # them): a fixed sleep lost that race on a loaded machine.
    deadline = time.monotonic() + 60
    while not all((tmp_path / ("up%d" % r)).exists() for r in (0, 1)):
        assert time.monotonic() < deadline and proc.poll() is None, "the ranks never started"
        time.sleep(0.05)
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
