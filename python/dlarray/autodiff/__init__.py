"""Reverse-mode automatic differentiation over dlarray, with the dlsys API.

Build a graph from ``Variable`` nodes and the ``*_op`` functions, ask ``gradients`` for
gradient nodes, and evaluate any list of nodes with an ``Executor``::

    x, w, y_ = Variable("x"), Variable("w"), Variable("y_")
    loss = softmaxcrossentropy_op(matmul_op(x, w), y_)
    grad_w, = gradients(loss, [w])
    executor = Executor([loss, grad_w], ctx=dlarray.cpu(0))
    loss_val, grad_w_val = executor.run({x: x_val, w: w_val, y_: y_val})

``Executor(nodes, ctx=None)`` computes with NumPy, in the dtype of the values fed (float64
too): the reference. With a dlarray context it runs the runtime's ops in float32 from a plan
made once per set of feed shapes: every node's shape is inferred, buffers are allocated once
and shared by nodes whose lifetimes do not overlap, and each run is a loop over op calls
bound to their arrays, with no allocation.

``sgd_update_op(params, grads, lr)`` makes the SGD step a node: evaluated with the loss, one
``run`` does forward, backward and the update (one multi-tensor kernel on a device).

Ops written in Python become nodes by subclassing ``CustomOp`` (MXNet's ``NDArrayOp``; see
``dlarray.autodiff.custom_op``); ``dlarray.custom.Custom`` ops (AOT kernels) are nodes too.
"""

from ._cuda_graph import RecordedGraph, record_cuda_graph
from .custom_op import CustomOp, NDArrayOp
from .executor import Executor
from .gradients import find_topo_sort, gradients, sum_node_list
from .graph import Node, Op, Variable
from .optim import sgd_update_op
from .ops import (add_byconst_op, add_op, broadcastto_op, matmul_op, mul_byconst_op, mul_op,
                  oneslike_op, placeholder_op, reducesumaxiszero_op, relu_gradient_op, relu_op,
                  softmax_func, softmax_op, softmaxcrossentropy_op, zeroslike_op)

__all__ = ["CustomOp", "Executor", "NDArrayOp", "Node", "Op", "RecordedGraph", "Variable",
           "add_byconst_op", "record_cuda_graph",
           "add_op", "broadcastto_op", "find_topo_sort", "gradients", "matmul_op", "mul_byconst_op", "mul_op", "oneslike_op",
           "placeholder_op", "reducesumaxiszero_op", "relu_gradient_op", "relu_op", "sgd_update_op",
           "softmax_func", "softmax_op", "softmaxcrossentropy_op", "sum_node_list", "zeroslike_op"]
