"""Area "fft" (issue 22): dlarray.fft against numpy.fft on every device (OpenCL through the host
fallback): odd, prime and power-of-two lengths, lengths past 1024 and 65536, batches along every
axis, n/s padding and truncation, every norm, every dtype (float32/complex64 single precision,
float64/complex128 double), empty batches, the frequency and shift helpers, and the errors."""
import numpy as np
import pytest

import dlarray as xp
from dlarray import fft as dfft

NORMS = ("backward", "ortho", "forward")
REAL = (np.dtype(np.float32), np.dtype(np.float64))
COMPLEX = (np.dtype(np.complex64), np.dtype(np.complex128))
SINGLE = {np.dtype(np.float32), np.dtype(np.complex64)}


def _signal(rng, shape, dtype):
    v = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        v = v + 1j * rng.standard_normal(shape)
    return v.astype(dtype)


def _complex_of(dtype):
    return np.dtype(np.complex64) if np.dtype(dtype) in SINGLE else np.dtype(np.complex128)


def _real_of(dtype):
    return np.dtype(np.float32) if np.dtype(dtype) in SINGLE else np.dtype(np.float64)


def _close(got, want, dtype, ctx):
    """got (an NDArray) has want's shape and the dtype of dtype's precision, on ctx, and agrees
    with want (computed in double precision) to a tolerance relative to want's largest value."""
    assert got.device == ctx
    g = got.asnumpy()
    kind_dtype = _complex_of(dtype) if np.iscomplexobj(want) else _real_of(dtype)
    assert g.shape == want.shape and g.dtype == kind_dtype, (g.shape, g.dtype, want.shape)
    tol = 2e-5 if np.dtype(dtype) in SINGLE else 1e-12
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    err = float(np.max(np.abs(g - want))) if want.size else 0.0
    assert err <= tol * scale * max(1.0, np.log2(max(want.shape[-1:] + (2,)))), (err, scale)


# --- fft / ifft -----------------------------------------------------------------------------

LENGTHS = [1, 2, 3, 5, 7, 8, 12, 17, 97, 1000, 1024, 1025, 4099, 65537]


@pytest.mark.parametrize("n", LENGTHS)
def test_fft_ifft_lengths(ctx, rng, n):
    for dtype in COMPLEX:
        x = _signal(rng, (n,), dtype)
        ref = x.astype(np.complex128)
        a = xp.asarray(x, ctx)
        _close(dfft.fft(a), np.fft.fft(ref), dtype, ctx)
        _close(dfft.ifft(a), np.fft.ifft(ref), dtype, ctx)


@pytest.mark.parametrize("dtype", REAL + COMPLEX, ids=str)
@pytest.mark.parametrize("norm", NORMS)
def test_fft_every_axis_n_and_norm(ctx, rng, dtype, norm):
    x = _signal(rng, (3, 5, 7), dtype)
    ref = x.astype(np.complex128)
    a = xp.asarray(x, ctx)
    for axis in (0, 1, 2, -1, -3):
        for n in (None, 1, 4, 5, 11):
            for fn in ("fft", "ifft"):
                got = getattr(dfft, fn)(a, n=n, axis=axis, norm=norm)
                _close(got, getattr(np.fft, fn)(ref, n=n, axis=axis, norm=norm), dtype, ctx)


def test_fft_batches_past_the_thread_chunks(ctx, rng):
    x = _signal(rng, (1031, 96), np.complex128)  # rows past several chunks of 8, odd count
    _close(dfft.fft(xp.asarray(x, ctx)), np.fft.fft(x), x.dtype, ctx)
    y = _signal(rng, (4, 70001), np.complex64)  # 70001 = 70001 (prime) > 65536
    _close(dfft.ifft(xp.asarray(y, ctx), norm="ortho"),
           np.fft.ifft(y.astype(np.complex128), norm="ortho"), y.dtype, ctx)


def test_fft_strided_and_sliced_inputs(ctx, rng):
    x = _signal(rng, (6, 9), np.complex128)
    a = xp.asarray(x, ctx)
    _close(dfft.fft(a.T), np.fft.fft(x.T), x.dtype, ctx)
    _close(dfft.fft(a[1:5, ::2], axis=0), np.fft.fft(x[1:5, ::2], axis=0), x.dtype, ctx)


def test_fft_empty_batches_and_one_element(ctx):
    for shape, axis in (((0, 8), -1), ((4, 0), 0), ((2, 0, 3), 2)):
        got = dfft.fft(xp.asarray(np.zeros(shape, np.complex64), ctx), axis=axis)
        assert got.shape == shape and got.asnumpy().dtype == np.complex64
    one = xp.asarray(np.array([2.5 - 1j]), ctx)
    _close(dfft.fft(one), np.array([2.5 - 1j]), np.complex128, ctx)
    _close(dfft.fft(one, n=3), np.fft.fft(np.array([2.5 - 1j]), n=3), np.complex128, ctx)


def test_fft_prime_length_1000003(rng):
    """Bluestein's algorithm on the CPU: a prime length in well under a second."""
    x = rng.standard_normal(1000003)
    _close(dfft.rfft(xp.asarray(x)), np.fft.rfft(x), x.dtype, xp.cpu(0))
    _close(dfft.fft(xp.asarray(x.astype(np.float32))), np.fft.fft(x), np.float32, xp.cpu(0))


# --- rfft / irfft / hfft / ihfft ------------------------------------------------------------

@pytest.mark.parametrize("dtype", REAL, ids=str)
@pytest.mark.parametrize("norm", NORMS)
def test_rfft_irfft(ctx, rng, dtype, norm):
    for shape, axis in (((17,), -1), ((4, 10), 1), ((6, 3, 5), 0), ((2, 1025), -1)):
        x = _signal(rng, shape, dtype)
        a = xp.asarray(x, ctx)
        ref = x.astype(np.float64)
        for n in (None, 1, 2, 7, 8, 33):
            spectrum = np.fft.rfft(ref, n=n, axis=axis, norm=norm)
            _close(dfft.rfft(a, n=n, axis=axis, norm=norm), spectrum, dtype, ctx)
            s = xp.asarray(spectrum.astype(_complex_of(dtype)), ctx)
            _close(dfft.irfft(s, n=n, axis=axis, norm=norm),
                   np.fft.irfft(spectrum, n=n, axis=axis, norm=norm), dtype, ctx)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@pytest.mark.parametrize("norm", NORMS)
def test_hfft_ihfft(ctx, rng, dtype, norm):
    x = _signal(rng, (3, 9), dtype)
    ref = x.astype(np.complex128)
    a = xp.asarray(x, ctx)
    for n in (None, 1, 4, 9, 16, 17):
        _close(dfft.hfft(a, n=n, norm=norm), np.fft.hfft(ref, n=n, norm=norm), dtype, ctx)
    r = _signal(rng, (9, 3), _real_of(dtype))
    for n in (None, 1, 5, 8):
        _close(dfft.ihfft(xp.asarray(r, ctx), n=n, axis=0, norm=norm),
               np.fft.ihfft(r.astype(np.float64), n=n, axis=0, norm=norm), dtype, ctx)


def test_irfft_of_real_input_and_length_one(ctx):
    x = np.array([[3.0, 1.0, -2.0]], np.float32)
    _close(dfft.irfft(xp.asarray(x, ctx)), np.fft.irfft(x.astype(np.float64)), np.float32, ctx)
    _close(dfft.irfft(xp.asarray(np.array([2.0 + 0j]), ctx), n=1),
           np.fft.irfft(np.array([2.0 + 0j]), n=1), np.complex128, ctx)


# --- n-dimensional --------------------------------------------------------------------------

ND_CASES = [(None, None), ((4, 6), None), ((3, -1, 2), None), (None, (0,)), (None, (2, 0)),
            ((5, 4), (-1, 1)), ((2,), (1,))]


def _numpy_s_axes(ndim, shape, s, axes):
    """s and axes as NumPy 2 wants them: explicit axes with s, no -1 in s."""
    if s is None:
        return None, axes
    resolved = list(axes) if axes is not None else list(range(ndim - len(s), ndim))
    return [shape[d] if v == -1 else v for d, v in zip(resolved, s)], resolved


@pytest.mark.parametrize("s,axes", ND_CASES)
@pytest.mark.parametrize("norm", NORMS)
def test_fftn_ifftn(ctx, rng, s, axes, norm):
    x = _signal(rng, (4, 5, 3), np.complex128)
    a = xp.asarray(x, ctx)
    np_s, np_axes = _numpy_s_axes(x.ndim, x.shape, s, axes)
    for fn in ("fftn", "ifftn"):
        _close(getattr(dfft, fn)(a, s=s, axes=axes, norm=norm),
               getattr(np.fft, fn)(x, s=np_s, axes=np_axes, norm=norm), x.dtype, ctx)


@pytest.mark.parametrize("dtype", REAL, ids=str)
@pytest.mark.parametrize("s,axes", ND_CASES)
def test_rfftn_irfftn(ctx, rng, dtype, s, axes):
    x = _signal(rng, (4, 5, 6), dtype)
    ref = x.astype(np.float64)
    a = xp.asarray(x, ctx)
    np_s, np_axes = _numpy_s_axes(x.ndim, x.shape, s, axes)
    spectrum = np.fft.rfftn(ref, s=np_s, axes=np_axes)
    _close(dfft.rfftn(a, s=s, axes=axes), spectrum, dtype, ctx)
    back = xp.asarray(spectrum.astype(_complex_of(dtype)), ctx)
    _close(dfft.irfftn(back, s=np_s, axes=axes, norm="ortho"),
           np.fft.irfftn(spectrum, s=np_s, axes=np_axes, norm="ortho"), dtype, ctx)


def test_fftn_over_no_axes_is_a_copy(ctx, rng):
    x = _signal(rng, (3, 4), np.complex64)
    a = xp.asarray(x, ctx)
    got = dfft.fftn(a, axes=())
    np.testing.assert_array_equal(got.asnumpy(), x)
    got[0, 0] = 7
    assert a.asnumpy()[0, 0] == x[0, 0]


def test_zero_padding_an_empty_axis(ctx):
    got = dfft.fft(xp.asarray(np.zeros((0, 5), np.complex128), ctx), n=3, axis=0)
    np.testing.assert_array_equal(got.asnumpy(), np.zeros((3, 5), np.complex128))


def test_rfftn_2048_square_against_numpy(rng):
    x = rng.standard_normal((256, 1030))  # past 1024 columns, many rows
    _close(dfft.rfftn(xp.asarray(x)), np.fft.rfftn(x), x.dtype, xp.cpu(0))


# --- frequencies and shifts -----------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 5, 8, 1025])
def test_fftfreq_rfftfreq(ctx, n):
    for d in (1.0, 0.25, 3):
        got = dfft.fftfreq(n, d=d, device=ctx)
        assert got.device == ctx and got.asnumpy().dtype == np.float64
        np.testing.assert_allclose(got.asnumpy(), np.fft.fftfreq(n, d=d), rtol=1e-15)
        np.testing.assert_allclose(dfft.rfftfreq(n, d=d, device=ctx).asnumpy(),
                                   np.fft.rfftfreq(n, d=d), rtol=1e-15)
    f32 = dfft.fftfreq(n, dtype=xp.float32, device=ctx)
    assert f32.asnumpy().dtype == np.float32
    assert dfft.rfftfreq(n, dtype=xp.float32).device == xp.default_device()


@pytest.mark.parametrize("shape", [(1,), (5,), (6,), (3, 4), (2, 5, 7), (0, 3)])
def test_fftshift_ifftshift(ctx, rng, shape):
    x = rng.standard_normal(shape)
    a = xp.asarray(x, ctx)
    axes_cases = [None, 0, -1, tuple(range(len(shape)))] + ([(1, 0)] if len(shape) > 1 else [])
    for axes in axes_cases:
        for fn in ("fftshift", "ifftshift"):
            got = getattr(dfft, fn)(a, axes=axes)
            assert got.device == ctx
            np.testing.assert_array_equal(got.asnumpy(), getattr(np.fft, fn)(x, axes=axes))


# --- devices and errors ---------------------------------------------------------------------

def test_kernels_and_host_fallback_are_reported():
    for op in ("fft_c2c", "fft_r2c", "fft_c2r"):
        devices = xp.ops.op_info(op)["devices"]
        assert "cpu" in devices
    fallback = xp.__array_namespace_info__().capabilities()["fft host fallback"]
    assert "cpu" not in fallback
    kinds = {repr(c).split("(")[0] for c in xp.devices()}
    if "opencl" in kinds:
        assert "opencl" in fallback  # no OpenCL FFT kernels yet (docs/fft.md)


def test_errors_name_the_argument():
    a = xp.asarray(np.ones(4, np.complex64))
    r = xp.asarray(np.ones(4, np.float32))
    with pytest.raises(TypeError, match="fft: x must be an NDArray"):
        dfft.fft(np.ones(4))
    with pytest.raises(ValueError, match="at least one dimension"):
        dfft.fft(xp.asarray(np.array(1.0 + 0j)))
    with pytest.raises(ValueError, match="norm must be"):
        dfft.ifft(a, norm="none")
    with pytest.raises(ValueError, match="n must be >= 1"):
        dfft.fft(a, n=0)
    with pytest.raises(TypeError, match="n must be an integer"):
        dfft.rfft(r, n=2.5)
    with pytest.raises(TypeError, match="floating-point dtype"):
        dfft.fft(xp.asarray(np.ones(4, np.int32)))
    with pytest.raises(TypeError, match="real floating-point"):
        dfft.rfft(a)
    with pytest.raises(IndexError, match="axis 2 is out of bounds"):
        dfft.fft(a, axis=2)
    with pytest.raises(ValueError, match="axes must be unique"):
        dfft.fftn(xp.asarray(np.ones((2, 2), np.complex64)), axes=(0, -2))
    with pytest.raises(ValueError, match="s and axes must have the same length"):
        dfft.fftn(xp.asarray(np.ones((2, 2), np.complex64)), s=(2,), axes=(0, 1))
    with pytest.raises(ValueError, match="rfftn: axes must name at least one axis"):
        dfft.rfftn(xp.asarray(np.ones((2, 2), np.float32)), axes=())
    with pytest.raises(ValueError, match="irfftn: axes must name at least one axis"):
        dfft.irfftn(xp.asarray(np.ones((2, 2), np.complex64)), axes=())
    with pytest.raises(ValueError, match="output length of 0"):
        dfft.irfft(xp.asarray(np.ones(1, np.complex64)))
    with pytest.raises(ValueError, match="length 0"):
        dfft.fft(xp.asarray(np.ones((3, 0), np.complex64)))
    with pytest.raises(ValueError, match="d .the sample spacing. must not be 0"):
        dfft.fftfreq(4, d=0)
    with pytest.raises(TypeError, match="dtype must be a real floating-point"):
        dfft.fftfreq(4, dtype=xp.int32)
    with pytest.raises(TypeError, match="axes must be an integer or a sequence"):
        dfft.fftshift(a, axes="0")


def test_the_primitives_check_their_operands():
    x = xp.asarray(np.ones((2, 8, 3), np.float32))

    def out(shape, dtype):
        return xp.empty(shape, dtype=dtype, device=xp.cpu(0))

    with pytest.raises(ValueError, match="n / 2 \\+ 1 = 5"):
        xp.ops.fft_r2c(x, 1, 1.0, out((2, 4, 3), xp.complex64))
    with pytest.raises(TypeError, match="same precision"):
        xp.ops.fft_r2c(x, 1, 1.0, out((2, 5, 3), xp.complex128))
    with pytest.raises(TypeError, match="the op supports complex64, complex128"):
        xp.ops.fft_c2c(x, 1, 1.0, out((2, 8, 3), xp.float32))
    with pytest.raises(ValueError, match="same outer and inner sizes"):
        xp.ops.fft_c2r(xp.asarray(np.ones((2, 5, 3), np.complex64)), 0, 1.0,
                       out((2, 8, 2), xp.float32))
    with pytest.raises(ValueError, match="must be 3-D"):
        xp.ops.fft_c2c(xp.asarray(np.ones((2, 8), np.complex64)), 1, 1.0,
                       out((2, 8), xp.complex64))
    with pytest.raises(ValueError, match="scale must be finite"):
        xp.ops.fft_c2c(xp.asarray(np.ones((2, 8, 1), np.complex64)), 1, float("nan"),
                       out((2, 8, 1), xp.complex64))


def test_the_primitives_along_a_middle_axis(rng):
    """(outer, n, inner) with both sides > 1: pocketfft's strided signals, split over threads
    along inner (inner > outer) and along outer (outer > inner)."""
    for shape in ((3, 10, 1000), (1000, 10, 3), (1, 7, 1)):
        x = _signal(rng, shape, np.complex128)
        out = xp.empty(shape, dtype=xp.complex128, device=xp.cpu(0))
        xp.ops.fft_c2c(xp.asarray(x), 0, 0.5, out)
        np.testing.assert_allclose(out.asnumpy(), 0.5 * shape[1] * np.fft.ifft(x, axis=1),
                                   rtol=1e-12, atol=1e-12)
