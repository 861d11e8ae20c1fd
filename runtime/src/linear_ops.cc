// The shape rules of the fused product ops, a dense layer's forward product and its weight
// gradient. Both are optional: dlarray.linear and dlarray.linear_weight_grad compose them from
// matrix_multiply, broadcast_to, the elementwise add, relu and reduce_sum_axis_zero where a
// backend has no kernel (the CUDA backend's is cuBLASLt's with an epilogue).
//   linear              x (m, k), w (k, n), bias (n,), relu -> out (m, n) = act(x @ w + bias)
//   linear_weight_grad  x (m, k), dy (m, n) -> dw (k, n) = x^T @ dy, dbias (n,) = dy.sum(0)
#include "linear_ops.h"

#include <string>

#include "dlarray/errors.h"
#include "dlarray/kernel.h"
#include "dlarray/runtime.h"

namespace dlarray {
namespace {

// Each operand's rank, by name (the messages name the argument).
void RequireRanks(const DLArrayOpCall& c, const char* const* names, const DLArray* const* arrays,
                  const int* ranks, int count) {
  for (int i = 0; i < count; ++i) {
    if (arrays[i]->ndim != ranks[i]) {
      throw ShapeError(std::string(c.op_name) + ": " + names[i] + " must be " +
                       std::to_string(ranks[i]) + "-D, got shape " + ShapeToString(arrays[i]));
    }
  }
}

[[noreturn]] void Mismatch(const DLArrayOpCall& c, const std::string& what) {
  std::string shapes;
  for (int i = 0; i < c.num_inputs; ++i) shapes += " " + ShapeToString(c.inputs[i]);
  for (int i = 0; i < c.num_outputs; ++i) shapes += " " + ShapeToString(c.outputs[i]);
  throw ShapeError(std::string(c.op_name) + ": " + what + " (operands" + shapes + ")");
}

void CheckTwoD(const DLArrayShapeCall& c, int input, const char* name) {
  if (c.input_ndims[input] != 2) {
    throw ShapeError(std::string(c.op_name) + ": " + name + " must be 2-D, got " +
                     std::to_string(c.input_ndims[input]) + "-D");
  }
}

}  // namespace

void ValidateLinear(const DLArrayOpCall& c) {
  const DLArray* const arrays[] = {c.inputs[0], c.inputs[1], c.inputs[2], c.outputs[0]};
  const char* const names[] = {"x", "w", "bias", "out"};
  const int ranks[] = {2, 2, 1, 2};
  RequireRanks(c, names, arrays, ranks, 4);
  const DLArray *x = c.inputs[0], *w = c.inputs[1], *bias = c.inputs[2], *out = c.outputs[0];
  if (x->shape[1] != w->shape[0]) Mismatch(c, "x's columns and w's rows differ");
  if (bias->shape[0] != w->shape[1]) Mismatch(c, "bias must have w's column count of elements");
  if (out->shape[0] != x->shape[0] || out->shape[1] != w->shape[1]) {
    Mismatch(c, "out must be (x's rows, w's columns)");
  }
  if (c.attrs[0] != 0.0 && c.attrs[0] != 1.0) Mismatch(c, "relu must be 0 or 1");
}

void ValidateLinearWeightGrad(const DLArrayOpCall& c) {
  const DLArray* const arrays[] = {c.inputs[0], c.inputs[1], c.outputs[0], c.outputs[1]};
  const char* const names[] = {"x", "dy", "dw", "dbias"};
  const int ranks[] = {2, 2, 2, 1};
  RequireRanks(c, names, arrays, ranks, 4);
  const DLArray *x = c.inputs[0], *dy = c.inputs[1], *dw = c.outputs[0], *db = c.outputs[1];
  if (x->shape[0] != dy->shape[0]) Mismatch(c, "x and dy must have the same row count");
  if (dw->shape[0] != x->shape[1] || dw->shape[1] != dy->shape[1]) {
    Mismatch(c, "dw must be (x's columns, dy's columns)");
  }
  if (db->shape[0] != dy->shape[1]) Mismatch(c, "dbias must have dy's column count of elements");
}

void InferLinear(const DLArrayShapeCall& c) {
  CheckTwoD(c, 0, "x");
  CheckTwoD(c, 1, "w");
  const int64_t* x = c.input_shapes[0];
  const int64_t* w = c.input_shapes[1];
  if (x[1] != w[0]) {
    throw ShapeError(std::string(c.op_name) + ": x has " + std::to_string(x[1]) +
                     " columns, w has " + std::to_string(w[0]) + " rows");
  }
  if (c.input_ndims[2] != 1 || c.input_shapes[2][0] != w[1]) {
    throw ShapeError(std::string(c.op_name) + ": bias must be 1-D of " + std::to_string(w[1]) +
                     " elements (w's columns)");
  }
  c.output_ndims[0] = 2;
  c.output_shapes[0][0] = x[0];
  c.output_shapes[0][1] = w[1];
}

void InferLinearWeightGrad(const DLArrayShapeCall& c) {
  CheckTwoD(c, 0, "x");
  CheckTwoD(c, 1, "dy");
  const int64_t* x = c.input_shapes[0];
  const int64_t* dy = c.input_shapes[1];
  if (x[0] != dy[0]) {
    throw ShapeError(std::string(c.op_name) + ": x has " + std::to_string(x[0]) + " rows, dy has " +
                     std::to_string(dy[0]));
  }
  c.output_ndims[0] = 2;
  c.output_shapes[0][0] = x[1];
  c.output_shapes[0][1] = dy[1];
  c.output_ndims[1] = 1;
  c.output_shapes[1][0] = dy[1];
}

}  // namespace dlarray
