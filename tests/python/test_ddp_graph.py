"""Data-parallel plans in CUDA graphs (issue 24). With NCCL, as segments: the plan's calls are
cut at the buckets' starts and wait; each stretch of op calls is recorded as a graph of its own
and the collectives run eagerly between the launches (NCCL never inside a graph: that hung on 2
H200s). With the peer-memory all-reduce, the buckets are recorded into the plan's one graph.

Without a GPU: dlarray.autodiff._cuda_graph.split, the GraphRunner over a fake graph extension
(what is recorded, what runs eagerly, in which order), and the segment lists of real
data-parallel plans on one CPU rank. With one GPU: a one-rank group replays segmented graphs
and trains exactly as one executor. With two GPUs: more than a thousand replayed steps with
eager collectives between them, losses equal to one GPU's on the global batch, both ways.
ddp_graph_worker.py is the rank's side."""
import json
import os
import socket
import subprocess
import sys
import types

import numpy as np
import pytest

import dlarray
from dlarray.autodiff import _cuda_graph

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "ddp_graph_worker.py")
GPUS = [c for c in dlarray.devices() if c.device_type == 2]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- split -----------------------------------------------------------------------------------------

def test_split_cuts_at_every_eager_call_and_keeps_the_order():
    def fn(name):
        return lambda *a: None

    a, b, c, d, start, wait = (fn(n) for n in "abcdsw")
    eager = {start, wait}
    calls = [(start, (0,)), (a, ()), (b, ()), (start, (1,)), (c, ()), (start, (2,)),
             (start, (3,)), (wait, ()), (d, ())]
    steps = _cuda_graph.split(calls, eager)
    assert [(rec, [f for f, _ in cs]) for rec, cs in steps] == [
        (False, [start]), (True, [a, b]), (False, [start]), (True, [c]),
        (False, [start, start, wait]), (True, [d])]
    assert [call for _rec, cs in steps for call in cs] == calls
    assert _cuda_graph.split([], eager) == []
    assert _cuda_graph.split(calls[1:3], frozenset()) == [(True, calls[1:3])]  # one graph
    assert _cuda_graph.split(calls[:1], eager) == [(False, calls[:1])]


# -- GraphRunner over a fake graph extension -----------------------------------------------------

class FakeCore:
    """dlarray._core's graph functions: a recording collects the calls' names; a launch runs
    them into the log."""

    def __init__(self, log):
        self.log, self.recording = log, None

    def _graph_unavailable_reason(self, ctx):
        return ""

    def _graph_begin_capture(self, ctx):
        assert self.recording is None, "a recording inside a recording"
        self.recording = []

    def _graph_end_capture(self, ctx):
        recorded, self.recording = self.recording, None
        log = self.log
        return types.SimpleNamespace(launch=lambda: log.extend(recorded))

    def _graph_abort_capture(self, ctx):
        self.recording = None

    def op(self, name):
        def call():
            (self.log if self.recording is None else self.recording).append(name)
        return call

    def eager(self, name):
        def call():
            assert self.recording is None, "%s was recorded" % name
            self.log.append(name)
        return call


class FakePlan:
    """What GraphRunner reads of a _DevicePlan: calls, eager, bound, bind, stage, ..."""

    def __init__(self, calls, eager):
        self.ctx, self.calls, self.eager = None, calls, eager
        self.bound, self.inplace, self.owned = {}, set(), set()


@pytest.fixture
def fake(monkeypatch):
    log = []
    core = FakeCore(log)
    monkeypatch.setattr(_cuda_graph, "_core", core)
    monkeypatch.setattr(_cuda_graph, "_shutdown_registered", True)
    return core


def test_runner_records_segments_and_runs_the_collectives_between_them(fake):
    start, wait = fake.eager("start"), fake.eager("wait")
    names = ["f1", "f2", "start", "b1", "b2", "start", "wait", "update"]
    calls = [((start if n == "start" else wait if n == "wait" else fake.op(n)), ())
             for n in names]
    plan = FakePlan(calls, frozenset((start, wait)))
    runner = _cuda_graph.GraphRunner(plan, [types.SimpleNamespace(graph_safe=True)])
    for run in range(4):
        del fake.log[:]
        runner.run({})
        assert fake.log == names, run  # op by op, then recorded: the same order
    assert (runner.captures, runner.replays, runner.eager_runs) == (1, 3, 1)
    assert runner.segments == 3  # f1 f2 | b1 b2 | update
    assert [g is None for g in runner.graphs] == [False, True, False, True, False]


def test_runner_without_eager_calls_is_one_graph(fake):
    calls = [(fake.op(n), ()) for n in ("a", "b", "c")]
    runner = _cuda_graph.GraphRunner(FakePlan(calls, frozenset()),
                                     [types.SimpleNamespace(graph_safe=True)])
    for _ in range(3):
        del fake.log[:]
        runner.run({})
        assert fake.log == ["a", "b", "c"]
    assert runner.segments == 1 and len(runner.graphs) == 1


def test_runner_falls_back_to_op_by_op_when_a_segment_fails_to_record(fake):
    start = fake.eager("start")

    def bad():
        if fake.recording is not None:
            raise RuntimeError("an op waited for the device")
        fake.log.append("bad")
    calls = [(fake.op("a"), ()), (start, ()), (bad, ())]
    runner = _cuda_graph.GraphRunner(FakePlan(calls, frozenset((start,))),
                                     [types.SimpleNamespace(graph_safe=True)])
    for _ in range(3):
        del fake.log[:]
        runner.run({})
        assert fake.log == ["a", "start", "bad"]  # never a recorded start, never a lost op
    assert not runner.enabled and "recording the CUDA graph failed" in runner.note
    assert runner.segments == 0 and runner.eager_runs == 3 and fake.recording is None


def test_unsafe_ops_keep_a_plan_op_by_op(fake):
    runner = _cuda_graph.GraphRunner(FakePlan([], frozenset()),
                                     [types.SimpleNamespace(graph_safe=False)])
    assert not runner.enabled and "SimpleNamespace" in runner.note


# -- the segment lists of real data-parallel plans (one CPU rank) --------------------------------

def check_segments(case, update):
    steps, buckets = case["steps"], case["buckets"]
    flat = [(rec, label) for rec, labels in steps for label in labels]
    assert len(flat) == case["calls"]
    for rec, labels in steps:
        assert labels, "an empty step"
        kinds = {kind for kind, _b, _t in labels}
        assert kinds <= ({"op", "update"} if rec else {"start", "wait", "finish"}), (rec, kinds)
    for a, b in zip(steps, steps[1:]):
        assert a[0] != b[0], "two segments (or two eager stretches) in a row"
    # "finish": the wait for the buckets started, then the last bucket on the GPU's stream
    starts = [b for _rec, (kind, b, _t) in flat if kind in ("start", "finish")]
    assert starts == list(range(buckets))  # every bucket started once, in order
    kinds = [kind for _rec, (kind, _b, _t) in flat]
    waits = [i for i, k in enumerate(kinds) if k in ("wait", "finish")]
    assert len(waits) == 1 and waits[0] >= max(i for i, k in enumerate(kinds)
                                               if k in ("start", "finish"))
    # A bucket starts after every op that touches its arrays; only the updates, after the
    # wait, touch them later.
    for i, (_rec, (kind, b, _t)) in enumerate(flat):
        if kind not in ("start", "finish"):
            continue
        for kind2, _b2, touched in (label for _r, label in flat[i + 1:]):
            assert kind2 in ("start", "wait", "finish", "update") or b not in touched, (b, kind2)
    wait = waits[0]
    if update:  # the updates are the last segment, right after the wait
        assert steps[-1][0] and {k for k, _b, _t in steps[-1][1]} == {"update"}
        assert all(k != "update" for k in kinds[:wait])
        assert steps[-2][1][-1][0] in ("wait", "finish")
    else:
        assert kinds[-1] in ("wait", "finish") and "update" not in kinds
    # a bucket ready after the last op is all-reduced by finish, not forked to the side stream
    last_op = max(i for i, k in enumerate(kinds) if k == "op")
    assert "start" not in kinds[last_op + 1:], kinds
    return sum(1 for rec, _labels in steps if rec)


def cpu_worker(tmp_path, scenario):
    """Runs ddp_graph_worker.py SCENARIO as one CPU rank (MPI); returns its JSON."""
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()),
               DLARRAY_DIST_TIMEOUT="60", OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "DLARRAY_DIST_DEVICE"):
        env.pop(name, None)
    done = subprocess.run([sys.executable, WORKER, scenario, str(tmp_path)],
                          capture_output=True, text=True, timeout=120, env=env)
    if done.returncode != 0 and "MPI was not found" in done.stderr:
        pytest.skip("a CPU process group needs MPI: %s" % done.stderr.strip().splitlines()[-1])
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return json.loads((tmp_path / ("%s.json" % scenario)).read_text())


@pytest.mark.skipif("asan" in os.environ.get("LD_PRELOAD", ""),
                    reason="Open MPI under the preloaded ASan runtime (scripts/sanitize.sh)")
def test_data_parallel_plans_split_at_every_bucket_start(tmp_path):
    cases = cpu_worker(tmp_path, "segments")
    assert len(cases) == 18
    for key, case in cases.items():
        name, bucket_mb, update = key.split()
        segments = check_segments(case, update == "True")
        if bucket_mb == "25":  # one bucket, all-reduced after the backward pass on the stream
            assert case["buckets"] == 1 and segments == 1 + (update == "True"), key
            assert [k for _r, (k, _b, _t) in ((r, l) for r, ls in case["steps"] for l in ls)
                    if k != "op" and k != "update"] == ["finish"], key
        if bucket_mb == "1e-06":  # a bucket per gradient
            assert case["buckets"] == (4 if name == "small" else 6), key
    # examples/mnist.py's MLP computes W1's gradient first (0.77 MB): with 0.5 MB buckets its
    # all-reduce starts while the other gradients are computed.
    mnist = cases["mnist 0.5 True"]
    assert mnist["buckets"] == 2 and check_segments(mnist, True) == 3


@pytest.mark.skipif("asan" in os.environ.get("LD_PRELOAD", ""),
                    reason="Open MPI under the preloaded ASan runtime (scripts/sanitize.sh)")
def test_buckets_that_step_the_parameters_train_as_the_update_op(tmp_path):
    """Where every bucket goes to the peer kernel, its kernel makes the SGD step
    (all_reduce_sgd, faked on one CPU rank in the worker): the plan keeps no update call, no op
    after a bucket's start reads the parameters it steps (also where an op reads W1 after W1's
    gradient is ready: "reader"), and training equals one executor's with the update op, bit
    for bit (that op's values too)."""
    cases = cpu_worker(tmp_path, "fused_steps")
    assert sorted(cases) == ["0.5", "1e-06", "25.0", "older plugin", "reader"]
    # A CUDA plugin without all_reduce_sgd: the buckets only average, the update op stays
    older = cases.pop("older plugin")
    assert older["stats"] == {"updates_in_all_reduce": 0, "multi_tensor_kernels": 1}, older
    assert older["losses_equal"] and older["weights_equal"], older
    assert not any(c.startswith("sgd") for c in older["calls"]), older["calls"]
    assert older["calls"].count("group") == 4 * older["buckets"], older["calls"]
    for key, case in cases.items():
        assert case["stats"] == {"updates_in_all_reduce": 6, "multi_tensor_kernels": 0}, key
        assert case["late_readers"] == [], (key, case["late_readers"])
        assert case["losses_equal"] and case["weights_equal"], key
        # one all_reduce_sgd a bucket a run (4 runs), stepping all 6 parameters between them
        sgd = [c for c in case["calls"] if c.startswith("sgd")]
        assert len(sgd) == 4 * case["buckets"], (key, case["calls"])
        assert sum(int(c.split()[1]) for c in sgd) == 4 * 6, (key, sgd)
        assert "group" not in case["calls"], key
    assert cases["1e-06"]["buckets"] == 6 and cases["25.0"]["buckets"] == 1
    # "reader": an op reads W1 after W1's gradient is ready; W1's bucket waits for it


# -- GPUs ------------------------------------------------------------------------------------------

def nccl_or_skip():
    import dlarray.distributed as dist
    try:
        dist.nccl_library()
    except RuntimeError as e:
        pytest.skip("NCCL is not installed: %s" % e)


def run_ranks(tmp_path, world, steps, timeout, peer="1"):
    env = dict(os.environ, NCCL_NVLS_ENABLE="0", PYTHONUNBUFFERED="1", DLARRAY_DIST_TIMEOUT="60",
               DDP_GRAPH_HANG_S="60", DLARRAY_PEER_ALLREDUCE=peer)
    env.pop("DLARRAY_DIST_DEVICE", None)
    launcher = subprocess.Popen([sys.executable, "-X", "faulthandler", "-m",
                                 "dlarray.distributed.run", "--nproc-per-node", str(world),
                                 WORKER, "train", str(tmp_path), str(steps)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env)
    try:
        out, err = launcher.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        launcher.terminate()  # the launcher stops its ranks (their own sessions) on SIGTERM
        try:
            out, err = launcher.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            launcher.kill()
            out, err = launcher.communicate()
        pytest.fail("%d ranks did not finish in %d s:\n%s\n%s" % (world, timeout, out[-4000:],
                                                                  err[-8000:]))
    done = subprocess.CompletedProcess(launcher.args, launcher.returncode, out, err)
    print(done.stdout[-6000:])  # progress lines, for the log of a GPU run
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-8000:]
    return [json.loads((tmp_path / ("rank%d.json" % r)).read_text()) for r in range(world)]


def check_training(ranks, steps, tolerance, recordable=False):
    for r in ranks:
        for key, case in r["cases"].items():
            graph = case["graph"]
            assert graph["notes"] == [], (key, graph)
            assert case["recordable"] is recordable, (key, case)
            if case["graphs"]:
                assert (graph["captures"], graph["replays"], graph["eager_runs"]) == (
                    1, steps - 1, 1), (key, graph)
                assert graph["segments"] == [case["expected_segments"]], (key, graph)
                if case["recordable"]:  # the peer kernel's all-reduces inside the one graph
                    assert case["expected_segments"] == 1, key
                    # with an sgd_update_op its kernels step the parameters (6: W1 b1 ... b3)
                    assert graph["updates_in_all_reduce"] == (6 if key.split()[1] == "True"
                                                              else 0), (key, graph)
                else:
                    assert case["expected_segments"] >= 2, key  # at least one cut
            else:  # cuda_graph=False: op by op, as before
                assert graph["captures"] == graph["replays"] == 0, (key, graph)
                assert graph["segments"] == [], (key, graph)
            assert case["loss_error"] <= tolerance, (key, case)
            assert case["weight_error"] <= 10 * tolerance, (key, case)  # of weights ~0.1
            assert case["last_loss"] < case["first_loss"], key  # it trains
    for r in ranks[1:]:  # the all-reduced losses: the same numbers on every rank
        for key, case in r["cases"].items():
            assert case["losses"] == ranks[0]["cases"][key]["losses"], key


@pytest.mark.skipif(not GPUS, reason="no GPU: segmented CUDA graphs need one")
def test_one_rank_group_replays_segments_as_one_executor(tmp_path):
    nccl_or_skip()
    steps = 200
    ranks = run_ranks(tmp_path, 1, steps, timeout=90)
    # One rank: the mean of one gradient is itself, the same kernels on the same rows.
    check_training(ranks, steps, tolerance=1e-6)


@pytest.mark.skipif(len(GPUS) < 2, reason="fewer than two GPUs (segmented data-parallel "
                    "graphs with NCCL between them)")
def test_two_gpus_replay_a_thousand_segmented_steps_as_one_gpu(tmp_path):
    nccl_or_skip()
    steps = 1200
    ranks = run_ranks(tmp_path, 2, steps, timeout=150, peer="0")  # NCCL: segments
    for r in ranks:
        for case in r["cases"].values():
            assert case["syncs"] == (steps if case["graphs"] else steps // 4) // 50
    # cuBLAS sums half the rows in another order: float32 rounding, carried over the steps
    check_training(ranks, steps, tolerance=5e-3)


@pytest.mark.skipif(len(GPUS) < 2, reason="fewer than two GPUs (the peer all-reduce recorded "
                    "into data-parallel graphs)")
def test_two_gpus_replay_a_thousand_steps_with_the_all_reduces_in_the_graph(tmp_path):
    """The peer-memory all-reduce (the default between GPUs of one host) recorded into the
    plan's one graph: 1200 replays between eager NCCL collectives, equal to one GPU."""
    nccl_or_skip()
    steps = 1200
    ranks = run_ranks(tmp_path, 2, steps, timeout=150, peer="1")
    for r in ranks:
        for case in r["cases"].values():
            assert case["syncs"] == (steps if case["graphs"] else steps // 4) // 50
    check_training(ranks, steps, tolerance=5e-3, recordable=True)
