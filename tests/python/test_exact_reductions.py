"""Reductions over 1e8 elements keep a relative error <= 1e-6 against a float64 reference, in
every shape: 1-D, tall and narrow (the narrow-output path), wide, and a single long row.

These allocate 400 MB per array and are marked ``large`` (deselect with ``-m "not large"``); each
takes well under a second on the CPU. The data is made on the device with array_set where the
float64 reference is exact (a constant: the case where float32 accumulation drifts the most).
"""
import math

import numpy as np
import pytest

import dlarray
from dlarray import ops

N = 100_000_000
RTOL = 1e-6
SUM_SHAPES = [(N,), (N // 2, 2), (N // 8, 8), (N // 63, 63), (N // 64, 64), (N // 100, 100),
              (10_000, 10_000), (100, N // 100), (1, N), (N // 4, 2, 2)]

pytestmark = pytest.mark.large


def rel_err(got, ref):
    """Largest relative error of got (float32) against ref (float64 scalar or array)."""
    if np.ndim(ref) == 0 and got.size > 1_000_000:
        # A large output against one value: float32 temporaries (the float32 rounding of ref,
        # 6e-8 relative at most, is far below the tolerance).
        return float(np.max(np.abs(got - np.float32(ref)))) / abs(ref)
    got = np.asarray(got, np.float64)
    return float(np.max(np.abs(got - ref) / np.abs(ref)))


@pytest.mark.parametrize("shape", SUM_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_reduce_sum_axis_zero_of_a_constant(ctx, shape):
    a = dlarray.empty(shape, ctx)
    out = dlarray.empty(shape[1:] or (1,), ctx)
    for value in (1.0, 0.1, 3.7):
        ops.array_set(a, value)
        ops.reduce_sum_axis_zero(a, out)
        ref = shape[0] * float(np.float32(value))
        err = rel_err(out.asnumpy(), ref)
        assert err <= RTOL, f"relative error {err:.3g} for {shape} filled with {value}"


@pytest.mark.parametrize("shape", [(N // 2, 2), (N // 16, 16), (20_000, 5_000), (N,)],
                         ids=lambda s: "x".join(map(str, s)))
def test_reduce_sum_axis_zero_of_varied_data(ctx, shape):
    rows = shape[0]
    cols = int(np.prod(shape[1:]))
    # x[r, c] = row_term[r % 4093] + col_term[c]: positive, varied, cheap to build.
    row_term = (np.arange(4093, dtype=np.float32) * np.float32(0.37)) % np.float32(5.0)
    col_term = np.linspace(0.1, 2.0, cols, dtype=np.float32)
    x = np.add.outer(np.resize(row_term, rows), col_term).reshape(shape)
    ref = x.sum(axis=0, dtype=np.float64).reshape(-1) if len(shape) > 1 else np.array(
        [x.sum(dtype=np.float64)])
    a = dlarray.array(x, ctx)
    del x
    out = dlarray.empty(shape[1:] or (1,), ctx)
    ops.reduce_sum_axis_zero(a, out)
    err = rel_err(out.asnumpy().reshape(-1), ref)
    assert err <= RTOL, f"relative error {err:.3g} for {shape}"


@pytest.mark.parametrize("shape", [(N // 100, 100), (N // 10, 10), (100, N // 100), (1, N),
                                   (N // 2000, 2000), (N // 3, 3)],
                         ids=lambda s: "x".join(map(str, s)))
def test_softmax_cross_entropy_mean_of_constants(ctx, shape):
    rows, cols = shape
    y, y_ = dlarray.empty(shape, ctx), dlarray.empty(shape, ctx)
    ops.array_set(y, 0.25)           # equal logits: softmax is 1/cols everywhere
    label = np.float32(1.0 / 3.0)
    ops.array_set(y_, float(label))  # loss per row = log(cols) * cols * label
    out = dlarray.empty((1,), ctx)
    ops.softmax_cross_entropy(y, y_, out)
    ref = math.log(cols) * cols * float(label)
    err = rel_err(out.asnumpy(), ref)
    assert err <= RTOL, f"relative error {err:.3g} for {shape}"


@pytest.mark.parametrize("shape", [(N // 1000, 1000), (50, N // 50)],
                         ids=lambda s: "x".join(map(str, s)))
def test_softmax_cross_entropy_mean_of_varied_rows(ctx, shape):
    rows, cols = shape
    # Logits and labels repeat every 997 rows (every 2 rows for a few long rows): the float64
    # reference is computed on one period and weighted.
    period = 997 if rows > 997 else 2
    rng = np.random.default_rng(1)
    base_y = rng.standard_normal((period, cols), dtype=np.float32)
    base_l = rng.random((period, cols), dtype=np.float32)
    y = np.resize(base_y, (rows, cols))
    y_ = np.resize(base_l, (rows, cols))
    yy = base_y.astype(np.float64)
    m = yy.max(axis=1, keepdims=True)
    lse = np.log(np.exp(yy - m).sum(axis=1, keepdims=True)) + m
    per_row = -(base_l.astype(np.float64) * (yy - lse)).sum(axis=1)
    counts = np.bincount(np.arange(rows) % period, minlength=period)
    ref = float((per_row * counts).sum() / rows)
    ya, la = dlarray.array(y, ctx), dlarray.array(y_, ctx)
    del y, y_
    out = dlarray.empty((1,), ctx)
    ops.softmax_cross_entropy(ya, la, out)
    err = rel_err(out.asnumpy(), ref)
    assert err <= RTOL, f"relative error {err:.3g} for {shape}"
