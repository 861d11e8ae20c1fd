"""Every GPU of the host: ops on gpu(1), copies between GPUs in both directions (ordered after
the source's queued work and before both GPUs' later work, never through the host), memory per
device, operands on two GPUs, CUDA_VISIBLE_DEVICES. Skips with fewer than two GPUs."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import dlarray
from dlarray import _core, ops

G0, G1 = dlarray.gpu(0), dlarray.gpu(1)
pytestmark = pytest.mark.skipif(G1 not in dlarray.devices(), reason="fewer than two GPUs")


def _on(x, ctx):
    return dlarray.array(np.ascontiguousarray(x, dtype=np.float32), ctx)


def test_each_gpu_has_its_own_stream_and_name():
    assert _core.stream_handle(G0) != _core.stream_handle(G1) != 0
    assert _core.device_name(G1)


def test_ops_on_the_second_gpu_match_numpy(rng):
    a = rng.standard_normal((257, 129)).astype(np.float32)
    b = rng.standard_normal((129, 65)).astype(np.float32)
    c = dlarray.empty((257, 65), G1)
    ops.matrix_multiply(_on(a, G1), False, _on(b, G1), False, c)  # cuBLAS on gpu(1)'s stream
    np.testing.assert_allclose(c.asnumpy(), a @ b, rtol=1e-4, atol=1e-4)
    s = dlarray.empty((257, 65), G1)
    ops.softmax(c, s)
    e = np.exp(a @ b - (a @ b).max(axis=1, keepdims=True))
    np.testing.assert_allclose(s.asnumpy(), e / e.sum(axis=1, keepdims=True), rtol=1e-4,
                               atol=1e-6)
    col = dlarray.empty((65,), G1)
    ops.reduce_sum_axis_zero(c, col)
    np.testing.assert_allclose(col.asnumpy(), (a @ b).sum(axis=0), rtol=1e-4, atol=1e-3)
    one = _on([[-2.5]], G1)
    ops.relu(one, one)
    assert one.asnumpy().tolist() == [[0.0]]


@pytest.mark.parametrize("n", [1, 1023, (3 << 20) + 7, 1 << 25])
def test_copies_both_ways_and_through_both_gpus_to_the_host(rng, n):
    a = rng.standard_normal(n).astype(np.float32)
    x0 = _on(a, G0)
    x1 = x0.copyto(G1)
    assert x1.ctx == G1
    back = x1.copyto(G0)
    np.testing.assert_array_equal(back.asnumpy(), a)
    np.testing.assert_array_equal(x1.copyto(dlarray.cpu()).asnumpy(), a)  # gpu1 -> cpu
    np.testing.assert_array_equal(x1.copyto(G0).copyto(dlarray.cpu()).asnumpy(), a)
    into = dlarray.empty((n,), G1)
    back.copyto(into)  # into an existing array on the other GPU
    np.testing.assert_array_equal(into.asnumpy(), a)


@pytest.mark.parametrize("src, dst", [(G0, G1), (G1, G0)])
def test_a_copy_waits_for_the_source_and_later_work_waits_for_the_copy(rng, src, dst):
    a = rng.standard_normal(1 << 24).astype(np.float32)
    x = _on(a, src)
    for _ in range(40):  # queued, long: the copy must come after all of it
        ops.matrix_elementwise_multiply_by_const(x, 1.01, x)
    y = x.copyto(dst)
    ops.array_set(x, 0.0)  # the source's next op must not overwrite what the copy reads
    ops.matrix_elementwise_multiply_by_const(y, 2.0, y)  # the destination's, not run before it
    expected = a.copy()
    for _ in range(40):
        expected *= np.float32(1.01)
    np.testing.assert_allclose(y.asnumpy(), expected * 2, rtol=1e-5)
    assert not x.asnumpy().any()


def test_peer_access_is_reported_and_pci_bus_ids_differ():
    state = _core.get_option(G0, "peer_access:0,1")
    assert state in ("0", "1")
    assert _core.get_option(G0, "peer_access:1,1") == "1"
    ids = [_core.get_option(G0, "pci_bus_id:%d" % i) for i in (0, 1)]
    assert ids[0] != ids[1] and all(":" in i for i in ids)
    print("\ngpu(0) %s, gpu(1) %s, peer access %s" % (ids[0], ids[1],
                                                    "on" if state == "1" else "off (staged)"))
    for bad in ("peer_access:0", "peer_access:0,9", "pci_bus_id:x"):
        with pytest.raises(ValueError):
            _core.get_option(G0, bad)


def test_memory_stats_are_kept_per_device():
    dlarray.synchronize()
    dlarray.empty_cache()
    base0, base1 = dlarray.memory_stats(G0), dlarray.memory_stats(G1)
    arrays = [dlarray.empty((1 << 20,), G1) for _ in range(3)]
    s0, s1 = dlarray.memory_stats(G0), dlarray.memory_stats(G1)
    assert s1["bytes_in_use"] >= base1["bytes_in_use"] + (3 * 4 << 20)
    assert s0["bytes_in_use"] == base0["bytes_in_use"]
    assert s0["num_allocations"] == base0["num_allocations"]
    del arrays
    dlarray.empty_cache(G1)
    after1 = dlarray.memory_stats(G1)
    assert after1["bytes_reserved"] == after1["bytes_in_use"] == base1["bytes_in_use"]
    assert after1["num_frees"] > base1["num_frees"]


def test_operands_on_two_gpus_raise_the_device_error():
    x0, x1 = _on(np.ones((4, 4)), G0), _on(np.ones((4, 4)), G1)
    for call in (lambda: ops.matrix_elementwise_add(x0, x1, x1),
                 lambda: ops.matrix_multiply(x0, False, x1, False, x0),
                 lambda: ops.relu(x1, x0)):
        with pytest.raises(ValueError, match=r"cuda\(0\).*cuda\(1\)|cuda\(1\).*cuda\(0\)"):
            call()


PROBE = """
import json, dlarray
from dlarray import _core
gpus = [c for c in dlarray.devices() if c.device_type == 2]
out = {"gpus": len(gpus),
       "pci": [_core.get_option(g, "pci_bus_id:%d" % g.device_id) for g in gpus],
       "reason": next(p["reason"] for p in dlarray.plugins() if p["name"] == "cuda")}
if gpus:
    x = dlarray.array([1.0, 2.0], gpus[-1])
    out["sum"] = float(x.asnumpy().sum())
print(json.dumps(out))
"""


@pytest.mark.parametrize("visible", ["1", "1,0", ""])
def test_cuda_visible_devices_is_honoured(visible):
    parent = [_core.get_option(G0, "pci_bus_id:%d" % i) for i in range(2)]
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, CUDA_VISIBLE_DEVICES=visible))
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    order = [int(i) for i in visible.split(",") if i]
    assert seen["gpus"] == len(order)
    assert seen["pci"] == [parent[i] for i in order]
    if order:
        assert seen["sum"] == 3.0
    else:
        assert "no CUDA device" in seen["reason"] or "cudaErrorNoDevice" in seen["reason"]
