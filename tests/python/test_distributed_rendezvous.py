"""dlarray.distributed's TCP rendezvous on loopback, without GPUs or NCCL: the payload, timeouts
that name the missing ranks, ranks that disagree or exit, reported failures, barriers."""
import json
import socket
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from dlarray.distributed import rendezvous


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
