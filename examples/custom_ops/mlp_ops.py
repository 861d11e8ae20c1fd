"""The MNIST MLP's bias-add as AOT custom ops (``examples/mnist.py --custom-ops``).

``bias_add(x, b)`` is ``x + b`` on every row, done by BiasAdd of bias_add.cc on the CPU and of
bias_add.cu on a GPU; its MindSpore-style ``bprop`` returns ``dout`` for ``x`` and the column sums
of ``dout`` for ``b``, computed by another AOT op (BiasAddGrad, whose output shape comes from the
library's BiasAddGradInferShape).
"""
import os
from typing import Any

import dlarray
from dlarray.custom import Custom

HERE = os.path.dirname(os.path.abspath(__file__))


def _funcs(name: str) -> dict[str, str]:
    """The CPU implementation, and the CUDA one where a GPU is usable (nvcc builds it once)."""
    funcs = {"cpu": os.path.join(HERE, "bias_add.cc") + ":" + name}
    if any(dlarray.is_gpu_ctx(c) for c in dlarray.devices()):
        funcs["gpu"] = os.path.join(HERE, "bias_add.cu") + ":" + name
    return funcs


def bias_add_op() -> Custom:
    """The bias-add Custom op, differentiable through its bprop."""
    column_sums = Custom(_funcs("BiasAddGrad"), None, "float32", name="bias_add_grad")

    def bprop(x: Any, b: Any, out: Any, dout: Any) -> tuple[Any, Any]:
        return dout, column_sums(dout)

    return Custom(_funcs("BiasAdd"), lambda x, b: x, "float32", bprop=bprop, name="bias_add")
