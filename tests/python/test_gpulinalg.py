"""Area "gpulinalg" (issue 22): the n-dimensional FFT primitives (fft_c2c_nd, fft_r2c_nd,
fft_c2r_nd: one cuFFT plan of rank 2-3 on cuda) against numpy.fft on every device, and the CUDA
linalg paths that do not transpose (Cholesky, solve, eigh) or run a stack as one batched Jacobi
call (eigh, svd of matrices up to 32 x 32) against numpy.linalg on cuda (skipped elsewhere: the
cpu kernels are LAPACK's, covered by test_api_linalg_*)."""
import numpy as np
import pytest

import dlarray as xp
from dlarray import fft as dfft
from dlarray import linalg as la

SINGLE = {np.dtype(np.float32), np.dtype(np.complex64)}
REAL = (np.dtype(np.float32), np.dtype(np.float64))
COMPLEX = (np.dtype(np.complex64), np.dtype(np.complex128))


def _random(rng, shape, dtype):
    v = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        v = v + 1j * rng.standard_normal(shape)
    return v.astype(dtype)


def _tol(dtype):
    return 5e-5 if np.dtype(dtype) in SINGLE else 1e-11


def _close(got, want, dtype):
    g = got.asnumpy() if hasattr(got, "asnumpy") else got
    assert g.shape == want.shape, (g.shape, want.shape)
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    err = float(np.max(np.abs(g - want))) if want.size else 0.0
    assert err <= _tol(dtype) * scale * 16, (err, scale)


def _out(shape, dtype, ctx):
    return xp.empty(shape, dtype=dtype, device=ctx)


def _needs_kernel(op, ctx):
    """Skips a direct call of op where ctx's plugin has no kernel for it (opencl: dlarray.fft
    runs there through the host fallback, covered below)."""
    if repr(ctx).split("(")[0] not in xp.ops.op_info(op)["devices"]:
        pytest.skip("%s has no %s kernel (dlarray.fft falls back to the host)" % (ctx, op))


# --- the _nd primitives -----------------------------------------------------------------------

# (outer, n_1, ..., n_k, inner): odd and prime lengths, 1-element axes, inner > 1 with outer > 1
# (one execution per outer index), a block crossing 1024.
ND_SHAPES = [(1, 3, 5, 1), (2, 7, 4, 3), (3, 1, 6, 1), (1, 2, 3, 5, 2), (2, 5, 1, 4, 1),
             (1, 33, 1030, 1), (4, 1, 1, 1)]


@pytest.mark.parametrize("shape", ND_SHAPES, ids=str)
def test_c2c_nd_primitive(ctx, rng, shape):
    _needs_kernel("fft_c2c_nd", ctx)
    axes = tuple(range(1, len(shape) - 1))
    for dtype in COMPLEX:
        x = _random(rng, shape, dtype)
        for forward, scale in ((1, 1.0), (0, 0.25)):
            out = _out(shape, dtype, ctx)
            xp.ops.fft_c2c_nd(xp.asarray(x, ctx), forward, scale, out)
            ref = x.astype(np.complex128)
            want = np.fft.fftn(ref, axes=axes) if forward else np.fft.ifftn(ref, axes=axes) * \
                np.prod([shape[a] for a in axes])
            _close(out, scale * want, dtype)


@pytest.mark.parametrize("shape", ND_SHAPES, ids=str)
def test_r2c_c2r_nd_primitives(ctx, rng, shape):
    _needs_kernel("fft_r2c_nd", ctx)
    axes = tuple(range(1, len(shape) - 1))
    last = len(shape) - 2
    half = shape[:last] + (shape[last] // 2 + 1,) + shape[last + 1:]
    for dtype in REAL:
        cdtype = np.dtype(np.complex64) if dtype in SINGLE else np.dtype(np.complex128)
        x = _random(rng, shape, dtype)
        spectrum = np.fft.rfftn(x.astype(np.float64), axes=axes)
        for forward, want in ((1, spectrum), (0, np.conj(spectrum))):  # forward=0: ihfft's
            out = _out(half, cdtype, ctx)
            xp.ops.fft_r2c_nd(xp.asarray(x, ctx), forward, 2.0, out)
            _close(out, 2.0 * want, dtype)
        out = _out(shape, dtype, ctx)
        xp.ops.fft_c2r_nd(xp.asarray(spectrum.astype(cdtype), ctx), 0, 0.5, out)
        want = np.fft.irfftn(spectrum, s=[shape[a] for a in axes], axes=axes)
        _close(out, 0.5 * want * np.prod([shape[a] for a in axes]), dtype)


def test_nd_primitive_errors(ctx):
    _needs_kernel("fft_c2c_nd", ctx)
    c64 = np.dtype(np.complex64)
    x3 = xp.asarray(np.ones((2, 4, 3), c64), ctx)
    with pytest.raises(ValueError, match=r"fft_c2c_nd: x must be 4-D or 5-D"):
        xp.ops.fft_c2c_nd(x3, 1, 1.0, _out((2, 4, 3), c64, ctx))
    x4 = xp.asarray(np.ones((2, 4, 3, 1), c64), ctx)
    with pytest.raises(ValueError, match=r"fft_c2c\b.*3-D"):
        xp.ops.fft_c2c(x4, 1, 1.0, _out((2, 4, 3, 1), c64, ctx))
    with pytest.raises(ValueError, match=r"same outer and inner sizes \(dimensions 0 and 3\) "
                                         r"and lengths along dimensions 1 to 1"):
        xp.ops.fft_c2c_nd(x4, 1, 1.0, _out((2, 5, 3, 1), c64, ctx))
    real = xp.asarray(np.ones((2, 4, 6, 1), np.float32), ctx)
    with pytest.raises(ValueError, match=r"n / 2 \+ 1 = 4 values along dimension 2"):
        xp.ops.fft_r2c_nd(real, 1, 1.0, _out((2, 4, 3, 1), c64, ctx))


def test_nd_primitives_are_reported():
    for op in ("fft_c2c_nd", "fft_r2c_nd", "fft_c2r_nd"):
        devices = xp.ops.op_info(op)["devices"]
        assert "cpu" in devices
        if any(c.device_type == 2 for c in xp.devices()):
            assert "cuda" in devices


# --- fftn / rfftn / irfftn through them --------------------------------------------------------

# Axes that make runs of adjacent axes: the whole array (5 axes: runs of 3 and 2), a middle block
# (outer and inner > 1), a gap, the real axis not the last of the array, and s padding.
ND_CALLS = [((3, 4, 5, 6, 7), None, None), ((3, 4, 5, 6), (1, 2), None),
            ((3, 4, 5, 6), (0, 1, 3), None), ((3, 4, 5, 6), (2, 0, 1), None),
            ((2, 5, 6, 3), (1, 2), (7, 4)), ((4, 1, 3, 1), (0, 1, 2, 3), None),
            ((2, 0, 3, 4), (2, 3), None)]


@pytest.mark.parametrize("shape,axes,s", ND_CALLS, ids=str)
def test_fftn_rfftn_irfftn_in_blocks(ctx, rng, shape, axes, s):
    for dtype in (np.dtype(np.float32), np.dtype(np.float64)):
        x = _random(rng, shape, dtype)
        ref = x.astype(np.float64)
        a = xp.asarray(x, ctx)
        np_axes = axes if axes is not None or s is None else list(range(len(shape) - len(s),
                                                                           len(shape)))
        _close(dfft.fftn(a, s=s, axes=axes, norm="ortho"),
               np.fft.fftn(ref, s=s, axes=np_axes, norm="ortho"), dtype)
        spectrum = np.fft.rfftn(ref, s=s, axes=np_axes)
        _close(dfft.rfftn(a, s=s, axes=axes), spectrum, dtype)
        cdtype = np.dtype(np.complex64) if dtype in SINGLE else np.dtype(np.complex128)
        back = xp.asarray(spectrum.astype(cdtype), ctx)
        # the real lengths given: a last axis of 1 has a half spectrum of 1 (default length 0)
        np_axes = np_axes if np_axes is not None else list(range(len(shape)))
        s_real = s if s is not None else [shape[a] for a in np_axes]
        _close(dfft.irfftn(back, s=s_real, axes=np_axes, norm="forward"),
               np.fft.irfftn(spectrum, s=s_real, axes=np_axes, norm="forward"), dtype)


def test_rfftn_of_a_strided_view(ctx, rng):
    x = rng.standard_normal((6, 8, 10))
    a = xp.asarray(x, ctx)[::2, :, 1:]
    _close(dfft.rfftn(a), np.fft.rfftn(x[::2, :, 1:]), np.float64)


# --- CUDA linalg --------------------------------------------------------------------------------

def _cuda():
    gpus = [c for c in xp.devices() if c.device_type == 2]
    if not gpus:
        pytest.skip("no CUDA device: these cases check the cuSOLVER paths (cpu: test_api_linalg_*)")
    return gpus[0]


@pytest.fixture
def gpu():
    return _cuda()


def _hermitian(rng, shape, dtype):
    a = _random(rng, shape, dtype)
    return (a + np.conj(np.swapaxes(a, -1, -2))) / 2


def _spd(rng, shape, dtype):
    a = _random(rng, shape, dtype)
    n = shape[-1]
    return (a @ np.conj(np.swapaxes(a, -1, -2)) / max(n, 1) + np.eye(n)).astype(dtype)


def _norm(a):
    return float(np.max(np.linalg.norm(a.astype(np.complex128), axis=(-2, -1)))) if a.size else 0.


def _eps(dtype):
    return float(np.finfo(np.dtype(dtype)).eps)


# batch x n x n: one matrix (the loop / Xpotrf), small stacks (the batched Jacobi routines, up to
# 32), a stack past 32 (the loop), 1 x 1 matrices and an empty stack.
SQUARE = [(1, 40), (5, 1), (7, 3), (300, 16), (6, 32), (3, 33), (0, 4)]


@pytest.mark.parametrize("batch,n", SQUARE, ids=str)
@pytest.mark.parametrize("dtype", REAL + COMPLEX, ids=str)
def test_cuda_eigh(gpu, rng, batch, n, dtype):
    a = _hermitian(rng, (batch, n, n), dtype)
    w, v = la.eigh(xp.asarray(a, gpu))
    w, v = w.asnumpy(), v.asnumpy()
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a.astype(np.complex128)),
                               atol=100 * n * _eps(dtype) * max(1.0, _norm(a)))
    recon = v @ (w[..., None] * np.conj(np.swapaxes(v, -1, -2)))
    assert _norm(recon - a) <= 10 * max(n, 1) * _eps(dtype) * max(1.0, _norm(a)) * 10
    _close(la.eigvalsh(xp.asarray(a, gpu)), w.astype(np.float64), dtype)


@pytest.mark.parametrize("batch,m,n", [(1, 40, 30), (9, 5, 31), (200, 16, 16), (4, 32, 7),
                                       (3, 33, 2), (6, 1, 1), (0, 3, 3)], ids=str)
@pytest.mark.parametrize("dtype", REAL + COMPLEX, ids=str)
def test_cuda_svd(gpu, rng, batch, m, n, dtype):
    a = _random(rng, (batch, m, n), dtype)
    k = min(m, n)
    for full in (False, True):
        u, s, vh = (r.asnumpy() for r in la.svd(xp.asarray(a, gpu), full_matrices=full))
        assert u.shape == (batch, m, m if full else k) and vh.shape == (batch, n if full else k, n)
        np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False),
                                   atol=100 * max(m, n) * _eps(dtype) * max(1.0, _norm(a)))
        recon = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
        assert _norm(recon - a) <= 10 * max(m, n) * _eps(dtype) * max(1.0, _norm(a)) * 10
        eye_u = np.conj(np.swapaxes(u, -1, -2)) @ u
        assert np.allclose(eye_u, np.eye(u.shape[-1]), atol=1000 * _eps(dtype))
    _close(la.svdvals(xp.asarray(a, gpu)), np.linalg.svd(a.astype(np.complex128),
                                                         compute_uv=False), dtype)


def test_cuda_batched_jacobi_reports_the_bad_matrix(gpu, rng):
    a = _hermitian(rng, (5, 8, 8), np.float64)
    a[3, 2, 1] = np.nan
    w, v = la.eigh(xp.asarray(a, gpu))  # NaN in, NaN out for that matrix only (as NumPy)
    assert np.isnan(w.asnumpy()[3]).all() and np.isnan(v.asnumpy()[3]).all()
    np.testing.assert_allclose(w.asnumpy()[[0, 1, 2, 4]],
                               np.linalg.eigvalsh(a[[0, 1, 2, 4]]), atol=1e-10)
    g = _random(rng, (2, 3, 6, 5), np.float32)
    g[1, 2, 0, 0] = np.nan
    with pytest.raises(la.LinAlgError, match=r"svd: the matrix at batch index \(1, 2\)"):
        la.svd(xp.asarray(g, gpu))


@pytest.mark.parametrize("batch,n", [(1, 1), (1, 300), (4, 17), (2, 257)], ids=str)
@pytest.mark.parametrize("dtype", REAL + COMPLEX, ids=str)
def test_cuda_cholesky_reads_the_lower_triangle(gpu, rng, batch, n, dtype):
    a = _spd(rng, (batch, n, n), dtype)
    junk = np.triu(_random(rng, (batch, n, n), dtype), 1)  # must not be read
    got = la.cholesky(xp.asarray(np.tril(a) + junk, gpu)).asnumpy()
    assert np.all(np.triu(got, 1) == 0)
    recon = got @ np.conj(np.swapaxes(got, -1, -2))
    assert _norm(recon - a) <= 10 * n * _eps(dtype) * _norm(a) * 10
    _close(got, np.linalg.cholesky(a.astype(np.complex128)), dtype)


def test_cuda_cholesky_and_solve_name_the_bad_matrix(gpu, rng):
    for batch, n in ((3, 4), (3, 300)):  # potrfBatched / getrfBatched, then the loops
        a = _spd(rng, (batch, n, n), np.float64)
        a[1] = -a[1]
        with pytest.raises(la.LinAlgError, match=r"cholesky: the matrix at batch index \(1,\)"):
            la.cholesky(xp.asarray(a, gpu))
        s = _random(rng, (batch, n, n), np.float64)
        s[2, :, 0] = 0
        with pytest.raises(la.LinAlgError, match=r"solve: the matrix at batch index \(2,\)"):
            la.solve(xp.asarray(s, gpu), xp.asarray(_random(rng, (batch, n, 1), np.float64), gpu))
    with pytest.raises(la.LinAlgError, match="cholesky"):
        la.cholesky(xp.asarray(-np.eye(5), gpu))  # one matrix: Xpotrf


@pytest.mark.parametrize("batch,n,r", [(1, 1, 1), (1, 129, 1), (1, 64, 3), (5, 16, 1),
                                       (5, 16, 4), (2, 300, 2), (0, 3, 1)], ids=str)
@pytest.mark.parametrize("dtype", REAL + COMPLEX, ids=str)
def test_cuda_solve_transposed_factor(gpu, rng, batch, n, r, dtype):
    a = (_random(rng, (batch, n, n), dtype) + np.sqrt(n) * 2 * np.eye(n)).astype(dtype)
    b = _random(rng, (batch, n, r), dtype)
    got = la.solve(xp.asarray(a, gpu), xp.asarray(b, gpu)).asnumpy()
    _close(got, np.linalg.solve(a.astype(np.complex128), b.astype(np.complex128)), dtype)
    if batch:
        vec = la.solve(xp.asarray(a[0], gpu), xp.asarray(b[0, :, 0], gpu)).asnumpy()
        _close(vec, np.linalg.solve(a[0].astype(np.complex128), b[0, :, 0]), dtype)


@pytest.mark.parametrize("batch,n,r", [(1, 2, 1), (1, 257, 1), (1, 1500, 3), (3, 300, 1),
                                       (2, 1100, 2)], ids=str)
@pytest.mark.parametrize("dtype", REAL + COMPLEX, ids=str)
def test_cuda_solve_undoes_the_pivots(gpu, rng, batch, n, r, dtype):
    """Rows of a diagonally dominant matrix shuffled, so that partial pivoting swaps nearly every
    row (a dominant diagonal alone leaves the pivots in place): the pivots undone after the
    triangular solves (one thread in shared memory, then a gather into the row-major result) for
    one and several right-hand sides, stacks solved matrix by matrix, rows past the block's 1024
    threads."""
    a = _random(rng, (batch, n, n), dtype) + np.sqrt(n) * 2 * np.eye(n)
    a = np.stack([m[rng.permutation(n)] for m in a]).astype(dtype)
    b = _random(rng, (batch, n, r), dtype)
    got = la.solve(xp.asarray(a, gpu), xp.asarray(b, gpu))
    _close(got, np.linalg.solve(a.astype(np.complex128), b.astype(np.complex128)), dtype)
    vec = la.solve(xp.asarray(a[-1], gpu), xp.asarray(b[-1, :, 0], gpu))
    _close(vec, np.linalg.solve(a[-1].astype(np.complex128), b[-1, :, 0]), dtype)
