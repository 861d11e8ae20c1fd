"""dlarray.autodiff.fft (fft, ifft, rfft, irfft nodes) and dlarray.autodiff.linalg.matmul: values
against NumPy and gradients against float64 central differences of NumPy's own transforms, on the
NumPy executor and every device's (float32)."""
import numpy as np
import pytest

import dlarray
from dlarray import autodiff as ad
from dlarray.autodiff import fft as adfft
from dlarray.autodiff import linalg as adla

CONTEXTS = [None] + list(dlarray.devices())
IDS = [repr(c) for c in CONTEXTS]


def sum_all(node, ndim):
    for _ in range(max(ndim, 1)):
        node = ad.reducesumaxiszero_op(node)
    return node


def numeric_gradient(f, x, r, eps=1e-6):
    """d/dx sum(f(x) * r) by central differences, in float64."""
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        plus, minus = x.copy(), x.copy()
        plus[i] += eps
        minus[i] -= eps
        grad[i] = (np.sum(f(plus) * r) - np.sum(f(minus) * r)) / (2 * eps)
    return grad


def numpy_transform(kind, n, axis, norm):
    """NumPy's transform on the pair layout: complex values as a trailing axis of 2."""
    def f(x):
        if kind != "rfft":
            x = x[..., 0] + 1j * x[..., 1]
        y = getattr(np.fft, kind)(x, n=n, axis=axis, norm=norm)
        return y if kind == "irfft" else np.stack([y.real, y.imag], axis=-1)
    return f


def check(ctx, rng, build, reference, shapes):
    """build(*nodes)'s value and the gradients of sum(value * r) against NumPy."""
    values = [rng.standard_normal(s) for s in shapes]
    nodes = [ad.Variable("x%d" % i) for i in range(len(shapes))]
    out = build(*nodes)
    expected = reference(*values)
    r = rng.standard_normal(expected.shape)
    weights = ad.Variable("r")
    loss = sum_all(out * weights, expected.ndim)
    feed = {weights: r, **dict(zip(nodes, values))}
    got = ad.Executor([out] + ad.gradients(loss, nodes), ctx=ctx).run(
        feed, convert_to_numpy_ret_vals=True)
    scale = max(1.0, np.abs(expected).max())
    np.testing.assert_allclose(got[0], expected, rtol=1e-4, atol=1e-4 * scale)
    for i, (value, grad) in enumerate(zip(values, got[1:])):
        def partial(v, i=i):
            return reference(*values[:i], v, *values[i + 1:])
        numeric = numeric_gradient(partial, value, r)
        assert grad.shape == value.shape
        np.testing.assert_allclose(grad, numeric, rtol=1e-3,
                                   atol=1e-4 * max(1.0, np.abs(numeric).max()),
                                   err_msg="gradient of input %d" % i)


# (kind, input shape in the pair layout where complex, n, axis, norm): odd and even lengths,
# padding and cutting to n, axis 0 and -1, every norm mode, one-element transforms.
CASES = [
    ("fft", (3, 5, 2), None, -1, "backward"),
    ("fft", (4, 3, 2), 6, 0, "ortho"),
    ("fft", (1, 2), None, -1, "forward"),
    ("ifft", (2, 7, 2), 4, -1, "ortho"),
    ("ifft", (5, 2), None, 0, "backward"),
    ("rfft", (3, 6), None, -1, "backward"),
    ("rfft", (5, 3), 7, 0, "forward"),
    ("rfft", (1,), None, -1, "ortho"),
    ("irfft", (3, 4, 2), None, -1, "backward"),
    ("irfft", (2, 5, 2), 9, -1, "ortho"),
    ("irfft", (4, 3, 2), 5, 0, "forward"),
    ("irfft", (3, 2), 2, -1, "backward"),
]


@pytest.mark.parametrize("exec_ctx", CONTEXTS, ids=IDS)
@pytest.mark.parametrize("kind, shape, n, axis, norm", CASES, ids=str)
def test_transform_gradients(exec_ctx, rng, kind, shape, n, axis, norm):
    check(exec_ctx, rng, lambda x: getattr(adfft, kind)(x, n=n, axis=axis, norm=norm),
          numpy_transform(kind, n, axis, norm), [shape])


@pytest.mark.parametrize("exec_ctx", CONTEXTS, ids=IDS)
def test_power_spectrum_loss(exec_ctx, rng):
    """sum |rfft(x)|^2 written with graph ops on the pairs: its gradient (Parseval) is known."""
    x = ad.Variable("x")
    y = adfft.rfft(x)
    loss = sum_all(y * y, 3)
    value = rng.standard_normal((2, 8))
    grad, = ad.Executor(ad.gradients(loss, [x]), ctx=exec_ctx).run(
        {x: value}, convert_to_numpy_ret_vals=True)
    # loss = sum over bins 0..4 of 8 of |X_k|^2 = x^T Re(F^H W F) x, W selecting those bins
    f = np.fft.fft(np.eye(8))
    w = np.array([1, 1, 1, 1, 1, 0, 0, 0])
    expected = 2 * np.real(np.conj(f).T @ (w[:, None] * f)) @ value.T
    np.testing.assert_allclose(grad, expected.T, rtol=1e-4, atol=1e-4)


def test_errors():
    x = ad.Variable("x")
    with pytest.raises(ValueError, match="norm must be 'backward', 'ortho' or 'forward'"):
        adfft.fft(x, norm="none")
    with pytest.raises(ValueError, match="n must be positive"):
        adfft.rfft(x, n=0)
    with pytest.raises(TypeError):
        adfft.fft(x, axis=1.5)
    with pytest.raises(ValueError, match=r"trailing axis of 2 .*\(3, 4\)"):
        ad.Executor([adfft.fft(x)]).run({x: np.ones((3, 4))})
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        ad.Executor([adfft.rfft(x, axis=2)]).run({x: np.ones((3, 4))})
    with pytest.raises(ValueError, match="n must be positive.*length 1"):
        ad.Executor([adfft.irfft(x)]).run({x: np.ones((1, 2))})


# (a shape, b shape): batches alike, broadcast either way, a batch of one, 1x1 matrices.
MATMUL_CASES = [((2, 3, 4), (2, 4, 5)), ((3, 4), (2, 4, 1)), ((2, 1, 3, 2), (4, 2, 3)),
                ((1, 1), (1, 1)), ((1, 2, 2), (3, 2, 2))]


@pytest.mark.parametrize("exec_ctx", CONTEXTS, ids=IDS)
@pytest.mark.parametrize("a_shape, b_shape", MATMUL_CASES, ids=str)
def test_batched_matmul_gradients(exec_ctx, rng, a_shape, b_shape):
    check(exec_ctx, rng, adla.matmul, np.matmul, [a_shape, b_shape])


def test_batched_matmul_errors():
    a, b = ad.Variable("a"), ad.Variable("b")
    with pytest.raises(ValueError, match="stacks of matrices"):
        ad.Executor([adla.matmul(a, b)]).run({a: np.ones(3), b: np.ones((3, 2))})
    with pytest.raises(ValueError, match="inner dimensions differ"):
        ad.Executor([adla.matmul(a, b)]).run({a: np.ones((2, 3)), b: np.ones((2, 2))})
    with pytest.raises(ValueError, match="do not broadcast"):
        ad.Executor([adla.matmul(a, b)]).run({a: np.ones((2, 2, 3)), b: np.ones((3, 3, 2))})
