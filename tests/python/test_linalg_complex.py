"""dlarray.linalg on complex64/complex128 input against NumPy on every device: the factorizations
(cholesky, det, slogdet, inv, solve, eigh, eigvalsh, svd, svdvals, qr), the functions composed
from them (pinv, matrix_rank, matrix_norm, matrix_power) and the composed ones (tensordot,
vecdot, cross, trace, diagonal, outer, matmul); stacks, odd sizes, 0x0 and 1x1, batches that run
on several threads, reconstruction bounds and LinAlgError naming the batch index."""
import numpy as np
import pytest

import dlarray as xp
from dlarray import linalg as la

DTYPES = [np.complex64, np.complex128]
# (batch shape, n): 1x1, odd sizes, a batch large enough to run on several threads, empties.
SQUARE = [((), 1), ((), 5), ((3,), 4), ((2, 3), 7), ((), 67), ((130,), 9), ((0,), 3), ((2,), 0),
          ((), 0)]
RECT = [((), 1, 1), ((), 5, 3), ((), 3, 5), ((4,), 6, 2), ((2, 2), 2, 7), ((), 70, 33),
        ((0,), 3, 2), ((2,), 0, 3), ((), 4, 0)]
ids_dtype = lambda d: np.dtype(d).name  # noqa: E731


def real_of(dtype):
    return np.float32 if dtype == np.complex64 else np.float64


def tol(dtype, n=1):
    return (2e-4 if np.dtype(dtype).itemsize in (4, 8) and dtype != np.float64 else 1e-10) * \
        max(n, 1)


def crandn(rng, shape, dtype):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def well_conditioned(rng, batch, n, dtype):
    return (crandn(rng, batch + (n, n), np.complex128) + n * np.eye(n)).astype(dtype)


def hpd(rng, batch, n, dtype):
    """Hermitian positive definite matrices."""
    a = crandn(rng, batch + (n, n), np.complex128)
    return (a @ ct(a) + n * np.eye(n)).astype(dtype)


def ct(a):
    """The conjugate transpose of each matrix."""
    return np.conj(np.swapaxes(a, -1, -2))


def arr(a, ctx):
    return xp.asarray(a, device=ctx)


def close(got, ref, dtype, n=1):
    got = got.asnumpy() if hasattr(got, "asnumpy") else np.asarray(got)
    assert got.shape == np.shape(ref), (got.shape, np.shape(ref))
    np.testing.assert_allclose(got, ref, rtol=tol(dtype, n), atol=tol(dtype, n))


def eye_stack(batch, n):
    return np.broadcast_to(np.eye(n), batch + (n, n))


def within_bound(err, a, n, dtype):
    """||err|| <= 10 n eps ||A||: the issue's reconstruction bound (eps of the real part)."""
    norm = np.linalg.norm(a.astype(np.complex128)) if a.size else 0.0
    return np.linalg.norm(err) <= 10 * max(n, 1) * np.finfo(dtype).eps * max(norm, 1.0)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids_dtype)
@pytest.mark.parametrize("batch,n", SQUARE, ids=str)
def test_cholesky(ctx, rng, batch, n, dtype):
    a = hpd(rng, batch, n, dtype)
    ref = np.linalg.cholesky(a.astype(np.complex128))
    # only the lower triangle is read: garbage above it changes nothing (as NumPy)
    garbage = a + np.triu(crandn(rng, a.shape, dtype), 1)
    got = la.cholesky(arr(garbage, ctx))
    assert got.dtype == dtype and got.device == ctx
    close(got, ref, dtype, n)
    upper = la.cholesky(arr(a, ctx), upper=True)  # U = L^H, conjugated
    assert upper.dtype == dtype
    close(upper, ct(ref), dtype, n)
    lo = got.asnumpy().astype(np.complex128)
    assert within_bound(lo @ ct(lo) - a, a, n, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids_dtype)
@pytest.mark.parametrize("batch,n", SQUARE, ids=str)
def test_det_slogdet_inv_solve(ctx, rng, batch, n, dtype):
    a = well_conditioned(rng, batch, n, dtype)
    a128 = a.astype(np.complex128)
    x = arr(a, ctx)
    sign, logdet = np.linalg.slogdet(a128)
    got = la.slogdet(x)
    assert got.sign.dtype == dtype and got.logabsdet.dtype == real_of(dtype)
    assert got.sign.shape == batch and got.logabsdet.shape == batch
    close(got.sign, sign, dtype, n)
    close(got.logabsdet, logdet, dtype, n)
    got_det = la.det(x)
    assert got_det.shape == batch and got_det.dtype == dtype
    with np.errstate(over="ignore", invalid="ignore"):  # complex64 dets of 67 x 67 overflow
        ref = np.linalg.det(a)
        finite = np.isfinite(ref)
        np.testing.assert_allclose(got_det.asnumpy()[finite], ref[finite], rtol=tol(dtype, n))
    inv = la.inv(x)
    assert inv.dtype == dtype
    close(inv, np.linalg.inv(a128), dtype, n)
    b = crandn(rng, batch + (n, 3), dtype)
    solved = la.solve(x, arr(b, ctx))
    assert solved.dtype == dtype
    close(solved, np.linalg.solve(a128, b), dtype, n)
    assert within_bound(a128 @ solved.asnumpy() - b, b, n, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids_dtype)
def test_det_exact_values_and_singular(ctx, dtype):
    """det(i I_n) = i^n, a permutation's sign survives complex scaling, and a singular matrix
    gives det 0, sign 0 and logabsdet -inf (NumPy's answers)."""
    for n in (1, 2, 3, 4, 5):
        got = la.det(arr(1j * np.eye(n, dtype=dtype), ctx)).asnumpy()
        np.testing.assert_allclose(got, 1j ** n, atol=1e-6)
    odd = (np.eye(3)[[1, 0, 2]] * (1 + 1j)).astype(dtype)  # -(1+i)^3
    np.testing.assert_allclose(la.det(arr(odd, ctx)).asnumpy(), -(1 + 1j) ** 3, rtol=1e-6)
    s = la.slogdet(arr(odd, ctx))
    np.testing.assert_allclose(s.sign.asnumpy(), -(1 + 1j) ** 3 / abs((1 + 1j) ** 3), rtol=1e-6)
    np.testing.assert_allclose(s.logabsdet.asnumpy(), 3 * np.log(np.sqrt(2)), rtol=1e-6)
    singular = np.array([[1 + 1j, 2 + 2j], [1j, 2j]], dtype)
    assert la.det(arr(singular, ctx)).asnumpy() == 0
    s = la.slogdet(arr(singular, ctx))
    assert s.sign.asnumpy() == 0 and s.logabsdet.asnumpy() == -np.inf


def test_solve_promotes_and_broadcasts(ctx, rng):
    a = well_conditioned(rng, (2, 1), 4, np.complex64)
    b = rng.standard_normal((3, 4, 2))  # float64 with complex64: complex128 (NumPy's rule)
    got = la.solve(arr(a, ctx), arr(b, ctx))
    assert got.dtype == np.complex128 and got.shape == (2, 3, 4, 2)
    close(got, np.linalg.solve(a.astype(np.complex128), b), np.complex128, 4 * 1e5)
    vec = crandn(rng, (4,), np.complex128)
    got = la.solve(arr(a.astype(np.complex128), ctx), arr(vec, ctx))
    assert got.shape == (2, 1, 4)
    close(got, np.linalg.solve(a.astype(np.complex128), vec[..., None])[..., 0], np.complex128, 4)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids_dtype)
@pytest.mark.parametrize("batch,n", SQUARE, ids=str)
def test_eigh(ctx, rng, batch, n, dtype):
    a = hpd(rng, batch, n, dtype) - 2 * n * np.eye(n, dtype=dtype)  # indefinite
    w_ref = np.linalg.eigvalsh(a.astype(np.complex128))
    # only the lower triangle is read (NumPy's eigh too): the upper one may hold anything
    garbage = a + np.triu(crandn(rng, a.shape, dtype), 1)
    w, v = la.eigh(arr(garbage, ctx))
    assert w.dtype == real_of(dtype) and v.dtype == dtype
    scale = max(1.0, float(np.abs(w_ref).max(initial=0)))
    close(w, w_ref, dtype, n * scale)
    vals = la.eigvalsh(arr(garbage, ctx))
    assert vals.dtype == real_of(dtype)
    close(vals, w_ref, dtype, n * scale)
    v = v.asnumpy().astype(np.complex128)
    close(v @ (w.asnumpy()[..., None] * ct(v)), a, dtype, n * scale)  # A = V diag(w) V^H
    close(ct(v) @ v, eye_stack(batch, n), dtype, n)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids_dtype)
@pytest.mark.parametrize("batch,m,n", RECT, ids=str)
@pytest.mark.parametrize("full", [True, False])
def test_svd(ctx, rng, batch, m, n, dtype, full):
    a = crandn(rng, batch + (m, n), dtype)
    u_ref, s_ref, vh_ref = np.linalg.svd(a.astype(np.complex128), full_matrices=full)
    u, s, vh = la.svd(arr(a, ctx), full_matrices=full)
    assert u.shape == u_ref.shape and vh.shape == vh_ref.shape and s.shape == s_ref.shape
    assert u.dtype == dtype and vh.dtype == dtype and s.dtype == real_of(dtype)
    k = min(m, n)
    close(s, s_ref, dtype, max(m, n))
    vals = la.svdvals(arr(a, ctx))
    assert vals.dtype == real_of(dtype)
    close(vals, s_ref, dtype, max(m, n))
    u, vh = u.asnumpy().astype(np.complex128), vh.asnumpy().astype(np.complex128)
    recon = (u[..., :, :k] * s.asnumpy()[..., None, :]) @ vh[..., :k, :]  # Vh is V^H
    assert within_bound(recon - a, a, max(m, n), dtype)
    close(ct(u) @ u, eye_stack(u.shape[:-2], u.shape[-1]), dtype, m)
    close(vh @ ct(vh), eye_stack(vh.shape[:-2], vh.shape[-2]), dtype, n)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids_dtype)
@pytest.mark.parametrize("batch,m,n", RECT, ids=str)
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr(ctx, rng, batch, m, n, dtype, mode):
    a = crandn(rng, batch + (m, n), dtype)
    q_ref, r_ref = np.linalg.qr(a.astype(np.complex128), mode=mode)
    q, r = la.qr(arr(a, ctx), mode=mode)
    assert q.shape == q_ref.shape and r.shape == r_ref.shape
    assert q.dtype == dtype and r.dtype == dtype
    q, r = q.asnumpy().astype(np.complex128), r.asnumpy()
    assert within_bound(q @ r - a, a, max(m, n), dtype)
    assert np.all(np.tril(r, -1) == 0)
    close(ct(q) @ q, eye_stack(q.shape[:-2], q.shape[-1]), dtype, m)
    # unique up to a unit complex factor per row of R: |R| matches NumPy's
    close(np.abs(r), np.abs(r_ref), dtype, max(m, n) * 10)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids_dtype)
@pytest.mark.parametrize("batch,m,n", [((), 1, 1), ((), 5, 3), ((2, 3), 4, 7), ((), 0, 3),
                                       ((3,), 2, 0), ((40,), 6, 5)], ids=str)
def test_pinv_rank_norms(ctx, rng, batch, m, n, dtype):
    a = crandn(rng, batch + (m, n), dtype)
    a128 = a.astype(np.complex128)
    x = arr(a, ctx)
    p = la.pinv(x)
    assert p.dtype == dtype and p.shape == batch + (n, m)
    close(p, np.linalg.pinv(a128), dtype, 10 * max(m, n))
    rank = la.matrix_rank(x)
    assert rank.dtype == np.int64
    np.testing.assert_array_equal(rank.asnumpy(), np.linalg.matrix_rank(a128))
    if min(m, n) == 0:
        return  # NumPy has no norm of an empty matrix for ord 2, -2, nuc
    for ord in ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
        got = la.matrix_norm(x, ord=ord)
        assert got.dtype == real_of(dtype) and got.shape == batch
        close(got, np.linalg.matrix_norm(a128, ord=ord), dtype, max(m, n))
    kept = la.matrix_norm(x, ord="nuc", keepdims=True)
    assert kept.shape == batch + (1, 1)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids_dtype)
def test_rank_deficient(ctx, rng, dtype):
    """A complex rank-1 matrix u v^H: rank 1, pinv against NumPy's, and rtol as an array."""
    u, v = crandn(rng, (6, 1), np.complex128), crandn(rng, (4, 1), np.complex128)
    a = np.stack([u @ ct(v), np.zeros((6, 4)), crandn(rng, (6, 4), np.complex128)]).astype(dtype)
    x = arr(a, ctx)
    np.testing.assert_array_equal(la.matrix_rank(x).asnumpy(), [1, 0, 4])
    close(la.pinv(x), np.linalg.pinv(a.astype(np.complex128), rcond=4 * 6 * np.finfo(dtype).eps),
          dtype, 10)
    rtol = arr(np.array([0.5, 0.5, 2.0], real_of(dtype)), ctx)
    np.testing.assert_array_equal(la.matrix_rank(x, rtol=rtol).asnumpy(), [1, 0, 0])


@pytest.mark.parametrize("dtype", DTYPES, ids=ids_dtype)
def test_matrix_power(ctx, rng, dtype):
    a = well_conditioned(rng, (2, 3), 5, dtype) / 5
    a128 = a.astype(np.complex128)
    for n in (0, 1, 2, 3, 7, -1, -2):
        got = la.matrix_power(arr(a, ctx), n)
        assert got.dtype == dtype
        close(got, np.linalg.matrix_power(a128, n), dtype, 50)
    assert la.matrix_power(arr(np.zeros((0, 0), dtype), ctx), 3).shape == (0, 0)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids_dtype)
def test_composed_functions(ctx, rng, dtype):
    """vecdot conjugates x1; tensordot, matmul, cross, outer, trace and diagonal of complex
    arrays match NumPy, across the sizes where matmul switches to real GEMMs of the parts."""
    a = crandn(rng, (3, 1, 1025), dtype)
    b = crandn(rng, (4, 1025), dtype)
    got = la.vecdot(arr(a, ctx), arr(b, ctx))
    assert got.dtype == dtype and got.shape == (3, 4)
    close(got, np.sum(np.conj(a) * b, axis=-1), dtype, 1025)
    for big in (5, 130):  # below and above the size where complex matmul runs as real GEMMs
        m1, m2 = crandn(rng, (2, big, 7), dtype), crandn(rng, (7, 3, big), dtype)
        close(la.tensordot(arr(m1, ctx), arr(m2, ctx), axes=([1, 2], [2, 0])),
              np.tensordot(m1, m2, axes=([1, 2], [2, 0])), dtype, big)
        sq = crandn(rng, (3, big, big), dtype)
        close(la.matmul(arr(sq, ctx), arr(sq, ctx)), sq @ sq, dtype, big)
    c1, c2 = crandn(rng, (5, 3), dtype), crandn(rng, (1, 3), dtype)
    close(la.cross(arr(c1, ctx), arr(c2, ctx)), np.cross(c1, c2), dtype)
    close(la.cross(arr(c1.T, ctx), arr(c2.T, ctx), axis=0), np.cross(c1.T, c2.T, axis=0), dtype)
    v1, v2 = crandn(rng, (7,), dtype), crandn(rng, (1,), dtype)
    close(la.outer(arr(v1, ctx), arr(v2, ctx)), np.outer(v1, v2), dtype)
    m = crandn(rng, (2, 3, 4, 6), dtype)
    for offset in (-5, -1, 0, 2, 6):
        close(la.diagonal(arr(m, ctx), offset=offset), np.diagonal(m, offset, -2, -1), dtype)
        got = la.trace(arr(m, ctx), offset=offset)
        assert got.dtype == dtype
        close(got, np.trace(m, offset, -2, -1), dtype, 6)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids_dtype)
def test_errors_name_the_batch_index(ctx, dtype):
    eye = np.eye(3, dtype=dtype)
    singular = np.stack([eye, (1 + 2j) * np.ones((3, 3), dtype), 1j * eye])
    stack = np.stack([singular, singular])  # (2, 3, 3, 3): the first bad one is (0, 1)
    with pytest.raises(la.LinAlgError, match=r"inv: the matrix at batch index \(0, 1\) is "
                                             r"singular \(2 of 6 matrices\)"):
        la.inv(arr(stack, ctx))
    with pytest.raises(la.LinAlgError, match=r"solve: the matrix at batch index \(1,\) is "
                                             r"singular"):
        la.solve(arr(singular, ctx), arr(np.ones((3, 3, 1), dtype), ctx))
    # Hermitian but indefinite: -I; and i I, whose diagonal is not real positive
    not_pd = np.stack([eye, eye, -eye, 1j * eye])
    with pytest.raises(la.LinAlgError, match=r"cholesky: the matrix at batch index \(2,\) is "
                                             r"not positive definite"):
        la.cholesky(arr(not_pd, ctx))
    with pytest.raises(la.LinAlgError, match=r"cholesky: the matrix at batch index \(0,\)"):
        la.cholesky(arr(not_pd[3:], ctx))
    nan = np.stack([eye, np.full((3, 3), complex(np.nan, 1), dtype)])
    with pytest.raises(la.LinAlgError, match=r"svd: the matrix at batch index \(1,\) did not "
                                             r"converge"):
        la.svd(arr(nan, ctx))
    with pytest.raises(la.LinAlgError, match="svdvals.*did not converge"):
        la.svdvals(arr(nan, ctx))
    assert np.isnan(la.eigvalsh(arr(nan, ctx)).asnumpy()[1]).all()  # NaN, as NumPy's eigh


def test_argument_errors(ctx):
    with pytest.raises(TypeError, match="svd: x has dtype float16; linalg supports float32, "
                                        "float64, complex64 and complex128"):
        la.svd(arr(np.ones((2, 2), np.float16), ctx))
    with pytest.raises(ValueError, match="eigh: x must be a stack of square matrices"):
        la.eigh(arr(np.ones((2, 3), np.complex64), ctx))
    other = [d for d in xp.devices() if d != ctx]
    if other:
        with pytest.raises(ValueError, match="solve: x1 is on"):
            la.solve(arr(np.eye(2, dtype=np.complex64), ctx),
                     arr(np.ones(2, np.complex64), other[0]))


def test_primitives_dtypes(ctx):
    """The ops themselves (through the host fallback where the device has no kernel): real
    eigenvalues and singular values for complex matrices, int64 info, and a clear error for
    mixed dtypes."""
    from dlarray._linalg_primitives import run
    a = arr(np.eye(2, dtype=np.complex64).reshape(1, 2, 2), ctx)
    w, v, info = run("linalg_eigh", [a], 1)
    assert (w.dtype, v.dtype, info.dtype) == (np.float32, np.complex64, np.int64)
    u, s, vh, info = run("linalg_svd", [arr(np.ones((1, 2, 3), np.complex128), ctx)], 1, 0)
    assert (u.dtype, s.dtype, vh.dtype) == (np.complex128, np.float64, np.complex128)
    assert s.shape == (1, 2) and vh.shape == (1, 2, 3)
    with pytest.raises(TypeError, match="linalg_solve: the inputs' dtypes differ"):
        run("linalg_solve", [a, arr(np.ones((1, 2, 1), np.complex128), ctx)])


# Every dtype on small stacks (batched on cuda: 300 x 3; looped: 1 x 40), two at the size line.
BATCHED_CASES = [(b, n, d) for d in [np.float32, np.float64] + DTYPES
                 for b, n in [((300,), 3), ((1,), 40)]] + \
    [((2,), 256, np.complex64), ((2,), 257, np.complex128), ((2,), 256, np.float64),
     ((2,), 257, np.float32)]


@pytest.mark.parametrize("batch,n,dtype", BATCHED_CASES,
                         ids=lambda v: ids_dtype(v) if isinstance(v, type) else str(v))
def test_stacks_either_side_of_the_batched_path(ctx, rng, batch, n, dtype):
    """On cuda, stacks of >= 2 matrices of <= 256 rows run LU, solve and Cholesky as one batched
    call (cuBLAS getrfBatched/getrsBatched, cuSOLVER potrfBatched), others matrix by matrix:
    both sides of that line, real and complex, with a singular / indefinite matrix last."""
    cplx = np.dtype(dtype).kind == "c"
    make = well_conditioned if cplx else (
        lambda r, b, k, d: (r.standard_normal(b + (k, k)) + k * np.eye(k)).astype(d))
    a = make(rng, batch, n, dtype)
    wide = np.complex128 if cplx else np.float64
    x = arr(a, ctx)
    b = (rng.standard_normal(batch + (n, 2)) * (1 + 1j if cplx else 1)).astype(dtype)
    close(la.solve(x, arr(b, ctx)), np.linalg.solve(a.astype(wide), b), dtype, n)
    close(la.inv(x), np.linalg.inv(a.astype(wide)), dtype, n)
    sign, logdet = np.linalg.slogdet(a.astype(wide))
    got = la.slogdet(x)
    close(got.sign, sign, dtype, n)
    close(got.logabsdet, logdet, dtype, n)
    h = a @ np.conj(np.swapaxes(a, -1, -2)).astype(dtype)
    close(la.cholesky(arr(h, ctx)), np.linalg.cholesky(h.astype(wide)), dtype, n * n)
    last = batch[0] - 1
    bad = a.copy()
    bad[-1] = 0
    with pytest.raises(la.LinAlgError, match=r"solve: the matrix at batch index \(%d,\)" % last):
        la.solve(arr(bad, ctx), arr(b, ctx))
    h[-1] = -np.eye(n, dtype=dtype)
    with pytest.raises(la.LinAlgError, match=r"cholesky: the matrix at batch index \(%d,\)"
                                             % last):
        la.cholesky(arr(h, ctx))
