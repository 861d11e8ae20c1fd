"""Custom layers with CUDA kernels compiled at run time, the way seed 003 writes them for MXNet:
``CustomOp`` subclasses (MXNet's ``NDArrayOp``) whose ``forward_gpu`` / ``backward_gpu`` push
``dlarray.rtc.Rtc`` kernels, with NumPy twins (``forward_numpy`` / ``backward_numpy``) that CPU
and NumPy executors run (``examples/mnist.py --model reorg``).

- :class:`Reorg`: YOLO v2's reorg (space-to-depth) with stride 2, (N, C, H, W) -> (N, 4C, H/2,
  W/2), in the seed's channel order: output channel ``4c + 2dy + dx`` holds the pixels
  ``(2t + dy, 2s + dx)`` of input channel ``c``. One thread per element both ways; the
  backward writes every input element (the seed's ``reorg_grad`` writes row ``j`` where it
  means rows ``2j`` and ``2j + 1``).
- :class:`Flatten`: (N, ...) -> (N, size / N), a copy (an ElementwiseKernel on a GPU).
- :class:`SoftmaxCrossEntropy`: the mean softmax cross-entropy of logits and one-hot labels,
  the loss ``dlarray.autodiff.softmaxcrossentropy_op`` computes, by one Rtc kernel forward and
  one backward (``(softmax(x) - labels) * dloss / N``).
"""

from typing import Any, Optional

import numpy as np
import numpy.typing as npt

import dlarray
import dlarray.rtc as rtc
from dlarray.autodiff import CustomOp

Floats = npt.NDArray[np.floating[Any]]  # the NumPy executor's arrays (float32 or float64)

THREADS = 256

REORG_FORWARD = r"""
const int yw = y_dims[3], yh = y_dims[2];
const int total = y_dims[0] * y_dims[1] * yh * yw;
const int idx = blockIdx.x * blockDim.x + threadIdx.x;
if (idx >= total) return;
const int s = idx % yw;
const int t = (idx / yw) % yh;
const int q = (idx / (yw * yh)) % 4;          // 2 dy + dx
const int nc = idx / (4 * yw * yh);           // input image and channel
y[idx] = x[(nc * x_dims[2] + 2 * t + (q >> 1)) * x_dims[3] + 2 * s + (q & 1)];
"""

REORG_BACKWARD = r"""
const int xw = gx_dims[3], xh = gx_dims[2];
const int total = gx_dims[0] * gx_dims[1] * xh * xw;
const int idx = blockIdx.x * blockDim.x + threadIdx.x;
if (idx >= total) return;
const int w = idx % xw;
const int h = (idx / xw) % xh;
const int nc = idx / (xw * xh);
const int q = 2 * (h & 1) + (w & 1);
gx[idx] = gy[((nc * 4 + q) * gy_dims[2] + (h >> 1)) * gy_dims[3] + (w >> 1)];
"""

SOFTMAX_XENT_FORWARD = r"""
__shared__ float partial[%d];
const int rows = x_dims[0], cols = x_dims[1];
float acc = 0.0f;
for (int r = threadIdx.x; r < rows; r += blockDim.x) {
  const float* xr = x + (long long)r * cols;
  const float* lr = label + (long long)r * cols;
  float m = xr[0];
  for (int j = 1; j < cols; ++j) m = fmaxf(m, xr[j]);
  float sum = 0.0f;
  for (int j = 0; j < cols; ++j) sum += expf(xr[j] - m);
  const float lse = m + logf(sum);
  for (int j = 0; j < cols; ++j) acc -= lr[j] * (xr[j] - lse);
}
partial[threadIdx.x] = acc;
__syncthreads();
for (int half = blockDim.x / 2; half > 0; half /= 2) {
  if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
  __syncthreads();
}
if (threadIdx.x == 0) loss[0] = partial[0] / rows;
""" % THREADS

SOFTMAX_XENT_BACKWARD = r"""
const int rows = x_dims[0], cols = x_dims[1];
const int r = blockIdx.x * blockDim.x + threadIdx.x;
if (r >= rows) return;
const float* xr = x + (long long)r * cols;
const float* lr = label + (long long)r * cols;
float* gr = gx + (long long)r * cols;
float m = xr[0];
for (int j = 1; j < cols; ++j) m = fmaxf(m, xr[j]);
float sum = 0.0f;
for (int j = 0; j < cols; ++j) sum += expf(xr[j] - m);
const float scale = gloss[0] / rows;
for (int j = 0; j < cols; ++j) gr[j] = (expf(xr[j] - m) / sum - lr[j]) * scale;
"""


def _blocks(n: int, threads: int = THREADS) -> tuple[int, int, int]:
    return (max(1, -(-n // threads)), 1, 1)


def _check_int(n: int, what: str) -> None:
    if n >= 2**31:
        raise ValueError("%s: %d elements are too many for the kernel's int index" % (what, n))


class Reorg(CustomOp):
    """YOLO v2's reorg with stride 2 (seed 003's ``NDArrayReorg``), Rtc kernels on GPUs."""

    def __init__(self, stride: int = 2) -> None:
        if stride != 2:
            raise ValueError("Reorg: only stride 2 is implemented, got %r" % (stride,))
        self.stride = stride
        self.fwd_kernel: Optional[rtc.Rtc] = None
        self.bwd_kernel: Optional[rtc.Rtc] = None

    def infer_shape(self, in_shape: list[list[int]]) -> tuple[Any, Any]:
        shape = list(in_shape[0])
        if len(shape) != 4 or shape[2] % 2 or shape[3] % 2:
            raise ValueError("Reorg: the input must be (N, C, H, W) with even H and W, got %s"
                             % (tuple(shape),))
        n, c, h, w = shape
        return [shape], [[n, 4 * c, h // 2, w // 2]]

    def forward_gpu(self, in_data: list[Any], out_data: list[Any]) -> None:
        x, y = in_data[0], out_data[0]
        _check_int(x.size, "Reorg")
        if self.fwd_kernel is None:
            self.fwd_kernel = rtc.Rtc("reorg", [("x", x)], [("y", y)], REORG_FORWARD)
        self.fwd_kernel.push([x], [y], _blocks(y.size), (THREADS, 1, 1))

    def backward_gpu(self, out_grad: list[Any], in_data: list[Any], out_data: list[Any],
                     in_grad: list[Any]) -> None:
        gy, gx = out_grad[0], in_grad[0]
        if self.bwd_kernel is None:
            self.bwd_kernel = rtc.Rtc("reorg_grad", [("gy", gy)], [("gx", gx)], REORG_BACKWARD)
        self.bwd_kernel.push([gy], [gx], _blocks(gx.size), (THREADS, 1, 1))

    def forward_numpy(self, in_data: list[Any], out_data: list[Any]) -> None:
        out_data[0][...] = reorg_numpy(in_data[0])

    def backward_numpy(self, out_grad: list[Any], in_data: list[Any], out_data: list[Any],
                       in_grad: list[Any]) -> None:
        in_grad[0][...] = reorg_grad_numpy(out_grad[0])


def reorg_numpy(x: Floats) -> Floats:
    """Reorg (stride 2) of an (N, C, H, W) array with NumPy."""
    n, c, h, w = x.shape
    t = x.reshape(n, c, h // 2, 2, w // 2, 2).transpose(0, 1, 3, 5, 2, 4)
    return t.reshape(n, 4 * c, h // 2, w // 2)


def reorg_grad_numpy(gy: Floats) -> Floats:
    """The gradient of reorg_numpy: each output element goes back to the pixel it came from."""
    n, c4, hh, ww = gy.shape
    t = gy.reshape(n, c4 // 4, 2, 2, hh, ww).transpose(0, 1, 4, 2, 5, 3)
    return t.reshape(n, c4 // 4, 2 * hh, 2 * ww)


_COPY: Optional[rtc.ElementwiseKernel] = None


def _copy_kernel() -> rtc.ElementwiseKernel:
    global _COPY
    if _COPY is None:
        _COPY = rtc.ElementwiseKernel("raw float32 x", "raw float32 y", "y[i] = x[i]", "flat_copy")
    return _COPY


class Flatten(CustomOp):
    """(N, d1, d2, ...) -> (N, d1 * d2 * ...): the same elements in the same order."""

    def infer_shape(self, in_shape: list[list[int]]) -> tuple[Any, Any]:
        shape = list(in_shape[0])
        if len(shape) < 1:
            raise ValueError("Flatten: the input needs a batch dimension")
        return [shape], [[shape[0], int(np.prod(shape[1:], dtype=np.int64))]]

    def forward_gpu(self, in_data: list[Any], out_data: list[Any]) -> None:
        _copy_kernel()(in_data[0], out_data[0], size=in_data[0].size)

    def backward_gpu(self, out_grad: list[Any], in_data: list[Any], out_data: list[Any],
                     in_grad: list[Any]) -> None:
        _copy_kernel()(out_grad[0], in_grad[0], size=out_grad[0].size)

    def forward_numpy(self, in_data: list[Any], out_data: list[Any]) -> None:
        out_data[0][...] = in_data[0].reshape(out_data[0].shape)

    def backward_numpy(self, out_grad: list[Any], in_data: list[Any], out_data: list[Any],
                       in_grad: list[Any]) -> None:
        in_grad[0][...] = out_grad[0].reshape(in_grad[0].shape)


class SoftmaxCrossEntropy(CustomOp):
    """Mean softmax cross-entropy of logits (N, K) and one-hot labels (N, K): a (1,) loss."""

    def __init__(self) -> None:
        self.fwd_kernel: Optional[rtc.Rtc] = None
        self.bwd_kernel: Optional[rtc.Rtc] = None

    def list_arguments(self) -> list[str]:
        return ["data", "label"]

    def infer_shape(self, in_shape: list[list[int]]) -> tuple[Any, Any]:
        x, label = (list(s) for s in in_shape)
        if len(x) != 2 or x != label:
            raise ValueError("SoftmaxCrossEntropy: logits and labels must be (N, K) alike, got %s "
                             "and %s" % (tuple(x), tuple(label)))
        return [x, label], [[1]]

    def forward_gpu(self, in_data: list[Any], out_data: list[Any]) -> None:
        x, label = in_data
        if self.fwd_kernel is None:
            self.fwd_kernel = rtc.Rtc("softmax_xent", [("x", x), ("label", label)],
                                      [("loss", out_data[0])], SOFTMAX_XENT_FORWARD)
        self.fwd_kernel.push([x, label], [out_data[0]], (1, 1, 1), (THREADS, 1, 1))

    def backward_gpu(self, out_grad: list[Any], in_data: list[Any], out_data: list[Any],
                     in_grad: list[Any]) -> None:
        x, label = in_data
        if self.bwd_kernel is None:
            self.bwd_kernel = rtc.Rtc("softmax_xent_grad",
                                      [("x", x), ("label", label), ("gloss", out_grad[0])],
                                      [("gx", in_grad[0])], SOFTMAX_XENT_BACKWARD)
        self.bwd_kernel.push([x, label, out_grad[0]], [in_grad[0]], _blocks(x.shape[0], 128),
                             (128, 1, 1))
        dlarray.ops.array_set(in_grad[1], 0.0)  # labels are not differentiated

    def forward_numpy(self, in_data: list[Any], out_data: list[Any]) -> None:
        x, label = in_data
        out_data[0][...] = softmax_xent_numpy(x, label)

    def backward_numpy(self, out_grad: list[Any], in_data: list[Any], out_data: list[Any],
                       in_grad: list[Any]) -> None:
        x, label = in_data
        in_grad[0][...] = (softmax_numpy(x) - label) * (out_grad[0][0] / x.shape[0])
        in_grad[1][...] = 0


def softmax_numpy(x: Floats) -> Floats:
    """Row-wise softmax."""
    e = np.exp(x - x.max(axis=1, keepdims=True))
    softmax: Floats = e / e.sum(axis=1, keepdims=True)
    return softmax


def softmax_xent_numpy(x: Floats, label: Floats) -> Floats:
    """The mean softmax cross-entropy, shape (1,)."""
    m = x.max(axis=1, keepdims=True)
    log_softmax = x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))
    return np.reshape(-np.sum(label * log_softmax, axis=1).mean(), (1,))
