"""dlarray.linalg's factorizations (cholesky, det, slogdet, inv, solve, eigh, eigvalsh, svd,
svdvals, qr) against NumPy on every device: float32/float64, stacks, 1x1, 0-size stacks and
matrices, sizes that cross the thread pool's split, and LinAlgError naming the batch index."""
import numpy as np
import pytest

import dlarray as xp
from dlarray import linalg as la

DTYPES = [np.float32, np.float64]
# (batch shape, n): 1x1, odd sizes, a batch large enough to run on several threads, empties.
SQUARE = [((), 1), ((), 5), ((3,), 4), ((2, 3), 7), ((), 67), ((130,), 9), ((0,), 3), ((2,), 0)]
RECT = [((), 1, 1), ((), 5, 3), ((), 3, 5), ((4,), 6, 2), ((2, 2), 2, 7), ((), 70, 33),
        ((0,), 3, 2), ((2,), 0, 3), ((), 4, 0)]


def tol(dtype, n=1):
    return (2e-4 if dtype == np.float32 else 1e-10) * max(n, 1)


def well_conditioned(rng, batch, n, dtype):
    a = rng.standard_normal(batch + (n, n)) + n * np.eye(n)
    return a.astype(dtype)


def spd(rng, batch, n, dtype):
    a = rng.standard_normal(batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


def arr(a, ctx):
    return xp.asarray(a, device=ctx)


def close(got, ref, dtype, n=1):
    got = got.asnumpy() if hasattr(got, "asnumpy") else np.asarray(got)
    assert got.shape == np.shape(ref), (got.shape, np.shape(ref))
    np.testing.assert_allclose(got, ref, rtol=tol(dtype, n), atol=tol(dtype, n))


def test_namespace_and_capabilities():
    assert xp.linalg is la
    assert issubclass(la.LinAlgError, ValueError)
    for name in la.__all__:
        assert callable(getattr(la, name))
    # the device kinds that lack a native kernel for some linalg op, and only those
    caps = xp.__array_namespace_info__().capabilities()
    kinds = {repr(d).rsplit("(", 1)[0] for d in xp.devices()}
    lacking = {k for k in kinds for op in ("linalg_lu", "linalg_solve", "linalg_cholesky",
                                           "linalg_eigh", "linalg_svd", "linalg_qr")
               if k not in xp.ops.op_info(op)["devices"]}
    assert set(caps["linalg host fallback"]) == lacking and "cpu" not in lacking


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("batch,n", SQUARE, ids=str)
def test_cholesky(ctx, rng, batch, n, dtype):
    a = spd(rng, batch, n, dtype)
    ref = np.linalg.cholesky(a.astype(np.float64))
    got = la.cholesky(arr(a, ctx))
    assert got.dtype == dtype and got.device == ctx
    close(got, ref, dtype, n)
    close(la.cholesky(arr(a, ctx), upper=True), np.swapaxes(ref, -1, -2), dtype, n)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("batch,n", SQUARE, ids=str)
def test_det_slogdet_inv_solve(ctx, rng, batch, n, dtype):
    a = well_conditioned(rng, batch, n, dtype)
    a64 = a.astype(np.float64)
    x = arr(a, ctx)
    sign, logdet = np.linalg.slogdet(a64)
    got = la.slogdet(x)
    close(got.sign, sign, dtype)
    close(got.logabsdet, logdet, dtype, n)
    got_det = la.det(x)
    assert got_det.shape == batch and got_det.dtype == dtype
    with np.errstate(over="ignore"):  # float32 determinants of 67 x 67 overflow in both
        np.testing.assert_allclose(got_det.asnumpy(), np.linalg.det(a), rtol=tol(dtype, n))
    close(la.inv(x), np.linalg.inv(a64), dtype, n)
    b = rng.standard_normal(batch + (n, 3)).astype(dtype)
    close(la.solve(x, arr(b, ctx)), np.linalg.solve(a64, b), dtype, n)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_det_of_permutations_and_singular(ctx, dtype):
    perm = np.eye(4, dtype=dtype)[[1, 0, 3, 2]]
    odd = np.eye(3, dtype=dtype)[[1, 2, 0]][[0, 2, 1]]
    assert la.det(arr(perm, ctx)).asnumpy() == 1.0
    assert la.det(arr(odd, ctx)).asnumpy() == -1.0
    singular = np.array([[1.0, 2.0], [2.0, 4.0]], dtype)
    assert la.det(arr(singular, ctx)).asnumpy() == 0.0
    s = la.slogdet(arr(singular, ctx))
    assert s.sign.asnumpy() == 0.0 and s.logabsdet.asnumpy() == -np.inf


def test_solve_broadcasting(ctx, rng):
    a = well_conditioned(rng, (2, 1), 4, np.float64)
    for b_shape, out_shape in [((4,), (2, 1, 4)), ((3, 4, 2), (2, 3, 4, 2)), ((4, 1), (2, 1, 4, 1)),
                               ((1, 4, 5), (2, 1, 4, 5))]:
        b = rng.standard_normal(b_shape)
        got = la.solve(arr(a, ctx), arr(b, ctx))
        ref = np.linalg.solve(a, b[..., None])[..., 0] if b.ndim == 1 else np.linalg.solve(a, b)
        assert got.shape == out_shape
        close(got, ref, np.float64, 4)
    # float32 with float64 promotes, integers are solved in float64
    got = la.solve(arr(a.astype(np.float32), ctx), arr(rng.standard_normal(4), ctx))
    assert got.dtype == np.float64
    assert la.inv(arr(np.array([[2, 0], [0, 4]], np.int32), ctx)).dtype == np.float64


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("batch,n", SQUARE, ids=str)
def test_eigh(ctx, rng, batch, n, dtype):
    a = spd(rng, batch, n, dtype) - 2 * n * np.eye(n, dtype=dtype)
    w_ref = np.linalg.eigvalsh(a.astype(np.float64))
    w, v = la.eigh(arr(a, ctx))
    scale = max(1.0, float(np.abs(w_ref).max(initial=0)))
    close(w, w_ref, dtype, n * scale)
    close(la.eigvalsh(arr(a, ctx)), w_ref, dtype, n * scale)
    v = v.asnumpy().astype(np.float64)
    close(v @ (w.asnumpy()[..., None] * np.swapaxes(v, -1, -2)), a, dtype, n * scale)
    close(np.swapaxes(v, -1, -2) @ v, np.broadcast_to(np.eye(n), batch + (n, n)), dtype, n)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("batch,m,n", RECT, ids=str)
@pytest.mark.parametrize("full", [True, False])
def test_svd(ctx, rng, batch, m, n, dtype, full):
    a = rng.standard_normal(batch + (m, n)).astype(dtype)
    u_ref, s_ref, vh_ref = np.linalg.svd(a.astype(np.float64), full_matrices=full)
    u, s, vh = la.svd(arr(a, ctx), full_matrices=full)
    assert u.shape == u_ref.shape and vh.shape == vh_ref.shape and s.dtype == dtype
    k = min(m, n)
    close(s, s_ref, dtype, max(m, n))
    close(la.svdvals(arr(a, ctx)), s_ref, dtype, max(m, n))
    u, vh = u.asnumpy().astype(np.float64), vh.asnumpy().astype(np.float64)
    # ||A - U S Vh|| <= 10 n eps ||A||: the reconstruction bound
    recon = (u[..., :, :k] * s.asnumpy()[..., None, :]) @ vh[..., :k, :]
    eps = np.finfo(dtype).eps
    norm = np.linalg.norm(a.astype(np.float64)) if a.size else 0.0
    assert np.linalg.norm(recon - a) <= 10 * max(m, n) * eps * max(norm, 1.0)
    close(np.swapaxes(u, -1, -2) @ u, np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] +
                                                       (u.shape[-1],) * 2), dtype, m)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("batch,m,n", RECT, ids=str)
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr(ctx, rng, batch, m, n, dtype, mode):
    a = rng.standard_normal(batch + (m, n)).astype(dtype)
    q_ref, r_ref = np.linalg.qr(a.astype(np.float64), mode=mode)
    q, r = la.qr(arr(a, ctx), mode=mode)
    assert q.shape == q_ref.shape and r.shape == r_ref.shape and q.dtype == dtype
    q, r = q.asnumpy().astype(np.float64), r.asnumpy()
    eps = np.finfo(dtype).eps
    norm = np.linalg.norm(a.astype(np.float64)) if a.size else 0.0
    assert np.linalg.norm(q @ r - a) <= 10 * max(m, n) * eps * max(norm, 1.0)
    assert np.all(np.tril(r, -1) == 0)
    close(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] +
                                                       (q.shape[-1],) * 2), dtype, m)
    # the factorization is unique up to signs: |R| matches NumPy's
    close(np.abs(r), np.abs(r_ref), dtype, max(m, n) * 10)


def test_linalg_errors_name_the_batch_index(ctx):
    singular = np.stack([np.eye(3), np.ones((3, 3)), np.eye(3)]).reshape(3, 3, 3)
    stack = np.stack([singular, singular])  # (2, 3, 3, 3): the first bad one is (0, 1)
    with pytest.raises(la.LinAlgError, match=r"inv: the matrix at batch index \(0, 1\) is "
                                             r"singular"):
        la.inv(arr(stack, ctx))
    with pytest.raises(la.LinAlgError, match="solve.*singular"):
        la.solve(arr(np.ones((2, 2)), ctx), arr(np.ones(2), ctx))
    not_pd = np.stack([np.eye(2), -np.eye(2)])
    with pytest.raises(la.LinAlgError, match=r"cholesky: the matrix at batch index \(1,\) is "
                                             r"not positive definite"):
        la.cholesky(arr(not_pd, ctx))
    nan = np.full((2, 2), np.nan)
    with pytest.raises(la.LinAlgError, match="svd.*did not converge"):
        la.svd(arr(nan, ctx))
    # LAPACK's syevd returns NaN for NaN input with info 0, as NumPy's eigh does: no error
    assert np.isnan(la.eigvalsh(arr(nan, ctx)).asnumpy()).all()
    with pytest.raises(ValueError):  # LinAlgError is a ValueError
        la.inv(arr(np.zeros((1, 1)), ctx))


def test_argument_errors(ctx):
    x = arr(np.eye(3), ctx)
    with pytest.raises(TypeError, match="cholesky: x must be an NDArray"):
        la.cholesky(np.eye(3))
    with pytest.raises(ValueError, match="det: x must be a stack of square matrices"):
        la.det(arr(np.ones((2, 3)), ctx))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        la.inv(arr(np.ones(3), ctx))
    with pytest.raises(TypeError, match="svd: x has dtype bool"):
        la.svd(arr(np.ones((2, 2), bool), ctx))
    with pytest.raises(ValueError, match="qr: mode must be"):
        la.qr(x, mode="r")
    with pytest.raises(ValueError, match="solve: x2 .* does not fit"):
        la.solve(x, arr(np.ones(4), ctx))
    with pytest.raises(ValueError, match="do not broadcast"):
        la.solve(arr(np.ones((2, 3, 3)), ctx), arr(np.ones((4, 3, 1)), ctx))


def test_eigh_nan_input_reported_as_not_converged_gives_nan(ctx):
    """cuSOLVER reports a matrix holding NaN as not converged where LAPACK returns NaN with info
    0: _eigh_info makes every device answer as LAPACK does, and keeps real failures."""
    from dlarray.linalg import _eigh_info
    a = np.stack([np.full((2, 2), np.nan), np.eye(2)])
    w = xp.asarray(np.ones((2, 2)), device=ctx)
    info = _eigh_info(xp.asarray(a, device=ctx), xp.asarray(np.array([3, 0]), device=ctx), (w,))
    np.testing.assert_array_equal(info.asnumpy(), [0, 0])
    np.testing.assert_array_equal(w.asnumpy(), [[np.nan, np.nan], [1, 1]])
    kept = _eigh_info(xp.asarray(a, device=ctx), xp.asarray(np.array([0, 2]), device=ctx), (w,))
    np.testing.assert_array_equal(kept.asnumpy(), [0, 2])  # finite and not converged: an error
