"""The peer-memory all-reduce (issue 24: small all-reduces in one kernel over CUDA IPC mappings
instead of NCCL): its settings on the CPU, then on 2 GPUs through the launcher every dtype and
op against NumPy at sizes around its unit, block and threshold boundaries, bit-identical on
both ranks, 1000+ calls back to back across the sequence numbers' wrap interleaved with NCCL's,
the switch that turns it off, and a dead rank ending the other with an error naming it.

Run as a script, this file is one rank of those runs:

    python -m dlarray.distributed.run --nproc-per-node 2 test_peer_allreduce.py SCENARIO OUTDIR
"""
import hashlib
import json
import os
import pathlib
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

try:
    import ml_dtypes
except ImportError:  # bfloat16 is then left out
    ml_dtypes = None

import dlarray
from dlarray.distributed import _group, _peer

HERE = pathlib.Path(__file__).resolve().parent
LIMIT = _peer.PEER_ALLREDUCE_MAX_BYTES
# Sizes in elements: empty, one, a partial 16-byte unit, units and blocks (512 threads) crossed,
# several passes of the grid (at most 64 blocks x 512 threads, a 16-byte unit each; 600001
# float64 is over the limit: NCCL's).
SIZES = [0, 1, 3, 7, 17, 100, 513, 4097, 70001, 600001]
DTYPES = ["float32", "float64", "float16"] + (["bfloat16"] if ml_dtypes else []) + [
    "int32", "int64", "int8", "uint8", "uint32", "uint64"]
FLOATS = {"float16", "bfloat16", "float32", "float64"}


def _np_dtype(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


# -- settings, on the CPU --------------------------------------------------------------------

def test_peer_config_defaults_on_with_the_measured_limit():
    assert _peer.peer_config({}) == (True, LIMIT)
    assert _peer.peer_config({"DLARRAY_PEER_ALLREDUCE": "1"}) == (True, LIMIT)


def test_peer_config_switches_and_limit():
    assert _peer.peer_config({"DLARRAY_PEER_ALLREDUCE": "0"}) == (False, LIMIT)
    assert _peer.peer_config({"DLARRAY_PEER_ALLREDUCE_MAX_BYTES": "65536"}) == (True, 65536)
    assert _peer.peer_config({"DLARRAY_PEER_ALLREDUCE_MAX_BYTES": " 0 "}) == (False, 0)
    # NCCL_P2P_DISABLE: the user forbade peer access (the two-node runs measure NCCL's network)
    assert _peer.peer_config({"NCCL_P2P_DISABLE": "1"})[0] is False
    assert _peer.peer_config({"NCCL_P2P_DISABLE": "0"})[0] is True


@pytest.mark.parametrize("env, fragment", [
    ({"DLARRAY_PEER_ALLREDUCE": "yes"}, "DLARRAY_PEER_ALLREDUCE must be 0 (off) or 1 (on)"),
    ({"DLARRAY_PEER_ALLREDUCE_MAX_BYTES": "4MB"}, "must be a byte count"),
    ({"DLARRAY_PEER_ALLREDUCE_MAX_BYTES": "-1"}, "must be a byte count"),
])
def test_peer_config_rejects_bad_values(env, fragment):
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        _peer.peer_config(env)


class FakeComm:
    def __init__(self):
        self.calls = []

    def configure_peer(self, enabled, max_bytes, timeout):
        self.calls.append(("configure_peer", enabled, max_bytes, timeout))

    def init(self, payload):
        self.calls.append(("init", len(payload)))

    def peer_stats(self):
        return (5, 2, True, 1234)


def test_the_group_configures_the_communicator_before_init(monkeypatch):
    fake = FakeComm()
    monkeypatch.setattr(_group, "_new_communicator", lambda *args: fake)
    monkeypatch.setattr(_group, "_unique_id", lambda: b"u" * 128)
    group = _group.ProcessGroup(0, 1, dlarray._core.DLContext(0, 2), 7.5, -1)
    group.peer = (True, 4096)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    try:
        group._start_nccl("127.0.0.1", port)
    finally:
        group.rendezvous.close()
    assert fake.calls == [("configure_peer", True, 4096, 7.5), ("init", 128)]


def test_collective_stats_reads_the_communicator(monkeypatch):
    import dlarray.distributed as dist
    with pytest.raises(RuntimeError, match="not initialised"):
        dist.collective_stats()
    group = _group.ProcessGroup(0, 1, dlarray._core.DLContext(0, 2), 5.0, -1)
    group.comm = FakeComm()
    monkeypatch.setattr(dist, "_group_state", group)
    assert dist.collective_stats() == {"peer_all_reduce": 5, "nccl_all_reduce": 2,
                                       "peer_enabled": True, "peer_max_bytes": 1234}
    group.comm = object()  # an MPI group, or an older module: zeros
    assert dist.collective_stats()["peer_all_reduce"] == 0


# -- 2 GPUs ----------------------------------------------------------------------------------

GPUS = [c for c in dlarray.devices() if c.device_type == 2]
needs_two_gpus = pytest.mark.skipif(len(GPUS) < 2, reason="the peer all-reduce needs two GPUs "
                                    "(this machine has %d)" % len(GPUS))


def _nccl_or_skip():
    import dlarray.distributed as dist
    try:
        return dist.nccl_library()
    except RuntimeError as e:
        pytest.skip("NCCL is not installed: %s" % e)


def env(**extra):
    e = dict(os.environ, NCCL_NVLS_ENABLE="0", PYTHONUNBUFFERED="1")
    e.update({k: str(v) for k, v in extra.items()})
    return e


def launch(tmp_path, scenario, timeout=240, **extra):
    done = subprocess.run([sys.executable, "-m", "dlarray.distributed.run", "--nproc-per-node",
                           "2", str(pathlib.Path(__file__)), scenario, str(tmp_path)],
                          capture_output=True, text=True, timeout=timeout, env=env(**extra))
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    results = [read(tmp_path, r) for r in (0, 1)]
    for r in results:
        assert "exception" not in r, r["exception"]
    return results


def read(out, rank):
    path = pathlib.Path(out) / ("rank%d.json" % rank)
    assert path.exists(), "rank %d wrote no result" % rank
    return json.loads(path.read_text())


@needs_two_gpus
def test_every_dtype_and_size_matches_numpy_bit_identical_on_both_ranks(tmp_path):
    _nccl_or_skip()
    r0, r1 = launch(tmp_path, "dtypes")
    assert r0["stats"]["peer_enabled"], r0["stats"]
    assert r0["checks"] >= 150
    assert r0["paths"] == r1["paths"]
    for key, path in r0["paths"].items():
        assert path == r0["want_paths"][key], (key, path)
    assert r0["digests"] == r1["digests"]  # every rank got the same bits
    print("\npeer all-reduce on 2 GPUs: %d checks, stats %s" % (r0["checks"], r0["stats"]))


@needs_two_gpus
def test_many_calls_back_to_back_across_the_wrap_and_interleaved_with_nccl(tmp_path):
    _nccl_or_skip()
    r0, r1 = launch(tmp_path, "many", DLARRAY_PEER_ALLREDUCE_FIRST_SEQ=2 ** 32 - 500)
    for r in (r0, r1):
        assert r["checks"] == 4, r
        assert r["stats"]["peer_all_reduce"] >= 1000 and r["stats"]["nccl_all_reduce"] >= 100
    print("\n1000+ calls: %.1f us a peer call (host, queued)" % r0["us_per_call"])


@needs_two_gpus
def test_the_switch_off_gives_nccl(tmp_path):
    _nccl_or_skip()
    r0, r1 = launch(tmp_path, "switch_off", DLARRAY_PEER_ALLREDUCE=0)
    for r in (r0, r1):
        assert r["stats"]["peer_enabled"] is False and r["stats"]["peer_all_reduce"] == 0
        assert r["stats"]["nccl_all_reduce"] == 2 and r["checks"] == 2  # one call, one group


@needs_two_gpus
def test_a_recorded_all_reduce_replays_with_a_new_sequence_number_each_time(tmp_path):
    _nccl_or_skip()
    r0, r1 = launch(tmp_path, "recorded", DLARRAY_PEER_ALLREDUCE_FIRST_SEQ=2 ** 32 - 40)
    for r in (r0, r1):
        assert r["checks"] == 3 * 60 + 6 + 2, r  # 3 a step, 6 NCCL ones, 2 refusals
        # recorded once each (replays are not host calls); the eager ones interleaved
        assert r["stats"]["peer_all_reduce"] >= 2 + 60, r["stats"]
        for fragment in ("ncclBroadcast", "cannot be recorded in a CUDA graph"):
            assert fragment in r["nccl_error"], r["nccl_error"]
        assert "ncclAllReduce" in r["large_error"], r["large_error"]
    assert r0["digests"] == r1["digests"]


@needs_two_gpus
def test_all_reduce_sgd_averages_and_steps_the_parameters_bit_for_bit(tmp_path):
    _nccl_or_skip()
    r0, r1 = launch(tmp_path, "sgd")
    for r in (r0, r1):
        assert r["checks"] == 2 * 2 * 7, r  # 2 dtypes x 2 passes x (4 gradients, 3 parameters)
        for key, fragment in (("float16", "float32 or float64"), ("size", "elements"),
                              ("large", "does not take this call"), ("count", "parameters")):
            assert fragment in r["errors"][key], (key, r["errors"])
    assert r0["digests"] == r1["digests"]


@needs_two_gpus
def test_a_dead_rank_ends_the_others_peer_all_reduce_naming_it(tmp_path):
    _nccl_or_skip()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = [subprocess.Popen([sys.executable, str(pathlib.Path(__file__)), "dead", str(tmp_path)],
                              env=env(RANK=r, LOCAL_RANK=r, WORLD_SIZE=2, MASTER_PORT=port,
                                      DLARRAY_DIST_TIMEOUT=30, DLARRAY_DIST_EXIT_GRACE=30),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for r in (0, 1)]
    outs = []
    for p in procs:
        try:
            outs.append(p.communicate(timeout=120))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise AssertionError("a rank hung")
    assert procs[1].returncode == 7
    r = read(tmp_path, 0)
    assert r["stats"]["peer_enabled"] and r["stats"]["peer_all_reduce"] >= 2, r
    assert r["error"] and "rank 1" in r["error"], (r, outs[0][1][-3000:])
    assert r["waited"] < 25, r  # the kernel stopped when rank 1's connection closed
    assert procs[0].returncode == 0, outs[0][1][-3000:]


# -- one rank of the runs above --------------------------------------------------------------

def _data(rank, n, dtype, salt):
    rng = np.random.default_rng(1000 * rank + salt)
    if dtype in FLOATS:
        return (rng.standard_normal(n) * 3).astype(_np_dtype(dtype))
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -100), min(info.max, 100), n, endpoint=True).astype(dtype)


def _want(op, arrays):
    """NumPy's reduction in rank order, in the arrays' dtype (integers wrap, as NCCL's)."""
    acc = arrays[0].copy()
    with np.errstate(over="ignore"):
        for a in arrays[1:]:
            if op in ("sum", "mean"):
                acc = (acc + a).astype(acc.dtype)
            elif op == "prod":
                acc = (acc * a).astype(acc.dtype)
            elif op == "max":
                acc = np.maximum(acc, a)
            else:
                acc = np.minimum(acc, a)
    if op == "mean":  # the 16-bit floats divide in float32, rounded once
        wide = np.float64 if acc.dtype == np.float64 else np.float32
        acc = (acc.astype(wide) / len(arrays)).astype(acc.dtype)
    return acc


def _put(a, ctx):
    """a on ctx in its own dtype (dlarray.array makes float32 unless told)."""
    return dlarray.array(a, ctx, dtype=a.dtype)


class _Worker:
    def __init__(self, out):
        import dlarray.distributed as dist
        self.dist, self.out = dist, out
        dist.init_process_group()
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.ctx = dist.get_device()
        self.result = {"rank": self.rank, "checks": 0, "paths": {}, "want_paths": {},
                       "digests": {}}

    def peer_count(self):
        return self.dist.collective_stats()["peer_all_reduce"]

    def check(self, key, got, want, exact):
        assert got.dtype == want.dtype, (key, got.dtype, want.dtype)
        if exact or want.dtype.kind in "iu":
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8), err_msg=key)
        else:
            tol = 1e-2 if want.dtype.itemsize == 2 else 1e-5
            np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                       rtol=tol, atol=tol, err_msg=key)
        self.result["digests"][key] = hashlib.sha256(got.tobytes()).hexdigest()
        self.result["checks"] += 1

    def one(self, key, n, dtype, op, view=False):
        """all_reduce of n elements (a view at an odd offset if view), checked."""
        mine = _data(self.rank, n, dtype, n)
        if view:  # not 16-byte aligned: the kernel's element path
            x = _put(np.concatenate([np.zeros(1, mine.dtype), mine]), self.ctx)[1:]
        else:
            x = _put(mine, self.ctx)
        before = self.peer_count()
        self.dist.all_reduce(x, op=op)
        took = "peer" if self.peer_count() > before else "nccl"
        nbytes = n * _np_dtype(dtype).itemsize
        peer_op = op != "mean" or dtype in FLOATS
        self.result["paths"][key] = took
        self.result["want_paths"][key] = ("peer" if 0 < nbytes <= LIMIT and peer_op else "nccl")
        want = _want(op, [_data(r, n, dtype, n) for r in range(self.world)])
        self.check(key, x.asnumpy(), want, exact=took == "peer" and self.world == 2)

    def dtypes(self):
        for dtype in DTYPES:
            for n in SIZES:
                self.one("%s/%d/sum" % (dtype, n), n, dtype, "sum")
            ops = ("max", "min", "prod") + (("mean",) if dtype in FLOATS else ())
            for op in ops:
                self.one("%s/513/%s" % (dtype, op), 513, dtype, op)
            self.one("%s/4097/view" % dtype, 4097, dtype, "sum", view=True)
        for name, nbytes in (("4KB", 4 << 10), ("1MB", 1 << 20), ("limit", LIMIT),
                             ("limit-1", LIMIT - 4), ("limit+1", LIMIT + 4)):
            self.one("float32/%s" % name, nbytes // 4, "float32", "sum")
        # A group: one kernel for arrays of one dtype; mixed dtypes go to NCCL.
        for key, dtypes in (("group", ["float32"] * 5), ("group-mixed", ["float32", "int32"])):
            mine = [_data(self.rank, 1000 + 77 * i, d, i) for i, d in enumerate(dtypes)]
            xs = [_put(m, self.ctx) for m in mine]
            before = self.peer_count()
            self.dist.all_reduce_coalesced(xs)
            self.result["paths"][key] = "peer" if self.peer_count() > before else "nccl"
            self.result["want_paths"][key] = "peer" if key == "group" else "nccl"
            for i, (x, d) in enumerate(zip(xs, dtypes)):
                want = _want("sum", [_data(r, 1000 + 77 * i, d, i) for r in range(self.world)])
                self.check("%s/%d" % (key, i), x.asnumpy(), want, exact=True)

    def many(self):
        """1020 peer calls queued back to back (no host wait), every 8th followed by an NCCL
        one: each call doubles (sum of two equal arrays) what the previous left, so one stale
        read anywhere shows in the end."""
        small = _put(np.full(1001, float(self.rank + 1)), self.ctx)  # float64
        big = _put(np.full(LIMIT // 4 + 64, float(self.rank + 1), np.float32), self.ctx)
        group = [_put(np.full(37, self.rank + 1, np.int64), self.ctx) for _ in range(3)]
        calls, nccl_calls = 1020, 0
        start = time.perf_counter()
        for i in range(calls):
            self.dist.all_reduce(small)
            if i % 8 == 7:
                self.dist.all_reduce(big, op="max")
                nccl_calls += 1
            if i % 100 == 0:
                self.dist.all_reduce_coalesced(group, op="max")
        self.result["us_per_call"] = (time.perf_counter() - start) / calls * 1e6
        total = float(sum(r + 1 for r in range(self.world)))
        want = total * float(self.world) ** (calls - 1)
        np.testing.assert_array_equal(small.asnumpy(), np.full(1001, want))
        np.testing.assert_array_equal(big.asnumpy(), np.full(big.shape[0], self.world,
                                                              np.float32))
        for g in group:
            np.testing.assert_array_equal(g.asnumpy(), np.full(37, self.world, np.int64))
        self.result["checks"] = 4
        self.result["nccl_expected"] = nccl_calls

    def switch_off(self):
        x = _put(np.full(10, self.rank + 1, np.int32), self.ctx)
        self.dist.all_reduce(x)
        np.testing.assert_array_equal(x.asnumpy(), np.full(10, 3, np.int32))
        xs = [_put(np.ones(5, np.float32), self.ctx) for _ in range(2)]
        self.dist.all_reduce_coalesced(xs)
        np.testing.assert_array_equal(xs[1].asnumpy(), np.full(5, 2, np.float32))
        self.result["checks"] = 2

    def recorded(self):
        """A peer all-reduce recorded into a CUDA graph (two arrays, one call), replayed 60
        times across the sequence numbers' wrap with new values each time, between eager peer
        all-reduces and NCCL ones; every result checked on both ranks. Then what a recording
        refuses: an NCCL collective (broadcast), an all-reduce past the peer limit."""
        from dlarray import autodiff as ad
        n = (1000, 70001)
        xs = [_put(np.zeros(k, np.float32), self.ctx) for k in n]
        eager = _put(np.zeros(513, np.float64), self.ctx)
        big = _put(np.zeros(LIMIT // 4 + 64, np.float32), self.ctx)
        graph = ad.record_cuda_graph(lambda: self.dist.all_reduce_coalesced(xs, op="mean"),
                                     self.ctx)
        for step in range(60):
            mine = [_data(self.rank, k, "float32", step) for k in n]
            for x, m in zip(xs, mine):
                x[:] = m
            eager[:] = _data(self.rank, 513, "float64", step)
            graph.launch()
            self.dist.all_reduce(eager)  # eager peer call after the replay, same stream
            if step % 10 == 9:
                big[:] = np.full(big.shape[0], self.rank + step, np.float32)
                self.dist.all_reduce(big, op="max")  # NCCL
                self.check("big/%d" % step, big.asnumpy(),
                           np.full(big.shape[0], self.world - 1 + step, np.float32), True)
            for i, k in enumerate(n):
                want = _want("mean", [_data(r, k, "float32", step) for r in range(self.world)])
                self.check("x%d/%d" % (i, step), xs[i].asnumpy(), want, exact=False)
            self.check("eager/%d" % step, eager.asnumpy(),
                       _want("sum", [_data(r, 513, "float64", step) for r in range(self.world)]),
                       exact=False)
        for key, fn in (("nccl_error", lambda: self.dist.broadcast(eager, src=0)),
                        ("large_error", lambda: self.dist.all_reduce(big))):
            try:
                ad.record_cuda_graph(fn, self.ctx)
                self.result[key] = "recorded"
            except ValueError as e:
                self.result[key] = str(e)
                self.result["checks"] += 1
        self.dist.all_reduce(eager)  # the group still works after the refusals
        self.dist.barrier()

    def sgd(self):
        """all_reduce_sgd (the data-parallel bucket's mean and SGD step in one kernel): four
        gradients of odd sizes (one misaligned view), three with parameters, float32 and
        float64, twice (the second pass on the stepped parameters); against NumPy's mean then
        p + g * s, each op rounded. Then its refusals."""
        comm = self.dist._require().comm
        sizes = (1, 517, 4096, 70001)
        for dtype in ("float32", "float64"):
            dt = np.dtype(dtype)
            scale = float(dt.type(-0.37))
            params = [_put(_data(7, n, dtype, n), self.ctx) if i != 2 else None
                      for i, n in enumerate(sizes)]
            want_p = [None if p is None else p.asnumpy() for p in params]
            for rep in range(2):
                mine = [_data(self.rank, n, dtype, n + rep) for n in sizes]
                grads = [_put(m, self.ctx) for m in mine]
                grads[1] = _put(np.concatenate([np.zeros(1, dt), mine[1]]), self.ctx)[1:]
                comm.all_reduce_sgd(grads, params, scale)
                for i, n in enumerate(sizes):
                    mean = _want("mean", [_data(r, n, dtype, n + rep) for r in range(self.world)])
                    self.check("%s/%d/g%d" % (dtype, rep, i), grads[i].asnumpy(), mean, True)
                    if params[i] is not None:
                        want_p[i] = want_p[i] + mean * dt.type(scale)  # two roundings
                        self.check("%s/%d/p%d" % (dtype, rep, i), params[i].asnumpy(),
                                   want_p[i], True)
        errors = self.result["errors"] = {}
        half = _put(np.ones(8, np.float16), self.ctx)
        small = _put(np.ones(8, np.float32), self.ctx)
        big = _put(np.ones(LIMIT // 4 + 64, np.float32), self.ctx)
        for key, args in (("float16", ([half], [None])), ("size", ([small], [big])),
                          ("large", ([big], [None])), ("count", ([small], []))):
            try:
                comm.all_reduce_sgd(args[0], args[1], -0.1)
                errors[key] = "no error"
            except (ValueError, TypeError) as e:
                errors[key] = str(e)
        self.dist.all_reduce(small)  # the group still works
        np.testing.assert_array_equal(small.asnumpy(), np.full(8, 2, np.float32))

    def dead(self):
        """Rank 1 leaves after two peer all-reduces; rank 0's third waits on the GPU."""
        x = _put(np.ones(1000, np.float32), self.ctx)
        self.dist.all_reduce(x)
        self.dist.barrier()
        self.result["stats"] = self.dist.collective_stats()
        if self.rank == 1:
            time.sleep(1.0)
            os._exit(7)
        start = time.monotonic()
        try:
            self.dist.all_reduce(x)
            try:
                x.asnumpy()  # waits on the GPU until the abort stops the kernel
            except RuntimeError as e:
                self.result["wait_error"] = str(e)
            self.dist.all_reduce(x)
            self.dist.barrier()
            self.result["error"] = None
        except self.dist.DistributedError as e:
            self.result["error"] = str(e)
        self.result["waited"] = round(time.monotonic() - start, 3)

    def run(self, scenario):
        try:
            getattr(self, scenario)()
            if scenario != "dead":
                self.result["stats"] = self.dist.collective_stats()
                self.dist.destroy_process_group()
        except BaseException as e:  # noqa: BLE001 - recorded for the test, then re-raised
            import traceback
            self.result["exception"] = "".join(traceback.format_exception(type(e), e,
                                                                          e.__traceback__))
            raise
        finally:
            with open(os.path.join(self.out, "rank%d.json" % self.rank), "w") as f:
                json.dump(self.result, f)


if __name__ == "__main__":
    _Worker(sys.argv[2]).run(sys.argv[1])
