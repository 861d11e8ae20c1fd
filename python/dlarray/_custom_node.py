"""dlarray.custom.Custom ops as dlarray.autodiff graph nodes: a CustomOp whose forward is the AOT
kernel (into the executor's planned buffer) and whose backward is the op's ``bprop``."""

import numpy as np

import dlarray
from .autodiff.custom_op import CustomOp


class _AotNode(CustomOp):
    """A Custom op with ``n`` inputs in a graph (one output)."""

    def __init__(self, custom, n):
        self.custom, self.n = custom, n
        # The NumPy executor runs the kernel on the CPU, or on a GPU for a CUDA-only op.
        gpus = [c for c in dlarray.devices() if c.device_type == 2]
        self.fallback_ctx = gpus[0] if 1 not in custom.device_types and gpus else dlarray.cpu(0)

    def label(self):
        return self.custom.name

    def list_arguments(self):
        return ["x%d" % i for i in range(self.n)]

    def infer_shape(self, in_shape):
        specs = self.custom.infer_outputs(in_shape)
        return in_shape, [specs[0][0]]

    def forward(self, in_data, out_data):
        self.custom._run(*in_data, *out_data)

    def _no_backward_message(self):
        return ("%s has no bprop: make it with Custom(..., bprop=fn) to differentiate it"
                % self.custom.name)


class _AotNodeWithBprop(_AotNode):
    """A Custom op with a bprop: backward calls it and writes what it returns into in_grad."""

    def backward(self, out_grad, in_data, out_data, in_grad):
        custom = self.custom
        grads = custom.bprop(*in_data, out_data[0], out_grad[0])
        if not isinstance(grads, (tuple, list)):
            grads = (grads,)
        if len(grads) > len(in_grad):
            raise ValueError("%s: bprop returned %d gradients for %d inputs"
                             % (custom.name, len(grads), len(in_grad)))
        for i, target in enumerate(in_grad):
            g = grads[i] if i < len(grads) else None
            if g is None:
                dlarray.ops.array_set(target, 0.0)
                continue
            if isinstance(g, dlarray.NDArray) and g is target:
                continue
            shape = tuple(getattr(g, "shape", np.shape(g)))
            if shape != tuple(target.shape):
                raise ValueError("%s: bprop's gradient for input %d has shape %s, the input %s"
                                 % (custom.name, i, shape, tuple(target.shape)))
            target[:] = g


def aot_node(custom, inputs):
    """The graph node of ``custom`` applied to the nodes ``inputs``."""
    if custom.num_outputs != 1:
        raise TypeError("%s: graph nodes have one output, the op has %d"
                        % (custom.name, custom.num_outputs))
    if custom.num_inputs >= 0 and len(inputs) != custom.num_inputs:
        raise TypeError("%s takes %d input(s), got %d" % (custom.name, custom.num_inputs,
                                                          len(inputs)))
    cls = _AotNode if custom.bprop is None else _AotNodeWithBprop
    return cls(custom, len(inputs))(*inputs)
