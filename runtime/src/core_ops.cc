// The ops the core declares, with their shape rules. Counts, devices and dtypes are checked by
// Invoke for every op; the functions here check what is particular to one op.
#include "core_ops.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "complex_ops.h"
#include "core_api.h"
#include "dlarray/elementwise_table.h"
#include "dlarray/errors.h"
#include "dlarray/kernel.h"
#include "dlarray/reduce_kinds.h"
#include "dlarray/runtime.h"
#include "fft_ops.h"
#include "index_ops.h"
#include "linear_ops.h"

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
  // Only for the messages: formatting the number on every call was most of an int op's time.
  auto where = [&] { return std::string(c.op_name) + ": value " + Number(v); };
  if (!std::isfinite(v)) {
    throw Error(ErrorKind::kValue,
                where() + " has no integer value (output dtype " + DTypeToString(t) + ")");
  }
  const bool is_signed = t.code == kDLArrayInt;
  const int bits = stored ? t.bits : 64;
  const double low = is_signed || !stored ? -std::ldexp(1.0, bits - 1) : 0.0;
  const double high = is_signed || !stored ? std::ldexp(1.0, bits - 1) : std::ldexp(1.0, bits);
  const double whole = std::trunc(v);
  if (whole < low || whole >= high) {
    throw Error(ErrorKind::kValue, where() + " is out of the range of " +
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
  if ((t.code == kDLArrayFloat && t.bits == 32) || (t.code == kDLArrayComplex && t.bits == 64)) {
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

// where's and masked_fill's input 0, the condition: bool.
void RequireBoolCondition(const DLArrayOpCall& c) {
  if (!(c.inputs[0]->dtype == DLArrayDType{kDLArrayBool, 8, 1})) {
    throw DTypeError(std::string(c.op_name) + ": the condition (input 0) must be bool, not " +
                     DTypeToString(c.inputs[0]->dtype));
  }
}

// where: a bool condition, then x, y and the output of one dtype, all of one shape.
void ValidateWhere(const DLArrayOpCall& c) {
  ValidateSameShape(c);
  RequireBoolCondition(c);
  const DLArrayDType t = c.outputs[0]->dtype;
  if (!(c.inputs[1]->dtype == t) || !(c.inputs[2]->dtype == t)) {
    throw DTypeError(std::string(c.op_name) + ": x, y and the output must have one dtype; got " +
                     DTypeToString(c.inputs[1]->dtype) + ", " + DTypeToString(c.inputs[2]->dtype) +
                     " and " + DTypeToString(t));
  }
}

// masked_fill: a bool condition of out's shape; the value checked as array_set's against out.
void ValidateMaskedFill(const DLArrayOpCall& c) {
  ValidateArraySet(c);
  RequireBoolCondition(c);
}

// --- reduce and scan: the input a contiguous [outer, n, inner] array --------------------------

// An integer attribute in [0, count): the kinds of reduce and scan.
int Kind(const DLArrayOpCall& c, int count, const char* names) {
  const double k = c.attrs[0];
  if (!(k >= 0 && k < count && k == static_cast<int>(k))) {
    throw Error(ErrorKind::kValue,
                std::string(c.op_name) + ": kind must be " + names + ", got " + Number(k));
  }
  return static_cast<int>(k);
}

// The input of reduce and scan: [outer, n, inner], or [outer, n] (inner 1).
void CheckReduceInput(const DLArrayOpCall& c) {
  const int nd = c.inputs[0]->ndim;
  if (nd != 2 && nd != 3) {
    throw ShapeError(Describe(c) + ": the input must be 3-D [outer, n, inner] or 2-D [outer, n]");
  }
}

// Extent d of the input seen as [outer, n, inner].
int64_t Extent(const DLArray* in, int d) { return d < in->ndim ? in->shape[d] : 1; }

// Complex inputs: sums and products only (complex numbers have no order, nor truth kinds here).
void RequireOrderFree(const DLArrayOpCall& c, int kind) {
  if (c.inputs[0]->dtype.code == kDLArrayComplex && kind != kReduceSum && kind != kReduceProd) {
    throw Error(ErrorKind::kType, Describe(c) + ": complex input takes kind 0 (sum) or 1 (prod)");
  }
}

// A reduction's output: [outer, inner] ([outer] for 2-D input).
void CheckReduceOutputShape(const DLArrayOpCall& c) {
  const DLArray* in = c.inputs[0];
  const DLArray* out = c.outputs[0];
  if (out->ndim != in->ndim - 1 || out->shape[0] != in->shape[0] ||
      (in->ndim == 3 && out->shape[1] != in->shape[2])) {
    throw ShapeError(Describe(c) + ": the output must be [outer, inner] ([outer] for 2-D input)");
  }
}

void ValidateReduce(const DLArrayOpCall& c) {
  const int kind = Kind(c, kNumReduceKinds,
                        "0 (sum), 1 (prod), 2 (min), 3 (max), 4 (any), 5 (all), 6 (argmin) or "
                        "7 (argmax)");
  CheckReduceInput(c);
  const DLArray* in = c.inputs[0];
  const DLArray* out = c.outputs[0];
  RequireOrderFree(c, kind);
  CheckReduceOutputShape(c);
  const DLArrayDType want = ReduceOutputDType(kind, in->dtype);
  const DLArrayDType got = out->dtype;
  if (got.code != want.code || got.bits != want.bits || got.lanes != want.lanes) {
    throw Error(ErrorKind::kType, Describe(c) + ": the output dtype must be " +
                                      DTypeToString(want) + ", got " + DTypeToString(got));
  }
}

void ValidateReduceMean(const DLArrayOpCall& c) {
  const double count = c.attrs[0];
  if (!(count > 0 && std::isfinite(count))) {
    throw Error(ErrorKind::kValue, std::string(c.op_name) +
                                       ": count must be positive and finite, got " + Number(count));
  }
  CheckReduceInput(c);
  CheckReduceOutputShape(c);
}

void ValidateScan(const DLArrayOpCall& c) {
  Kind(c, 2, "0 (sum) or 1 (prod)");
  const bool initial = Flag(c, 1, "include_initial");
  CheckReduceInput(c);
  const DLArray* in = c.inputs[0];
  const DLArray* out = c.outputs[0];
  if (out->ndim != in->ndim || out->shape[0] != in->shape[0] ||
      out->shape[1] != in->shape[1] + (initial ? 1 : 0) || Extent(out, 2) != Extent(in, 2)) {
    throw ShapeError(Describe(c) + ": the output must be [outer, n + include_initial, inner]");
  }
  if (in->dtype.code != out->dtype.code || in->dtype.bits != out->dtype.bits) {
    throw Error(ErrorKind::kType, Describe(c) + ": the output dtype must be the input's");
  }
}

void ValidateSoftmaxCrossEntropy(const DLArrayOpCall& c) {
  ValidateRowwise(c);
  if (NumElements(c.outputs[0]) != 1) {
    throw ShapeError(Describe(c) + ": the output must hold 1 element, e.g. shape (1,)");
  }
}

// --- Output shapes of the ops whose outputs are not simply shaped like input 0 ---------------

void SetShape(const DLArrayShapeCall& c, int o, std::initializer_list<int64_t> dims) {
  c.output_ndims[o] = static_cast<int32_t>(dims.size());
  std::copy(dims.begin(), dims.end(), c.output_shapes[o]);
}

void InferLikeInput0(const DLArrayShapeCall& c) {
  for (int o = 0; o < c.num_outputs; ++o) {
    c.output_ndims[o] = c.input_ndims[0];
    std::copy(c.input_shapes[0], c.input_shapes[0] + c.input_ndims[0], c.output_shapes[o]);
  }
}

void InferReduceSumAxisZero(const DLArrayShapeCall& c) {
  const int nd = c.input_ndims[0];
  if (nd < 1) throw ShapeError(std::string(c.op_name) + ": the input needs at least one dimension");
  if (nd == 1) return SetShape(c, 0, {1});  // the seed's (1,) for the sum of a vector
  c.output_ndims[0] = nd - 1;
  std::copy(c.input_shapes[0] + 1, c.input_shapes[0] + nd, c.output_shapes[0]);
}

void InferMatrixMultiply(const DLArrayShapeCall& c) {
  if (c.input_ndims[0] != 2 || c.input_ndims[1] != 2) {
    throw ShapeError(std::string(c.op_name) + ": every operand must be 2-D");
  }
  const bool ta = c.attrs[0] == 1.0, tb = c.attrs[1] == 1.0;  // validated when the op runs
  const int64_t ka = c.input_shapes[0][ta ? 0 : 1], kb = c.input_shapes[1][tb ? 1 : 0];
  if (ka != kb) {  // refused before anything is allocated (autodiff plans shapes with this)
    throw ShapeError(std::string(c.op_name) + " (trans_a=" + (ta ? "True" : "False") +
                     ", trans_b=" + (tb ? "True" : "False") + "): inner dimensions " +
                     std::to_string(ka) + " and " + std::to_string(kb) + " differ");
  }
  SetShape(c, 0, {c.input_shapes[0][ta ? 1 : 0], c.input_shapes[1][tb ? 0 : 1]});
}

// softmax_cross_entropy: y and y_ of one shape, one element out.
void InferOneElement(const DLArrayShapeCall& c) {
  const bool same =
      c.input_ndims[0] == c.input_ndims[1] &&
      std::equal(c.input_shapes[0], c.input_shapes[0] + c.input_ndims[0], c.input_shapes[1]);
  if (!same) throw ShapeError(std::string(c.op_name) + ": y and y_ must have the same shape");
  SetShape(c, 0, {1});
}

// [outer, n, inner] -> [outer, inner]; [outer, n] -> [outer].
void SetReducedShape(const DLArrayShapeCall& c) {
  const int nd = c.input_ndims[0];
  const int64_t* in = c.input_shapes[0];
  if (nd == 3) return SetShape(c, 0, {in[0], in[2]});
  if (nd == 2) return SetShape(c, 0, {in[0]});
  throw ShapeError(std::string(c.op_name) + ": the input must be 3-D or 2-D");
}

void InferReduce(const DLArrayShapeCall& c) {
  c.output_dtypes[0] = ReduceOutputDType(static_cast<int>(c.attrs[0]), c.input_dtypes[0]);
  SetReducedShape(c);
}

void InferReduceMean(const DLArrayShapeCall& c) {
  c.output_dtypes[0] = c.input_dtypes[0];
  SetReducedShape(c);
}

void InferScan(const DLArrayShapeCall& c) {
  const int nd = c.input_ndims[0];
  const int64_t* in = c.input_shapes[0];
  const int64_t initial = c.attrs[1] == 1.0 ? 1 : 0;  // validated when the op runs
  if (nd == 3) return SetShape(c, 0, {in[0], in[1] + initial, in[2]});
  if (nd == 2) return SetShape(c, 0, {in[0], in[1] + initial});
  throw ShapeError(std::string(c.op_name) + ": the input must be 3-D or 2-D");
}

template <void (*F)(const DLArrayOpCall&)>
constexpr DLArrayValidateFn V = &Guarded<DLArrayOpCall, F>;
template <void (*F)(const DLArrayShapeCall&)>
constexpr DLArrayInferShapeFn I = &Guarded<DLArrayShapeCall, F>;

// --- The table ------------------------------------------------------------------------------

// What each op computes in (see dtype_rule for how the operands' dtypes relate).
constexpr DLArrayDType kBool{kDLArrayBool, 8, 1};
// Ordered so that every set an op takes is a run of it (see DTypeSet).
constexpr DLArrayDType kAll[] = {
    {kDLArrayComplex, 64, 1}, {kDLArrayComplex, 128, 1}, {kDLArrayFloat, 32, 1},
    {kDLArrayFloat, 16, 1},   {kDLArrayBfloat, 16, 1},   {kDLArrayFloat, 64, 1},
    {kDLArrayInt, 8, 1},      {kDLArrayInt, 16, 1},      {kDLArrayInt, 32, 1},
    {kDLArrayInt, 64, 1},     {kDLArrayUInt, 8, 1},      {kDLArrayUInt, 16, 1},
    {kDLArrayUInt, 32, 1},    {kDLArrayUInt, 64, 1},     kBool};
// The dtypes kAll[begin, begin + count). Complex arrays are stored, moved and converted (the
// kAllTypes ops); no other op has complex kernels yet.
struct DTypeSet {
  int begin;
  int count;
};
constexpr DTypeSet kFloats{2, 4}, kNumeric{2, 9}, kReal{2, 13}, kAllTypes{0, 15};
// The elementwise table's names for them, and its other sets.
constexpr DTypeSet kFloatTypes = kFloats, kNumericTypes = kNumeric, kRealTypes = kReal;
constexpr DTypeSet kRealNumericTypes{2, 12}, kIntegerTypes{6, 8}, kIntegralTypes{6, 9};
// complex: the table's sets with complex64 and complex128 (kAll's first two).
constexpr DTypeSet kComplexTypes{0, 2}, kFloatComplexTypes{0, 6}, kNumericComplexTypes{0, 14},
    kStorageTypes = kAllTypes;

enum Flags : unsigned {
  kInplace = 1,     // an output may be an input
  kStrided = 2,     // operands may be strided views
  kFillZero = 4,    // empty inputs, non-empty outputs: the outputs are 0 (a sum of nothing)
  kFillNaN = 8,     // ... NaN (a mean of nothing)
  kBoolOut = 16,    // inputs alike, outputs bool
  kPerOperand = 32  // each operand any listed dtype (a conversion)
};

struct CoreOpRow {
  const char* name;
  const char* inputs;      // names, space-separated
  const char* attrs;       // names, each with an optional ":bool"/":int" type and "=default"
  const char* call_order;  // names; nullptr: inputs, attributes, outputs
  DTypeSet dtypes;
  unsigned flags;
  DLArrayValidateFn validate;  // nullptr: every operand has one shape
  DLArrayInferShapeFn infer;   // nullptr: outputs shaped like input 0 when validate is nullptr
  const char* doc;
  // How inputs are differentiated, e.g. "a=matrix_elementwise_multiply(dout,b)": the gradient of
  // input a is that op applied to the output's gradient (dout), an input or the output (out).
  const char* gradients = nullptr;
  const char* outputs = "out";  // names, space-separated
};

// Every built-in op. The output of each is named "out", unless the row names its outputs.
const CoreOpRow kCoreOps[] = {
    {"array_set", "", "value", "out value", kAllTypes, kInplace, V<ValidateArraySet>, nullptr,
     "out[:] = value"},
    // Its gradient is dlsys's: right for x of out's shape less the first axis.
    {"broadcast_to", "x", "", nullptr, kAllTypes, 0, V<ValidateBroadcastTo>, nullptr,
     "out = broadcast of x to out's shape (NumPy rules)", "x=reduce_sum_axis_zero(dout)"},
    // Its gradient takes x's shape from x (the one argument past broadcast_to's input).
    {"reduce_sum_axis_zero", "x", "", nullptr, kNumeric, kFillZero, V<ValidateReduceSumAxisZero>,
     I<InferReduceSumAxisZero>, "out = x.sum(axis=0)", "x=broadcast_to(dout,x)"},
    // d op(a) = dout op(b)^T and d op(b) = op(a)^T dout, written for a and b as stored.
    {"matrix_multiply", "a b", "trans_a:bool trans_b:bool", "a trans_a b trans_b out", kFloats,
     kFillZero, V<ValidateMatrixMultiply>, I<InferMatrixMultiply>,
     "out = op(a) @ op(b), op transposing when trans_a / trans_b",
     "a?!trans_a=matrix_multiply(dout,b,trans_a=0,trans_b=!trans_b) "
     "a?trans_a=matrix_multiply(b,dout,trans_a=trans_b,trans_b=1) "
     "b?!trans_b=matrix_multiply(a,dout,trans_a=!trans_a,trans_b=0) "
     "b?trans_b=matrix_multiply(dout,a,trans_a=1,trans_b=trans_a)"},
    // A dense layer's fused products (linear_ops.cc): optional, a backend without them gets
    // matrix_multiply and the elementwise ops (dlarray.linear, dlarray.linear_weight_grad).
    {"linear", "x w bias", "relu:bool=0", nullptr, kFloats, 0, V<ValidateLinear>, I<InferLinear>,
     "out = x @ w + bias, then relu when relu=1 (x (m, k), w (k, n), bias (n,)); optional: a "
     "backend without it gets matrix_multiply, broadcast_to, add and relu"},
    {"linear_weight_grad", "x dy", "", nullptr, kFloats, kFillZero, V<ValidateLinearWeightGrad>,
     I<InferLinearWeightGrad>,
     "dw = x^T @ dy, dbias = dy.sum(axis=0) (x (m, k), dy (m, n)); optional: a backend without it "
     "gets matrix_multiply and reduce_sum_axis_zero",
     nullptr, "dw dbias"},
    {"softmax", "x", "", nullptr, kFloats, kInplace, V<ValidateSoftmax>, I<InferLikeInput0>,
     "row-wise softmax over the last axis"},
    {"softmax_cross_entropy", "y y_", "", nullptr, kFloats, kFillNaN,
     V<ValidateSoftmaxCrossEntropy>, I<InferOneElement>,
     "out (1 element) = mean over rows of -sum(y_ * log softmax(y))"},
    {"copy", "x", "", nullptr, kAllTypes, kInplace | kStrided, nullptr, nullptr,
     "out = x (any strides on either side)", "x=copy(dout)"},
    {"astype", "x", "", nullptr, kAllTypes, kInplace | kPerOperand, nullptr, nullptr,
     "out = x converted to out's dtype (NumPy's casts; floats to integers truncate)"},
    {"compare", "a b", "cmp:int=0", "a b out cmp", kAllTypes, kInplace | kBoolOut,
     V<ValidateCompare>, I<InferLikeInput0>,
     "out (bool) = a <cmp> b, cmp: 0 == (default), 1 !=, 2 <, 3 <=, 4 >, 5 >="},
    {"compare_by_const", "x", "value cmp:int=0", "x value out cmp", kAllTypes, kInplace | kBoolOut,
     V<ValidateCompareByConst>, I<InferLikeInput0>,
     "out (bool) = x <cmp> value, cmp: 0 == (default), 1 !=, 2 <, 3 <=, 4 >, 5 >="},
    {"where", "condition x y", "", nullptr, kAllTypes, kInplace | kPerOperand, V<ValidateWhere>,
     nullptr, "out = x where condition, else y (condition bool; x, y and out of one dtype)"},
    // The indexing primitives (index_ops.cc says the canonical shapes Python brings calls to).
    // x[mask] = scalar in one pass (a backend without it: where() with a filled array).
    {"masked_fill", "condition", "value", "condition value out", kAllTypes, kInplace | kPerOperand,
     V<ValidateMaskedFill>, nullptr,
     "out = value where condition, out elsewhere (condition bool of out's shape; out is read and "
     "written in place)"},
    {"gather", "x indices", "", nullptr, kAllTypes, kPerOperand, V<ValidateGather>, I<InferGather>,
     "out[o, j, i] = x[o, indices[j], i]; indices int64, negative from the end"},
    {"gather_along", "x indices", "", nullptr, kAllTypes, kPerOperand, V<ValidateGatherAlong>,
     I<InferGatherAlong>,
     "out[o, j, i] = x[o, indices[o, j, i], i]; indices int64 of out's shape, negative from the "
     "end; optional: a backend without it gets gather of flat positions"},
    {"scatter", "values indices", "", nullptr, kAllTypes, kPerOperand, V<ValidateScatter>, nullptr,
     "out[o, indices[j], i] = values[o, j, i]; the rest of out is kept"},
    {"nonzero", "mask", "", nullptr, kAllTypes, kPerOperand | kFillZero, V<ValidateNonzero>,
     I<InferNonzero>, "out[0] = count of True in mask, out[1:1 + count] = their flat positions"},
    // x[mask] in one pass where a backend has it: no positions written and read back.
    {"compress", "x mask", "", nullptr, kAllTypes, kPerOperand | kFillZero, V<ValidateCompress>,
     I<InferCompress>,
     "out[:count] = the elements of x where mask is True, in order; count[0] = their number (x, "
     "mask bool and out (n,), count (1,) int64); optional: a backend without it gets nonzero and "
     "gather",
     nullptr, "out count"},
    {"argsort", "x", "descending:bool=0", nullptr, kAllTypes, kPerOperand, V<ValidateArgsort>,
     I<InferArgsort>,
     "out (int64) = stable order of each row of x (NaN last, or first descending)"},
    {"sort", "x", "descending:bool=0", nullptr, kAllTypes, kPerOperand, V<ValidateArgsort>,
     I<InferArgsort>,
     "out = each row of x sorted (NaN last, or first descending; equal values in any order); "
     "optional: a backend without it gets argsort + gather"},
    {"reduce", "x", "kind:int", nullptr, kAllTypes, kPerOperand, V<ValidateReduce>, I<InferReduce>,
     "out[o, j] = reduction over r of x[o, r, j] (x [outer, n >= 1, inner] or [outer, n] "
     "contiguous); kind: "
     "0 sum, 1 prod, 2 min, 3 max (out dtype x's), 4 any, 5 all (bool), 6 argmin, 7 argmax "
     "(int64)"},
    // mean's one pass where a backend has it; the same bits as its two ops (the sum rounded to the
    // dtype first), so a device with it and one without agree.
    {"reduce_mean", "x", "count", nullptr, kFloats, 0, V<ValidateReduceMean>, I<InferReduceMean>,
     "out[o, j] = (sum over r of x[o, r, j], rounded to x's dtype) / count, divided as "
     "matrix_elementwise_divide_by_const does (x [outer, n >= 1, inner] or [outer, n] "
     "contiguous); optional: a backend without it gets reduce (kind 0) and that op"},
    {"scan", "x", "kind:int include_initial:bool=0", nullptr, kAllTypes, 0, V<ValidateScan>,
     I<InferScan>,
     "out[o, r, j] = cumulative sum (kind 0) or product (1) of x[o, :r+1, j] (x [outer, n, "
     "inner]); include_initial: out has n + 1 rows, the first 0 or 1"},
    // fft: the FFT primitives (fft_ops.cc says the canonical shapes Python brings calls to).
    {"fft_c2c", "x", "forward:bool scale=1", nullptr, DTypeSet{0, 2}, 0, V<ValidateFftC2C>,
     I<InferLikeInput0>,
     "out = scale * DFT along axis 1 of x (outer, n, inner), complex; forward: the sign of the "
     "exponent"},
    {"fft_r2c", "x", "forward:bool scale=1", nullptr, DTypeSet{0, 6}, kPerOperand,
     V<ValidateFftR2C>, I<InferFftR2C>,
     "out (outer, n / 2 + 1, inner) = scale * the first half of the DFT along axis 1 of real x "
     "(outer, n, inner); forward=0: its conjugate"},
    {"fft_c2r", "x", "forward:bool scale=1", nullptr, DTypeSet{0, 6}, kPerOperand,
     V<ValidateFftC2R>, nullptr,
     "out (outer, n, inner) real = scale * DFT along axis 1 of the Hermitian signals whose halves "
     "x (outer, n / 2 + 1, inner) holds (n from out); forward=0: the inverse transform (irfft)"},
    // gpulinalg: the n-dimensional forms over axes 1..k (k = 2, 3) of (outer, n_1, ..., n_k,
    // inner).
    {"fft_c2c_nd", "x", "forward:bool scale=1", nullptr, DTypeSet{0, 2}, 0, V<ValidateFftC2C>,
     I<InferLikeInput0>,
     "out = scale * k-dimensional DFT over axes 1..k of x (outer, n_1, ..., n_k, inner), k = 2 "
     "or 3, complex; forward: the sign of the exponent"},
    {"fft_r2c_nd", "x", "forward:bool scale=1", nullptr, DTypeSet{0, 6}, kPerOperand,
     V<ValidateFftR2C>, I<InferFftR2C>,
     "out (outer, n_1, ..., n_k / 2 + 1, inner) = scale * the k-dimensional DFT over axes 1..k "
     "of real x (outer, n_1, ..., n_k, inner), the last axis's half; forward=0: its conjugate"},
    {"fft_c2r_nd", "x", "forward:bool scale=1", nullptr, DTypeSet{0, 6}, kPerOperand,
     V<ValidateFftC2R>, nullptr,
     "out (outer, n_1, ..., n_k, inner) real = scale * the k-dimensional DFT over axes 1..k of "
     "the Hermitian signals x (outer, n_1, ..., n_k / 2 + 1, inner) holds; forward=0: irfftn"},
// The ops of the elementwise definition table (dlarray/elementwise_table.h): same-shape operands,
// in place allowed, the outputs shaped like the inputs; a scalar attribute checked as every
// scalar applied to an array.
#define DLARRAY_CORE_ROW_1(name, x, dtypes, expr, grads, doc) \
  {#name, #x, "", nullptr, dtypes, kInplace, nullptr, nullptr, doc, grads},
#define DLARRAY_CORE_ROW_2(name, a, b, dtypes, expr, grads, doc) \
  {#name, #a " " #b, "", nullptr, dtypes, kInplace, nullptr, nullptr, doc, grads},
#define DLARRAY_CORE_ROW_S(name, x, s, dtypes, expr, grads, doc) \
  {#name, #x, #s, nullptr, dtypes, kInplace, V<ValidateScalarOp>, I<InferLikeInput0>, doc, grads},
    DLARRAY_ELEMENTWISE_OPS(DLARRAY_CORE_ROW_1, DLARRAY_CORE_ROW_2, DLARRAY_CORE_ROW_S)
        DLARRAY_MATH_OPS(DLARRAY_CORE_ROW_1, DLARRAY_CORE_ROW_2)
// The predicates of the same table: inputs alike, a bool output.
#define DLARRAY_CORE_PREDICATE_1(name, x, dtypes, expr, doc) \
  {#name, #x, "", nullptr, dtypes, kInplace | kBoolOut, nullptr, nullptr, doc},
#define DLARRAY_CORE_PREDICATE_2(name, a, b, dtypes, expr, doc) \
  {#name, #a " " #b, "", nullptr, dtypes, kInplace | kBoolOut, nullptr, nullptr, doc},
            DLARRAY_PREDICATE_OPS(DLARRAY_CORE_PREDICATE_1, DLARRAY_CORE_PREDICATE_2)
// The complex part ops: a complex input, an output of its parts' real dtype.
#define DLARRAY_CORE_COMPLEX_PART(name, x, expr, doc) \
  {#name, #x, "", nullptr, kFloatComplexTypes, kPerOperand, V<ValidateComplexPart>, nullptr, doc},
                DLARRAY_COMPLEX_PART_OPS(DLARRAY_CORE_COMPLEX_PART)
#undef DLARRAY_CORE_COMPLEX_PART
#undef DLARRAY_CORE_ROW_1
#undef DLARRAY_CORE_ROW_2
#undef DLARRAY_CORE_ROW_S
#undef DLARRAY_CORE_PREDICATE_1
#undef DLARRAY_CORE_PREDICATE_2
};

std::vector<std::string> Words(const char* text) {
  std::vector<std::string> out;
  std::string word;
  for (const char* p = text; p != nullptr; ++p) {
    if (*p != ' ' && *p != '\0') {
      word += *p;
    } else if (!word.empty()) {
      out.push_back(std::move(word));
      word.clear();
    }
    if (*p == '\0') break;
  }
  return out;
}

std::vector<const char*> Pointers(const std::vector<std::string>& words) {
  std::vector<const char*> out;
  for (const std::string& w : words) out.push_back(w.c_str());
  return out;
}

// The gradients of a row: "input=op(arg,...)" words, where an argument is dout, out, an input's
// name or an attribute setting "name=value" (DLArrayGradient.attrs), and "input?when=op(...)"
// holds only under the condition `when` (DLArrayGradient.when). The strings are kept in `text`.
std::vector<DLArrayGradient> Gradients(const CoreOpRow& row, const std::vector<std::string>& inputs,
                                       std::vector<std::string>* text,
                                       std::vector<std::vector<DLArrayGradArg>>* args) {
  const std::vector<std::string> specs = Words(row.gradients);
  text->reserve(3 * specs.size());  // op, attrs and when of each: no reallocation moves them
  args->reserve(specs.size());
  std::vector<DLArrayGradient> out;
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('='), open = spec.find('('), ask = spec.find('?');
    const auto input = std::find(inputs.begin(), inputs.end(), spec.substr(0, std::min(eq, ask)));
    const std::string& op = text->emplace_back(spec.substr(eq + 1, open - eq - 1));
    std::string attrs;
    args->emplace_back();
    std::string list = spec.substr(open + 1, spec.size() - open - 2);
    for (size_t start = 0; start <= list.size();) {
      const size_t comma = std::min(list.find(',', start), list.size());
      const std::string a = list.substr(start, comma - start);
      const auto in = std::find(inputs.begin(), inputs.end(), a);
      start = comma + 1;
      if (a.find('=') != std::string::npos) {
        attrs += a + " ";
        continue;
      }
      args->back().push_back(
          a == "dout" ? DLArrayGradArg{kDLArrayGradOutputGrad, 0}
          : a == "out"
              ? DLArrayGradArg{kDLArrayGradOutput, 0}
              : DLArrayGradArg{kDLArrayGradInput, static_cast<int32_t>(in - inputs.begin())});
    }
    const std::string& attr_text = text->emplace_back(attrs);
    const std::string& when =
        text->emplace_back(ask < eq ? spec.substr(ask + 1, eq - ask - 1) : std::string());
    out.push_back(
        {sizeof(DLArrayGradient), op.c_str(), args->back().data(),
         static_cast<int32_t>(input - inputs.begin()), static_cast<int32_t>(args->back().size()),
         attr_text.empty() ? nullptr : attr_text.c_str(), when.empty() ? nullptr : when.c_str()});
  }
  return out;  // a misspelt name gives an index declare_op refuses
}

// One row as the C schema a plugin fills, declared through the plugin API.
int DeclareRow(const CoreOpRow& row, DLArrayRegistry* registry) {
  const std::vector<std::string> inputs = Words(row.inputs), order = Words(row.call_order);
  std::vector<std::string> attrs;
  std::vector<int32_t> types;
  std::vector<double> defaults;
  for (const std::string& spec : Words(row.attrs)) {
    const size_t colon = spec.find(':'), eq = spec.find('=');
    attrs.push_back(spec.substr(0, std::min(colon, eq)));
    const std::string type =
        colon == std::string::npos ? "" : spec.substr(colon + 1, eq - colon - 1);
    types.push_back(type == "bool"  ? kDLArrayAttrBool
                    : type == "int" ? kDLArrayAttrInt
                                    : kDLArrayAttrFloat);
    defaults.push_back(eq == std::string::npos ? std::nan("") : std::stod(spec.substr(eq + 1)));
  }
  const std::vector<const char*> input_ptrs = Pointers(inputs), attr_ptrs = Pointers(attrs),
                                 order_ptrs = Pointers(order);
  std::vector<std::string> grad_text;
  std::vector<std::vector<DLArrayGradArg>> grad_args;
  const std::vector<DLArrayGradient> grads = Gradients(row, inputs, &grad_text, &grad_args);
  const std::vector<std::string> outputs = Words(row.outputs);
  const std::vector<const char*> output_ptrs = Pointers(outputs);
  DLArrayOpSchema s{};
  s.struct_size = sizeof(DLArrayOpSchema);
  s.name = row.name;
  s.doc = row.doc;
  s.attr_names = attr_ptrs.data();
  s.dtypes = kAll + row.dtypes.begin;
  s.input_names = input_ptrs.empty() ? nullptr : input_ptrs.data();
  s.output_names = output_ptrs.data();
  s.validate = row.validate;
  s.num_inputs = static_cast<int32_t>(inputs.size());
  s.num_outputs = static_cast<int32_t>(outputs.size());
  s.num_attrs = static_cast<int32_t>(attrs.size());
  s.num_dtypes = row.dtypes.count;
  s.allow_inplace = (row.flags & kInplace) != 0;
  s.infer_shape = row.infer;
  s.gradients = grads.empty() ? nullptr : grads.data();
  s.num_gradients = static_cast<int32_t>(grads.size());
  s.call_order = order_ptrs.empty() ? nullptr : order_ptrs.data();
  s.attr_types = types.data();
  s.attr_defaults = defaults.data();
  s.empty_fill = (row.flags & kFillNaN) != 0 ? std::numeric_limits<double>::quiet_NaN() : 0.0;
  s.output_dtype = kBool;
  s.dtype_rule = (row.flags & kBoolOut)      ? kDLArrayOutputsFixed
                 : (row.flags & kPerOperand) ? kDLArrayDTypesPerArray
                                             : kDLArrayDTypesAlike;
  s.accepts_strided = (row.flags & kStrided) != 0;
  s.fills_when_empty = (row.flags & (kFillZero | kFillNaN)) != 0;
  return CoreApi()->declare_op(registry, &s);
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

void DeclareCoreOps(DLArrayRegistry* registry) {
  for (const CoreOpRow& row : kCoreOps) {
    if (DeclareRow(row, registry) != 0) ThrowPluginError(std::string("declaring ") + row.name);
  }
}

}  // namespace dlarray
