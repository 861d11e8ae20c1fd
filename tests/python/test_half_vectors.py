"""float16 maps bit for bit against NumPy: the CPU converts float16 lanes with the F16C/AVX-512
instructions (DLARRAY_CPU_HALF_VECTORS in backends/cpu/elementwise.h) and the tail one element at
a time, so every length mod the vector width meets both paths; the values cover subnormals,
rounding ties, overflow to inf, signed zeros and NaN."""
import numpy as np
import pytest

import dlarray
from dlarray import ops

# Every float16 class: subnormals (smallest 2**-24), the largest finite 65504 (and sums that
# overflow it), values whose float32 sum lies halfway between two float16 values, signed zeros.
SPECIAL = np.array([0.0, -0.0, 2.0**-24, -(2.0**-24), 2.0**-14, 6.1e-5, 65504.0, -65504.0,
                    np.inf, -np.inf, np.nan, 1.0, 1.0009765625, 2049.0, -3.5, 0.1],
                   dtype=np.float16)


def values(rng, n):
    x = rng.standard_normal(n).astype(np.float16) * np.float16(100)
    x[:min(n, len(SPECIAL))] = SPECIAL[:min(n, len(SPECIAL))]
    return rng.permutation(x)


def same_bits(got, ref):
    nan = np.isnan(ref)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan].view(np.uint16), ref[~nan].view(np.uint16))


CASES = {
    "relu": (lambda x, y, out: ops.relu(x, out), lambda x, y: np.where(x < 0, np.float16(0), x)),
    "add": (lambda x, y, out: ops.matrix_elementwise_add(x, y, out), np.add),
    "multiply": (lambda x, y, out: ops.matrix_elementwise_multiply(x, y, out), np.multiply),
    "divide": (lambda x, y, out: ops.matrix_elementwise_divide(x, y, out), np.divide),
    "add_by_const": (lambda x, y, out: ops.matrix_elementwise_add_by_const(x, 0.3, out),
                     lambda x, y: x + np.float16(0.3)),
    "multiply_by_const": (lambda x, y, out: ops.matrix_elementwise_multiply_by_const(x, 3.0, out),
                          lambda x, y: x * np.float16(3.0)),
}


@pytest.mark.parametrize("n", [1, 15, 16, 17, 33, 1000, 65536 + 5], ids=str)
@pytest.mark.parametrize("name", sorted(CASES))
def test_float16_maps_bit_exact(ctx, rng, name, n):
    ours, ref = CASES[name]
    x = values(rng, n)
    y = values(rng, n)
    out = dlarray.empty((n,), ctx, np.float16)
    ours(dlarray.array(x, ctx, np.float16), dlarray.array(y, ctx, np.float16), out)
    with np.errstate(all="ignore"):
        same_bits(out.asnumpy(), ref(x, y))


def test_float16_in_place_and_views(rng):
    """In place (out is the input) and on an offset view: the vector loads start unaligned."""
    ctx = dlarray.cpu(0)
    x = values(rng, 101)
    a = dlarray.array(x, ctx, np.float16)
    ops.matrix_elementwise_multiply_by_const(a, -2.0, a)
    with np.errstate(over="ignore"):
        same_bits(a.asnumpy(), x * np.float16(-2.0))
    whole = dlarray.array(x, ctx, np.float16)
    part = whole[3:]
    out = dlarray.empty((98,), ctx, np.float16)
    ops.relu(part.copy(), out)
    same_bits(out.asnumpy(), np.where(x[3:] < 0, np.float16(0), x[3:]))
