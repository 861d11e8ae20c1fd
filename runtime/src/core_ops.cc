// The ops the core declares, with their shape rules. Counts, devices and dtypes are checked by
// Invoke for every op; the functions here check what is particular to one op.
#include "core_ops.h"

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "dlarray/errors.h"
#include "dlarray/kernel.h"
#include "dlarray/runtime.h"
#include "elementwise_ops.h"

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

std::string Number(double v) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.17g", v);
  return text;
}

// A flag attribute: exactly 0 (false) or 1 (true); NaN or 0.5 is a caller's mistake.
bool Flag(const DLArrayOpCall& c, int i, const char* name) {
  const double v = c.attrs[i];
  if (v != 0.0 && v != 1.0) {
    throw Error(ErrorKind::kValue, std::string(c.op_name) + ": " + name +
                                       " must be 0 (False) or 1 (True), got " + Number(v));
  }
  return v == 1.0;
}

// A scalar applied to integer data. NaN and infinities have no integer value (a cast would make
// them 0 or saturate silently). array_set stores the value itself, so it must lie in the dtype
// after truncation, as NumPy's arr[...] = value requires; the arithmetic ops wrap it (x - 5 on
// uint8 adds -5), so it only has to fit the kernels' 64-bit integer.
void CheckIntegerScalar(const DLArrayOpCall& c, int i, bool stored) {
  const double v = c.attrs[i];
  const DLArrayDType t = c.outputs[0]->dtype;
  if (t.code != kDLArrayInt && t.code != kDLArrayUInt) return;
  const std::string where = std::string(c.op_name) + ": value " + Number(v);
  if (!std::isfinite(v)) {
    throw Error(ErrorKind::kValue,
                where + " has no integer value (output dtype " + DTypeToString(t) + ")");
  }
  const bool is_signed = t.code == kDLArrayInt;
  const int bits = stored ? t.bits : 64;
  const double low = is_signed || !stored ? -std::ldexp(1.0, bits - 1) : 0.0;
  const double high = is_signed || !stored ? std::ldexp(1.0, bits - 1) : std::ldexp(1.0, bits);
  const double whole = std::trunc(v);
  if (whole < low || whole >= high) {
    throw Error(ErrorKind::kValue, where + " is out of the range of " +
                                       (stored ? DTypeToString(t) : std::string("int64")) + " [" +
                                       Number(low) + ", " + Number(high) + ")");
  }
}

// A scalar applied to floating data of the output's dtype: NaN and infinities are kept, finite
// values that would round to infinity in that dtype are refused; float64 holds every double.
void CheckScalarRange(const DLArrayOpCall& c, int i) {
  const double v = c.attrs[i];
  const DLArrayDType t = c.outputs[0]->dtype;
  double limit = 0.0;  // halfway between the largest finite value and the next power of two
  const char* range = "";
  if (t.code == kDLArrayFloat && t.bits == 32) {
    limit = static_cast<double>(FLT_MAX) + std::ldexp(1.0, 103);
    range = "float32 range (|value| <= 3.4028235e38)";
  } else if (t.code == kDLArrayFloat && t.bits == 16) {
    limit = 65520.0;
    range = "float16 range (|value| <= 65504)";
  } else if (t.code == kDLArrayBfloat && t.bits == 16) {
    limit = std::ldexp(2.0 - std::ldexp(1.0, -8), 127);
    range = "bfloat16 range (|value| <= 3.3895314e38)";
  } else {
    return;
  }
  if (std::isfinite(v) && std::fabs(v) >= limit) {
    throw Error(ErrorKind::kValue, std::string(c.op_name) + ": value " + Number(v) +
                                       " is out of the " + range +
                                       "; pass inf explicitly if that is what you mean");
  }
}

void ValidateScalarOp(const DLArrayOpCall& c) {
  CheckScalarRange(c, 0);
  CheckIntegerScalar(c, 0, false);
  ValidateSameShape(c);
}

void ValidateArraySet(const DLArrayOpCall& c) {
  CheckScalarRange(c, 0);
  CheckIntegerScalar(c, 0, true);
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

// The attribute "cmp" of the comparisons: an integer 0..5 (CompareKind).
void CheckCompareKind(const DLArrayOpCall& c, int attr) {
  const double k = c.attrs[attr];
  if (!(k >= 0 && k <= 5 && k == static_cast<int>(k))) {
    throw Error(ErrorKind::kValue, std::string(c.op_name) +
                                       ": cmp must be 0 (==), 1 (!=), 2 (<), "
                                       "3 (<=), 4 (>) or 5 (>=), got " +
                                       std::to_string(k));
  }
}

void ValidateCompare(const DLArrayOpCall& c) {
  CheckCompareKind(c, 0);
  ValidateSameShape(c);
}

void ValidateCompareByConst(const DLArrayOpCall& c) {
  CheckCompareKind(c, 1);
  ValidateSameShape(c);
}

const DLArrayDType kBool{kDLArrayBool, 8, 1};

std::string DTypeList(const std::vector<DLArrayDType>& types) {
  std::string s;
  for (const DLArrayDType& t : types) s += (s.empty() ? "" : ", ") + DTypeToString(t);
  return s;
}

bool Listed(const std::vector<DLArrayDType>& types, DLArrayDType t) {
  for (const DLArrayDType& u : types) {
    if (u == t) return true;
  }
  return false;
}

// astype: any storage dtype in, any out.
void CheckAstypeDTypes(const OpInfo& op, const DLArrayOpCall& c) {
  const DLArray* operands[2] = {c.inputs[0], c.outputs[0]};
  for (const DLArray* a : operands) {
    if (!Listed(op.dtypes, a->dtype)) {
      throw DTypeError(op.name + ": dtype " + DTypeToString(a->dtype) + " is not supported (" +
                       DTypeList(op.dtypes) + ")");
    }
  }
}

// Comparisons: inputs alike (any listed dtype), a bool output.
void CheckCompareDTypes(const OpInfo& op, const DLArrayOpCall& c) {
  const DLArrayDType t = c.inputs[0]->dtype;
  for (int i = 0; i < c.num_inputs; ++i) {
    if (c.inputs[i]->dtype != t || !Listed(op.dtypes, c.inputs[i]->dtype)) {
      throw DTypeError(op.name + ": input " + std::to_string(i) + " has dtype " +
                       DTypeToString(c.inputs[i]->dtype) + "; the inputs must have one dtype of " +
                       DTypeList(op.dtypes));
    }
  }
  if (c.outputs[0]->dtype != kBool) {
    throw DTypeError(op.name + ": the output must be bool, got " +
                     DTypeToString(c.outputs[0]->dtype));
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
  def(kArraySet, "array_set", {}, {"value"}, ValidateArraySet, true, "out[:] = value");
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
  def(kCopy, "copy", {"x"}, {}, nullptr, true, "out = in (any strides on either side)");
  def(kAstype, "astype", {"x"}, {}, nullptr, true,
      "out = in converted to out's dtype (NumPy's casts; floats to integers truncate)");
  def(kCompare, "compare", {"a", "b"}, {"cmp"}, ValidateCompare, true,
      "out (bool) = a <cmp> b, cmp: 0 ==, 1 !=, 2 <, 3 <=, 4 >, 5 >=");
  def(kCompareByConst, "compare_by_const", {"x"}, {"value", "cmp"}, ValidateCompareByConst, true,
      "out (bool) = in <cmp> value, cmp: 0 ==, 1 !=, 2 <, 3 <=, 4 >, 5 >=");
  def(kMatrixElementwiseDivide, "matrix_elementwise_divide", {"a", "b"}, {}, nullptr, true,
      "c = a / b");
  def(kMatrixElementwiseDivideByConst, "matrix_elementwise_divide_by_const", {"x"}, {"value"},
      ValidateScalarOp, true, "out = in / value");

  // Dtypes: what each op computes in (operands alike unless a rule below says otherwise).
  const DLArrayDType f32 = kFloat32, f16{kDLArrayFloat, 16, 1}, bf16{kDLArrayBfloat, 16, 1},
                     f64{kDLArrayFloat, 64, 1}, i8{kDLArrayInt, 8, 1}, i16{kDLArrayInt, 16, 1},
                     i32{kDLArrayInt, 32, 1}, i64{kDLArrayInt, 64, 1}, u8{kDLArrayUInt, 8, 1},
                     u16{kDLArrayUInt, 16, 1}, u32{kDLArrayUInt, 32, 1}, u64{kDLArrayUInt, 64, 1};
  const std::vector<DLArrayDType> floats = {f32, f16, bf16, f64};
  const std::vector<DLArrayDType> numeric = {f32, f16, bf16, f64, i8, i16, i32, i64, u8};
  const std::vector<DLArrayDType> all = {f32, f16, bf16, f64, i8,  i16,  i32,
                                         i64, u8,  u16,  u32, u64, kBool};
  for (CoreOp id : {kArraySet, kBroadcastTo, kCopy, kAstype, kCompare, kCompareByConst}) {
    ops[id].dtypes = all;
  }
  for (CoreOp id : {kReduceSumAxisZero, kMatrixElementwiseAdd, kMatrixElementwiseAddByConst,
                    kMatrixElementwiseMultiply, kMatrixElementwiseMultiplyByConst}) {
    ops[id].dtypes = numeric;
  }
  for (CoreOp id : {kMatrixMultiply, kRelu, kReluGradient, kSoftmax, kSoftmaxCrossEntropy,
                    kMatrixElementwiseDivide, kMatrixElementwiseDivideByConst}) {
    ops[id].dtypes = floats;
  }
  ops[kAstype].core_dtype_check = &CheckAstypeDTypes;
  ops[kCompare].core_dtype_check = &CheckCompareDTypes;
  ops[kCompareByConst].core_dtype_check = &CheckCompareDTypes;
  ops[kCompare].output_dtype = kBool;
  ops[kCompare].outputs_like_input0 = true;
  ops[kCompareByConst].outputs_like_input0 = true;
  ops[kCompareByConst].output_dtype = kBool;
  ops[kCopy].accepts_strided = true;
  // Results over empty inputs: sums of nothing are 0, the mean of no rows is NaN (as in NumPy).
  ops[kMatrixMultiply].fills_when_empty = true;
  ops[kReduceSumAxisZero].fills_when_empty = true;
  ops[kSoftmaxCrossEntropy].fills_when_empty = true;
  ops[kSoftmaxCrossEntropy].empty_fill = std::numeric_limits<double>::quiet_NaN();
  AppendElementwiseOps(&ops);  // after the fixed ids
  return ops;
}

}  // namespace dlarray
