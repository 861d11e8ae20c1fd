"""Gradients of dlarray.autodiff.linalg's nodes (solve, inv, cholesky, det, logabsdet) against
central finite differences, on every device's executor (float32), along random directions."""
import numpy as np
import pytest

from dlarray import autodiff as ad
from dlarray.autodiff import linalg as adla


def weighted_sum(node, weights, ndim, feed):
    """sum(node * weights) as a graph (weights fed as a Variable)."""
    r = ad.Variable("r")
    feed[r] = weights
    node = node * r
    for _ in range(ndim):
        node = ad.reducesumaxiszero_op(node)
    return node


def directional_check(loss, grads, variables, feed, ctx, rng, symmetric=None, eps=1e-3):
    """<grad, V> against (loss(x + eps V) - loss(x - eps V)) / (2 eps) for a random V."""
    executor = ad.Executor([loss] + grads, ctx=ctx)
    values = executor.run(feed, convert_to_numpy_ret_vals=True)
    loss_only = ad.Executor([loss], ctx=ctx)
    for var, grad in zip(variables, values[1:]):
        assert grad.shape == feed[var].shape
        v = rng.standard_normal(feed[var].shape).astype(np.float32)
        if var is symmetric:
            v = v + np.swapaxes(v, -1, -2)
        base = feed[var].copy()
        feed[var] = base + eps * v
        plus = float(np.sum(loss_only.run(feed, convert_to_numpy_ret_vals=True)[0]))
        feed[var] = base - eps * v
        minus = float(np.sum(loss_only.run(feed, convert_to_numpy_ret_vals=True)[0]))
        feed[var] = base
        numeric = (plus - minus) / (2 * eps)
        analytic = float(np.sum(grad.astype(np.float64) * v))
        assert abs(numeric - analytic) <= 2e-2 * max(1.0, abs(analytic)), (var, numeric, analytic)


def matrix(rng, shape):
    n = shape[-1]
    return (rng.standard_normal(shape) + 3 * np.eye(n)).astype(np.float32)


@pytest.mark.parametrize("b_shape", [(2, 3, 2), (2, 3, 1)], ids=str)
def test_solve_gradient(ctx, rng, b_shape):
    a, b = ad.Variable("a"), ad.Variable("b")
    feed = {a: matrix(rng, (2, 3, 3)), b: rng.standard_normal(b_shape).astype(np.float32)}
    r = rng.standard_normal(b_shape).astype(np.float32)
    loss = weighted_sum(adla.solve(a, b), r, 3, feed)
    directional_check(loss, ad.gradients(loss, [a, b]), [a, b], feed, ctx, rng)


def test_inv_gradient(ctx, rng):
    a = ad.Variable("a")
    feed = {a: matrix(rng, (2, 4, 4))}
    loss = weighted_sum(adla.inv(a), rng.standard_normal((2, 4, 4)).astype(np.float32), 3, feed)
    directional_check(loss, ad.gradients(loss, [a]), [a], feed, ctx, rng)


def test_cholesky_gradient(ctx, rng):
    a = ad.Variable("a")
    m = rng.standard_normal((2, 4, 4))
    feed = {a: (m @ np.swapaxes(m, -1, -2) + 4 * np.eye(4)).astype(np.float32)}
    r = np.tril(rng.standard_normal((2, 4, 4))).astype(np.float32)
    loss = weighted_sum(adla.cholesky(a), r, 3, feed)
    directional_check(loss, ad.gradients(loss, [a]), [a], feed, ctx, rng, symmetric=a)


@pytest.mark.parametrize("which", ["det", "logabsdet"])
def test_det_gradients(ctx, rng, which):
    a = ad.Variable("a")
    feed = {a: matrix(rng, (3, 3, 3))}
    r = rng.standard_normal(3).astype(np.float32)
    loss = weighted_sum(getattr(adla, which)(a), r, 1, feed)
    directional_check(loss, ad.gradients(loss, [a]), [a], feed, ctx, rng)
