"""The order in which a reduction over several runs of axes is planned (python/dlarray/_reduction.py):
the last run first, or on CUDA the leading run first where the last one would make short rows.
Every plan, run step by step with NumPy, gives NumPy's reduction, for both orders and for shapes
on either side of the thresholds; the CUDA order is chosen exactly where it should be."""
import itertools

import numpy as np
import pytest

from dlarray import _reduction as red

CPU, CUDA = 1, 2


def _run_plan(a, steps, final):
    y = a
    for outer, n, inner, shape in steps:
        y = y.reshape(outer, n, inner).sum(axis=1).reshape(shape)
    return y.reshape(final)


def _all_axes(ndim):
    for k in range(1, ndim + 1):
        yield from itertools.combinations(range(ndim), k)


@pytest.mark.parametrize("shape", [(3, 4, 5), (2, 3, 4, 5), (256, 8, 16), (4, 4096, 3),
                                   (5, 1, 2048, 2), (2, 3, 1, 4, 5)], ids=str)
@pytest.mark.parametrize("device_type", [CPU, CUDA])
def test_every_plan_reduces_as_numpy(shape, device_type):
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) % 7 - 3
    for axes in _all_axes(len(shape)):
        final = tuple(s for i, s in enumerate(shape) if i not in axes)
        steps, _ = red._make_plan(shape, axes, final, device_type)
        assert len(steps) == len(red._groups(axes))
        np.testing.assert_array_equal(_run_plan(a, steps, final), a.sum(axis=axes))


def test_cuda_reduces_the_leading_run_first_only_for_short_rows_and_wide_columns():
    def first_step(shape, axes, device_type):
        return red._make_plan(shape, axes, (), device_type)[0][0][:3]
    # (0, 2) of 256^3: 256 x 65536 columns first on CUDA, rows of 256 first elsewhere.
    assert first_step((256, 256, 256), (0, 2), CUDA) == (1, 256, 65536)
    assert first_step((256, 256, 256), (0, 2), CPU) == (65536, 256, 1)
    # Long rows (>= 2048) or narrow columns (< 4096) keep the last run first.
    assert first_step((8, 4, 2048), (0, 2), CUDA) == (32, 2048, 1)
    assert first_step((8, 2, 2047), (0, 2), CUDA) == (16, 2047, 1)
    assert first_step((8, 4, 1024), (0, 2), CUDA) == (1, 8, 4096)
    # A run that does not start at axis 0 keeps the usual order.
    assert first_step((4, 256, 4, 256), (1, 3), CUDA) == (4096, 256, 1)
