"""Runs Python snippets in fresh interpreters, for cases that may hang or crash the process."""
import json
import os
import signal
import subprocess
import sys
import textwrap


class Result:
    """What a child interpreter did: exit code (negative: killed by that signal), output, and
    whether it ran past its time limit (then it was killed with its whole process group)."""

    def __init__(self, returncode, stdout, stderr, timed_out):
        self.returncode, self.stdout, self.stderr, self.timed_out = (returncode, stdout, stderr,
                                                                     timed_out)

    def __repr__(self):
        return (f"Result(returncode={self.returncode}, timed_out={self.timed_out}, "
                f"stdout={self.stdout[-2000:]!r}, stderr={self.stderr[-2000:]!r})")


def start(code, env=None):
    """Starts `code` (dedented) in a new interpreter in its own process group."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], env=full_env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def finish(proc, timeout):
    """Waits for a process from start(); kills its process group (forked children included)
    when it runs longer than `timeout` seconds."""
    timed_out = False
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
    else:
        try:  # forked children that outlived their parent
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return Result(proc.returncode, out, err, timed_out)


def run(code, timeout=60, env=None):
    """Runs `code` in a new interpreter; returns a Result."""
    return finish(start(code, env), timeout)


def run_many(code, count, timeout=60, env=None, parallel=2):
    """Runs `code` `count` times, `parallel` at a time; returns the Results."""
    results, running = [], []
    for _ in range(count):
        running.append(start(code, env))
        if len(running) >= parallel:
            results.append(finish(running.pop(0), timeout))
    results.extend(finish(p, timeout) for p in running)
    return results


def run_cases(module_file, names, timeout=180, env=None):
    """Runs CASES[name]() of the test module at `module_file` for each name, in order, in one
    child interpreter. Returns ({name: (status, detail)}, Result); status is "pass" or "fail"
    (the traceback in detail). Cases after a crash have no entry."""
    paths = [os.path.dirname(os.path.abspath(module_file)),
             os.path.dirname(os.path.abspath(__file__))]
    code = f"""
import importlib.util, json, sys, traceback
sys.path[:0] = {paths!r}
spec = importlib.util.spec_from_file_location("hostile_cases", {module_file!r})
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
for name in {list(names)!r}:
    print("START " + name, flush=True)
    try:
        mod.CASES[name]()
        res = ["pass", ""]
    except BaseException:
        res = ["fail", traceback.format_exc()[-3000:]]
    print("RESULT " + json.dumps([name] + res), flush=True)
"""
    r = finish(start(code, env), timeout)
    results = {}
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            name, status, detail = json.loads(line[len("RESULT "):])
            results[name] = (status, detail)
    return results, r


def check_case(outcome, name):
    """Asserts that case `name` passed in the child of run_cases."""
    results, r = outcome
    if name not in results:
        started = [ln[6:] for ln in r.stdout.splitlines() if ln.startswith("START ")]
        raise AssertionError(f"the child died (last case started: {started[-1:]}): {r}")
    status, detail = results[name]
    assert status == "pass", detail


def run_script(code, timeout=60, env=None):
    """Runs `code` as a script file (needed by multiprocessing's 'spawn', which re-imports the
    main module); returns a Result."""
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(textwrap.dedent(code))
    try:
        full_env = dict(os.environ)
        full_env.update(env or {})
        proc = subprocess.Popen([sys.executable, f.name], env=full_env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        return finish(proc, timeout)
    finally:
        os.unlink(f.name)
