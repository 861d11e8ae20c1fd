"""Runs Python snippets in fresh interpreters, for cases that may hang or crash the process."""
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
