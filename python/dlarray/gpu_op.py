"""Seed compatibility: the dlsys ``gpu_op`` module. The ops route by the arrays' context, so they
run on cpu arrays too."""

from .ops import (array_set, broadcast_to, matrix_elementwise_add,  # noqa: F401
                  matrix_elementwise_add_by_const, matrix_elementwise_multiply,
                  matrix_elementwise_multiply_by_const, matrix_multiply, reduce_sum_axis_zero, relu,
                  relu_gradient, softmax, softmax_cross_entropy)

__all__ = ["array_set", "broadcast_to", "matrix_elementwise_add", "matrix_elementwise_add_by_const",
           "matrix_elementwise_multiply", "matrix_elementwise_multiply_by_const", "matrix_multiply",
           "reduce_sum_axis_zero", "relu", "relu_gradient", "softmax", "softmax_cross_entropy"]
