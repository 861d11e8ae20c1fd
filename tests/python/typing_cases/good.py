"""A user script that mypy --strict must accept: the types it sees are dlarray's own."""
import numpy as np
import numpy.typing as npt

import dlarray
from dlarray import ops


def normalize(x: dlarray.NDArray) -> dlarray.NDArray:
    return (x - 1.0) / 2.0


ctx: dlarray.DLContext = dlarray.device("cpu")
a = dlarray.array(np.ones((3, 4), np.float32), ctx)
b: dlarray.NDArray = dlarray.empty((3, 4), "cpu", np.float16)
c = a @ a.T
shape: tuple[int, ...] = c.shape
host: npt.NDArray[np.float32] = np.asarray(normalize(a), dtype=np.float32)
ops.relu(a, a)
free, total = dlarray.mem_info("cpu")
count: int = dlarray.device_count("cuda")
mask: dlarray.NDArray = a > 0.5
with dlarray.using_device("cpu") as dev:
    name: str = dlarray.device_name(dev)
y = dlarray.from_dlpack(np.zeros(3))
z = dlarray.asarray([1.0, 2.0], copy=None)
rows = [float(r[0]) for r in a]

# The autodiff API: nodes, gradients, executors and their values.
from dlarray import autodiff as ad

xv, wv = ad.Variable("x"), ad.Variable("w")
loss: ad.Node = ad.reducesumaxiszero_op(ad.relu_op(ad.matmul_op(xv, wv)) * 0.5 + 1.0)
grads: list[ad.Node] = ad.gradients(loss, [wv])
executor = ad.Executor([loss] + grads, ctx=dlarray.cpu(0))
feed: dict[ad.Node, npt.NDArray[np.float32]] = {xv: np.ones((2, 3), np.float32),
                                                wv: np.ones((3, 4), np.float32)}
loss_value, grad_w = executor.run(feed, convert_to_numpy_ret_vals=True)
total_loss: float = float(loss_value.sum())
on_device = executor.run({xv: a, wv: a})


class Double(ad.CustomOp):
    def forward(self, in_data: list[dlarray.NDArray], out_data: list[dlarray.NDArray]) -> None:
        ops.matrix_elementwise_multiply_by_const(in_data[0], 2.0, out_data[0])


doubled: ad.Node = Double()(xv, name="doubled")
