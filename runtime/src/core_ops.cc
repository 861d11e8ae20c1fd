// The ops the core declares, with their shape rules. Counts, devices and dtypes are checked by
// Invoke for every op; the functions here check what is particular to one op.
#include "core_ops.h"

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <string>

#include "dlarray/errors.h"
#include "dlarray/kernel.h"
#include "dlarray/runtime.h"

namespace dlarray {
namespace {

std::string Describe(const DLArrayOpCall& c) {
  std::string s = std::string(c.op_name) + ": ";
  for (int i = 0; i < c.num_inputs; ++i) s += "input " + ShapeToString(c.inputs[i]) + ", ";
  for (int i = 0; i < c.num_outputs; ++i) {
    s += "output " + ShapeToString(c.outputs[i]) + (i + 1 < c.num_outputs ? ", " : "");
  }
  return s;
}

bool SameShape(const DLArray* a, const DLArray* b) {
  if (a->ndim != b->ndim) return false;
  for (int i = 0; i < a->ndim; ++i) {
    if (a->shape[i] != b->shape[i]) return false;
  }
  return true;
}

void ValidateBroadcastTo(const DLArrayOpCall& c) {
  const DLArray* in = c.inputs[0];
  const DLArray* out = c.outputs[0];
  bool ok = in->ndim <= out->ndim;
  for (int i = 0; ok && i < in->ndim; ++i) {
    int64_t a = in->shape[in->ndim - 1 - i];
    int64_t b = out->shape[out->ndim - 1 - i];
    ok = (a == b || a == 1);
  }
  if (!ok) {
    throw ShapeError(Describe(c) + ": cannot broadcast " + ShapeToString(in) + " to " +
                     ShapeToString(out) + " (NumPy rules: trailing dimensions equal or 1)");
  }
}

void ValidateReduceSumAxisZero(const DLArrayOpCall& c) {
  const DLArray* in = c.inputs[0];
  const DLArray* out = c.outputs[0];
  if (in->ndim < 1) throw ShapeError(Describe(c) + ": the input needs at least one dimension");
  bool ok;
  if (in->ndim == 1) {
    ok = NumElements(out) == 1;
  } else {
    ok = out->ndim == in->ndim - 1;
    for (int i = 0; ok && i < out->ndim; ++i) ok = out->shape[i] == in->shape[i + 1];
  }
  if (!ok) {
    throw ShapeError(Describe(c) + ": the output shape must be the input shape without axis 0");
  }
}

// A flag attribute: exactly 0 (false) or 1 (true); NaN or 0.5 is a caller's mistake.
bool Flag(const DLArrayOpCall& c, int i, const char* name) {
  const double v = c.attrs[i];
  if (v != 0.0 && v != 1.0) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.17g", v);
    throw Error(ErrorKind::kValue, std::string(c.op_name) + ": " + name +
                                       " must be 0 (False) or 1 (True), got " + text);
  }
  return v == 1.0;
}

// A scalar applied to float32 data: NaN and infinities are kept, finite values that would round
// to infinity in float32 are refused (float32 holds up to about 3.4028235e38).
void CheckFloat32Value(const DLArrayOpCall& c, int i) {
  const double v = c.attrs[i];
  // Halfway between FLT_MAX and the next power of two rounds to infinity (ties to even).
  const double limit = static_cast<double>(FLT_MAX) + std::ldexp(1.0, 103);
  if (std::isfinite(v) && std::fabs(v) >= limit) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.17g", v);
    throw Error(ErrorKind::kValue, std::string(c.op_name) + ": value " + text +
                                       " is out of the float32 range (|value| <= 3.4028235e38); "
                                       "pass inf explicitly if that is what you mean");
  }
}

void ValidateScalarOp(const DLArrayOpCall& c) {
  CheckFloat32Value(c, 0);
  ValidateSameShape(c);
}

void ValidateMatrixMultiply(const DLArrayOpCall& c) {
  const DLArray* a = c.inputs[0];
  const DLArray* b = c.inputs[1];
  const DLArray* out = c.outputs[0];
  const bool ta = Flag(c, 0, "trans_a");
  const bool tb = Flag(c, 1, "trans_b");
  if (a->ndim != 2 || b->ndim != 2 || out->ndim != 2) {
    throw ShapeError(Describe(c) + ": every operand must be 2-D");
  }
  int64_t m = ta ? a->shape[1] : a->shape[0];
  int64_t ka = ta ? a->shape[0] : a->shape[1];
  int64_t kb = tb ? b->shape[1] : b->shape[0];
  int64_t n = tb ? b->shape[0] : b->shape[1];
  if (ka != kb) {
    throw ShapeError(Describe(c) + " (trans_a=" + (ta ? "True" : "False") +
                     ", trans_b=" + (tb ? "True" : "False") + "): inner dimensions " +
                     std::to_string(ka) + " and " + std::to_string(kb) + " differ");
  }
  if (out->shape[0] != m || out->shape[1] != n) {
    throw ShapeError(Describe(c) + ": the output must be (" + std::to_string(m) + ", " +
                     std::to_string(n) + ")");
  }
}

void ValidateRowwise(const DLArrayOpCall& c) {
  for (int i = 0; i < c.num_inputs; ++i) {
    if (c.inputs[i]->ndim < 1) throw ShapeError(Describe(c) + ": inputs need at least 1 dimension");
    if (!SameShape(c.inputs[i], c.inputs[0])) {
      throw ShapeError(Describe(c) + ": inputs must have the same shape");
    }
  }
}

void ValidateSoftmax(const DLArrayOpCall& c) {
  ValidateRowwise(c);
  if (!SameShape(c.inputs[0], c.outputs[0])) {
    throw ShapeError(Describe(c) + ": the output must have the input's shape");
  }
}

void ValidateSoftmaxCrossEntropy(const DLArrayOpCall& c) {
  ValidateRowwise(c);
  if (NumElements(c.outputs[0]) != 1) {
    throw ShapeError(Describe(c) + ": the output must hold 1 element, e.g. shape (1,)");
  }
}

}  // namespace

void ValidateSameShape(const DLArrayOpCall& c) {
  const DLArray* first = c.num_inputs ? c.inputs[0] : c.outputs[0];
  for (int i = 0; i < c.num_inputs; ++i) {
    if (!SameShape(c.inputs[i], first)) {
      throw ShapeError(Describe(c) + ": every operand must have the same shape");
    }
  }
  for (int i = 0; i < c.num_outputs; ++i) {
    if (!SameShape(c.outputs[i], first)) {
      throw ShapeError(Describe(c) + ": every operand must have the same shape");
    }
  }
}

std::vector<OpInfo> CoreOps() {
  std::vector<OpInfo> ops(kNumCoreOps);
  using Validate = void (*)(const DLArrayOpCall&);
  auto def = [&](CoreOp id, const char* name, std::vector<std::string> inputs,
                 std::vector<std::string> attrs, Validate validate, bool inplace, const char* doc) {
    OpInfo& s = ops[id];
    s.name = name;
    s.owner = "core";
    s.num_inputs = static_cast<int>(inputs.size());
    s.num_outputs = 1;
    s.input_names = std::move(inputs);
    s.output_names = {"out"};
    s.attr_names = std::move(attrs);
    s.core_validate = validate != nullptr ? validate : &ValidateSameShape;
    s.allow_inplace = inplace;
    s.doc = doc;
  };
  def(kArraySet, "array_set", {}, {"value"}, ValidateScalarOp, true, "out[:] = value");
  def(kBroadcastTo, "broadcast_to", {"x"}, {}, ValidateBroadcastTo, false,
      "out = broadcast of in to out's shape (NumPy rules)");
  def(kReduceSumAxisZero, "reduce_sum_axis_zero", {"x"}, {}, ValidateReduceSumAxisZero, false,
      "out = in.sum(axis=0)");
  def(kMatrixElementwiseAdd, "matrix_elementwise_add", {"a", "b"}, {}, nullptr, true, "c = a + b");
  def(kMatrixElementwiseAddByConst, "matrix_elementwise_add_by_const", {"x"}, {"value"},
      ValidateScalarOp, true, "out = in + value");
  def(kMatrixElementwiseMultiply, "matrix_elementwise_multiply", {"a", "b"}, {}, nullptr, true,
      "c = a * b");
  def(kMatrixElementwiseMultiplyByConst, "matrix_elementwise_multiply_by_const", {"x"}, {"value"},
      ValidateScalarOp, true, "out = in * value");
  def(kMatrixMultiply, "matrix_multiply", {"a", "b"}, {"trans_a", "trans_b"},
      ValidateMatrixMultiply, false, "c = op(a) @ op(b)");
  def(kRelu, "relu", {"x"}, {}, nullptr, true, "out = max(in, 0)");
  def(kReluGradient, "relu_gradient", {"x", "grad"}, {}, nullptr, true, "out = grad * (in > 0)");
  def(kSoftmax, "softmax", {"x"}, {}, ValidateSoftmax, true, "row-wise softmax over the last axis");
  def(kSoftmaxCrossEntropy, "softmax_cross_entropy", {"y", "y_"}, {}, ValidateSoftmaxCrossEntropy,
      false, "mean over rows of -sum(y_ * log softmax(y))");
  def(kCopy, "copy", {"x"}, {}, nullptr, true, "out = in");
  return ops;
}

}  // namespace dlarray
