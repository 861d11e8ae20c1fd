// The per-op functions of the C APIs as one table each: (C function, op name, argument pattern).
// Each is a thin wrapper over the one generic invoke, so a row is all a new function needs; the
// files that define them (c_runtime_api.cc, seed_api/seed_c_api.cc) give each pattern its
// signature:
//   SET(arr, value)                  op(value) into arr
//   UNARY(input, output)             op(input) into output
//   BINARY(a, b, output)             op(a, b) into output
//   BY_CONST(input, value, output)   op(input, value) into output
//   MATMUL(a, trans_a, b, trans_b, output)   op(a, b, trans_a, trans_b) into output
#ifndef DLARRAY_RUNTIME_SRC_C_API_OPS_H_
#define DLARRAY_RUNTIME_SRC_C_API_OPS_H_

// libdlarray_runtime's own names (dlarray/c_runtime_api.h).
#define DLARRAY_C_API_OPS(X)                                                                   \
  X(DLArraySet, "array_set", SET)                                                              \
  X(DLArrayBroadcastTo, "broadcast_to", UNARY)                                                 \
  X(DLArrayReduceSumAxisZero, "reduce_sum_axis_zero", UNARY)                                   \
  X(DLArrayMatrixElementwiseAdd, "matrix_elementwise_add", BINARY)                             \
  X(DLArrayMatrixElementwiseAddByConst, "matrix_elementwise_add_by_const", BY_CONST)           \
  X(DLArrayMatrixElementwiseMultiply, "matrix_elementwise_multiply", BINARY)                   \
  X(DLArrayMatrixElementwiseMultiplyByConst, "matrix_elementwise_multiply_by_const", BY_CONST) \
  X(DLArrayMatrixMultiply, "matrix_multiply", MATMUL)                                          \
  X(DLArrayRelu, "relu", UNARY)                                                                \
  X(DLArrayReluGradient, "relu_gradient", BINARY)                                              \
  X(DLArraySoftmax, "softmax", UNARY)                                                          \
  X(DLArraySoftmaxCrossEntropy, "softmax_cross_entropy", BINARY)                               \
  X(DLArrayCopy, "copy", UNARY)

// The seed's names (its gpu_op.py calls them), exported by both libdlarray_runtime and the seed
// shim libc_runtime_api.
#define DLARRAY_SEED_OPS(X)                                                        \
  X(DLGpuArraySet, "array_set", SET)                                               \
  X(DLGpuBroadcastTo, "broadcast_to", UNARY)                                       \
  X(DLGpuReduceSumAxisZero, "reduce_sum_axis_zero", UNARY)                         \
  X(DLGpuMatrixElementwiseAdd, "matrix_elementwise_add", BINARY)                   \
  X(DLGpuMatrixElementwiseAddByConst, "matrix_elementwise_add_by_const", BY_CONST) \
  X(DLGpuMatrixElementwiseMultiply, "matrix_elementwise_multiply", BINARY)         \
  X(DLGpuMatrixMultiplyByConst, "matrix_elementwise_multiply_by_const", BY_CONST)  \
  X(DLGpuMatrixMultiply, "matrix_multiply", MATMUL)                                \
  X(DLGpuRelu, "relu", UNARY)                                                      \
  X(DLGpuReluGradient, "relu_gradient", BINARY)                                    \
  X(DLGpuSoftmax, "softmax", UNARY)                                                \
  X(DLGpuSoftmaxCrossEntropy, "softmax_cross_entropy", BINARY)

#endif  // DLARRAY_RUNTIME_SRC_C_API_OPS_H_
