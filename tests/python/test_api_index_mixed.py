"""NumPy's advanced indexing beyond the standard's subset: integer arrays and boolean masks mixed
with slices, None, ... and integers, for get and set, on every device against NumPy (the result's
broadcast dimensions go where the array indices stand when they are adjacent, else first), lists
and NumPy arrays as indices, and the errors."""
import numpy as np
import pytest

import dlarray as xp

SHAPE = (3, 4, 5)

# Keys written once for both libraries: I makes an index array (np.asarray or the device's).
KEYS = {
    "array-slice": lambda I: (I([0, 2]), slice(1, 3)),
    "slice-array": lambda I: (slice(None), I([1, 3])),
    "slice-array-step": lambda I: (slice(1, None), I([0, 1]), slice(None, None, 2)),
    "apart": lambda I: (I([0, 2]), slice(None), I([1, 4])),
    "ellipsis-array": lambda I: (Ellipsis, I([4, 0, 3])),
    "none-array": lambda I: (None, I([1])),
    "broadcast-pair": lambda I: (I([[0], [2]]), I([1, 3])),
    "slice-pair": lambda I: (slice(None), I([0, 2]), I([1, 3])),
    "mask-in-middle": lambda I: (slice(None), I([True, False, True, False])),
    "int-array": lambda I: (1, I([0, 1])),
    "int-slice-array": lambda I: (1, slice(None), I([0, 1])),
    "array-none-array": lambda I: (I([0, 1]), None, I([2, 3])),
    "2d-array-int": lambda I: (slice(None), None, I([[1, 2], [0, 3]]), 2),
    "2d-mask-slice": lambda I: (I(np.arange(12).reshape(3, 4) % 3 == 0), slice(1, 3)),
    "slice-2d-mask": lambda I: (slice(None), I(np.eye(4, 5, dtype=bool))),
    "negative": lambda I: (slice(None), I([-1, -4])),
    "array-ellipsis-array": lambda I: (I([2]), Ellipsis, I([1])),
    "empty-array": lambda I: (slice(None), I(np.zeros(0, np.int64))),
    "empty-mask": lambda I: (slice(None), I(np.zeros(4, bool))),
}


def sample(shape, dtype):
    a = np.arange(int(np.prod(shape))).reshape(shape) % 251
    return (a % 2 == 1) if dtype == np.bool_ else a.astype(dtype)


@pytest.mark.parametrize("name", sorted(KEYS))
@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.float64, np.bool_])
def test_get_and_set_match_numpy(ctx, name, dtype):
    a = sample(SHAPE, dtype)
    key = KEYS[name]
    on = lambda v: xp.asarray(v, device=ctx)  # noqa: E731
    want = a[key(np.asarray)]
    got = xp.asarray(a, device=ctx)[key(on)]
    assert got.shape == want.shape and got.dtype == want.dtype and got.ctx == ctx
    np.testing.assert_array_equal(got.asnumpy(), want)
    # set from an array of the indexed shape, from one that broadcasts, and from a scalar
    values = sample(want.shape, dtype)[::-1] if want.ndim else sample(want.shape, dtype)
    for value in (values, values[..., :1] if want.ndim and want.shape[-1] else values):
        b = a.copy()
        b[key(np.asarray)] = value
        x = xp.asarray(a, device=ctx)
        x[key(on)] = xp.asarray(np.ascontiguousarray(value), device=ctx)
        np.testing.assert_array_equal(x.asnumpy(), b)
    b = a.copy()
    b[key(np.asarray)] = 1
    x = xp.asarray(a, device=ctx)
    x[key(on)] = 1
    np.testing.assert_array_equal(x.asnumpy(), b)


def test_repeated_indices_get(ctx):
    """Repeated indices read the same element twice (which write wins is unspecified, as in
    NumPy, so only get is compared)."""
    a = sample(SHAPE, np.int16)
    x = xp.asarray(a, device=ctx)
    for key in [(Ellipsis, [4, 0, 4]), (slice(1, None), [1, 1, 1]), ([2, 2], slice(None), [0, 0])]:
        want = a[tuple(np.asarray(k) if isinstance(k, list) else k for k in key)]
        np.testing.assert_array_equal(x[key].asnumpy(), want)


def test_lists_and_numpy_arrays_are_index_arrays(ctx):
    a = sample(SHAPE, np.int32)
    x = xp.asarray(a, device=ctx)
    np.testing.assert_array_equal(x[[0, 2]].asnumpy(), a[[0, 2]])
    np.testing.assert_array_equal(x[:, [3, 1], 1:].asnumpy(), a[:, [3, 1], 1:])
    np.testing.assert_array_equal(x[np.array([2, 2]), ..., np.array([0, 4])].asnumpy(),
                                  a[np.array([2, 2]), ..., np.array([0, 4])])
    np.testing.assert_array_equal(x[:, []].asnumpy(), a[:, []])
    x[:, [0, 3]] = 9
    a[:, [0, 3]] = 9
    np.testing.assert_array_equal(x.asnumpy(), a)


def test_large_column_selection(ctx):
    """Past the kernels' 65536 boundary: 301 x 290 columns picked from a 301 x 300 array."""
    a = np.random.default_rng(1).random((301, 300)).astype(np.float32)
    cols = np.random.default_rng(2).permutation(300)[:290]
    x = xp.asarray(a, device=ctx)
    np.testing.assert_array_equal(x[1:, cols].asnumpy(), a[1:, cols])
    v = np.random.default_rng(3).random((300, 290)).astype(np.float32)
    x[1:, cols] = xp.asarray(v, device=ctx)
    a[1:, cols] = v
    np.testing.assert_array_equal(x.asnumpy(), a)


def test_set_into_a_view_writes_the_base(ctx):
    a = sample((6, 7), np.float32)
    x = xp.asarray(a, device=ctx)
    view = x[1:5]
    view[::2, [6, 0]] = -1
    a[1:5][::2, [6, 0]] = -1
    np.testing.assert_array_equal(x.asnumpy(), a)


@pytest.mark.parametrize("key, message", [
    (lambda I: (I([0]), 1.5), "valid indices, got float"),
    (lambda I: (Ellipsis, I([0]), Ellipsis), "single ellipsis"),
    (lambda I: (I([0]), slice(None), slice(None), slice(None)), "too many indices"),
    (lambda I: (slice(None), I(np.ones((3, 5), bool))), "does not match the indexed"),
    (lambda I: (slice(None), I([1.0])), "integer dtype"),
    (lambda I: (I(True), I([0])), "0-d boolean index must be the only index"),
    (lambda I: (slice(None), I([4])), "out of bounds"),
    (lambda I: (slice(None), [0, "a"]), "integer or boolean type"),
])
def test_errors(ctx, key, message):
    x = xp.asarray(sample(SHAPE, np.float32), device=ctx)
    on = lambda v: xp.asarray(v, device=ctx)  # noqa: E731
    with pytest.raises(IndexError, match=message):
        x[key(on)]
    with pytest.raises(IndexError, match=message):
        x[key(on)] = 0


def test_index_on_another_device_is_named(ctx):
    if ctx.device_type == 1:
        pytest.skip("needs a second device type to mix")
    x = xp.asarray(sample(SHAPE, np.float32), device=ctx)
    with pytest.raises(ValueError, match="index is on cpu"):
        x[:, xp.asarray([0])]
