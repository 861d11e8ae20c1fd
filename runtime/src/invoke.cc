// One op call: validate once, here, then run the kernel registered for (op, device type).
#include <algorithm>
#include <string>

#include "core_api.h"
#include "core_ops.h"
#include "dlarray/runtime.h"
#include "runtime_state.h"
#include "validate.h"

namespace dlarray {

int FindOp(const std::string& name) { return RuntimeState::Get().ops.Find(name); }

std::vector<std::string> ListOps() { return RuntimeState::Get().ops.Names(); }

int RequireOp(const std::string& name) {
  int id = FindOp(name);
  if (id >= 0) return id;
  std::string known;
  for (const std::string& n : ListOps()) known += (known.empty() ? "" : ", ") + n;
  throw Error(ErrorKind::kValue, "unknown op '" + name + "' (declared ops: " + known + ")");
}

const OpInfo& GetOpInfo(int op) {
  OpTable& t = RuntimeState::Get().ops;
  if (op < 0 || op >= t.size())
    throw Error(ErrorKind::kValue, "op id " + std::to_string(op) + " is not declared");
  return t.info(op);
}

bool HasKernel(int op, int device_type) {
  OpTable& t = RuntimeState::Get().ops;
  return op >= 0 && op < t.size() && device_type > 0 && device_type < DLARRAY_MAX_DEVICE_TYPES &&
         t.kernel(op, device_type) != nullptr;
}

std::vector<OutputSpec> InferOutputs(int op, const Shapes& input_shapes,
                                     const std::vector<DLArrayDType>& input_dtypes,
                                     const std::vector<double>& attrs) {
  const OpInfo& s = GetOpInfo(op);
  if (static_cast<int>(input_shapes.size()) != s.num_inputs ||
      static_cast<int>(input_dtypes.size()) != s.num_inputs ||
      static_cast<int>(attrs.size()) != static_cast<int>(s.attr_names.size())) {
    throw Error(ErrorKind::kValue, s.name + ": takes " + std::to_string(s.num_inputs) +
                                       " inputs and " + std::to_string(s.attr_names.size()) +
                                       " attributes; got " + std::to_string(input_shapes.size()) +
                                       " and " + std::to_string(attrs.size()));
  }
  // A conversion's output dtype is the caller's, unless the op's shape inference sets it (reduce
  // does: bool for any/all, int64 for argmin/argmax).
  if (s.dtype_rule == kDLArrayDTypesPerArray && s.infer_shape == nullptr) {
    throw Error(ErrorKind::kValue, s.name +
                                       ": the output's dtype is the caller's choice: give the "
                                       "output array");
  }
  const DLArrayDType first = s.dtype_rule == kDLArrayOutputsFixed ? s.output_dtype
                             : s.num_inputs > 0                   ? input_dtypes[0]
                                                                  : kFloat32;
  std::vector<OutputSpec> out(static_cast<size_t>(s.num_outputs));
  if (s.infer_shape != nullptr) {
    std::vector<const int64_t*> in_shapes;
    std::vector<int32_t> in_ndims;
    for (const auto& shape : input_shapes) {
      in_shapes.push_back(shape.data());
      in_ndims.push_back(static_cast<int32_t>(shape.size()));
    }
    std::vector<std::vector<int64_t>> buffers(out.size(),
                                              std::vector<int64_t>(DLARRAY_MAX_NDIM, 0));
    std::vector<int64_t*> out_shapes;
    for (auto& b : buffers) out_shapes.push_back(b.data());
    std::vector<int32_t> out_ndims(out.size(), -1);
    std::vector<DLArrayDType> out_dtypes(out.size(), first);
    const DLArrayShapeCall call{sizeof(DLArrayShapeCall),
                                s.name.c_str(),
                                in_shapes.data(),
                                in_ndims.data(),
                                input_dtypes.data(),
                                attrs.data(),
                                out_shapes.data(),
                                out_ndims.data(),
                                out_dtypes.data(),
                                s.num_inputs,
                                s.num_outputs,
                                static_cast<int32_t>(attrs.size()),
                                0};
    ClearPluginError();
    if (s.infer_shape(&call, s.infer_data) != 0) {
      ThrowPluginError(s.name + ": the shape inference of plugin '" + s.owner + "'");
    }
    for (size_t o = 0; o < out.size(); ++o) {
      if (out_ndims[o] < 0 || out_ndims[o] > DLARRAY_MAX_NDIM) {
        throw BackendError(s.name + ": the shape inference of plugin '" + s.owner +
                           "' gave no valid rank for output " + std::to_string(o));
      }
      out[o].shape.assign(buffers[o].begin(), buffers[o].begin() + out_ndims[o]);
      out[o].dtype = out_dtypes[o];
    }
    return out;
  }
  if (s.validate != nullptr || s.num_inputs == 0) {
    throw Error(ErrorKind::kValue, s.name +
                                       ": the op cannot infer its output shapes (it has "
                                       "no infer_shape): give the output arrays");
  }
  for (const auto& shape : input_shapes) {  // the default rule: one shape for every operand
    if (shape != input_shapes[0]) {
      DLArray a{}, b{};  // for ShapeToString
      a.ndim = static_cast<int32_t>(input_shapes[0].size());
      a.shape = const_cast<int64_t*>(input_shapes[0].data());
      b.ndim = static_cast<int32_t>(shape.size());
      b.shape = const_cast<int64_t*>(shape.data());
      throw ShapeError(s.name + ": inputs of shapes " + ShapeToString(&a) + " and " +
                       ShapeToString(&b) + ": every operand must have the same shape");
    }
  }
  for (OutputSpec& o : out) {
    o.shape = input_shapes[0];
    o.dtype = first;
  }
  return out;
}

namespace {

[[noreturn]] void Fail(const OpInfo& s, const std::string& msg) {
  throw Error(ErrorKind::kValue, s.name + ": " + msg);
}

void CheckOperand(const OpInfo& s, const DLArray* a, const char* kind, int i,
                  const DLArray* first) {
  auto what = [&] { return std::string(kind) + " " + std::to_string(i); };
  if (a == nullptr) Fail(s, what() + " is null");
  CheckArrayFields(a, OperandName(s.name, kind, i), s.accepts_strided);
  if (a->ctx != first->ctx) {
    throw DeviceError(
        s.name + ": operands are on different devices: " + ContextToString(first->ctx) + " and " +
        ContextToString(a->ctx) + " (" + what() + "); copy one of them first with copyto()");
  }
}

bool Listed(const OpInfo& s, DLArrayDType t) {
  if (s.dtypes.empty()) return t == kFloat32;
  return std::find(s.dtypes.begin(), s.dtypes.end(), t) != s.dtypes.end();
}

std::string Supported(const OpInfo& s) {
  std::string allowed = s.dtypes.empty() ? "float32" : "";
  for (const DLArrayDType& t : s.dtypes)
    allowed += (allowed.empty() ? "" : ", ") + DTypeToString(t);
  return allowed;
}

// The operands' dtypes under the op's dtype rule: inputs (and, unless the rule gives them their
// own, outputs) alike and listed; fixed outputs of their dtype; or each operand any listed one.
void CheckDTypes(const OpInfo& s, const DLArray* const* inputs, int num_inputs,
                 DLArray* const* outputs, int num_outputs) {
  const DLArray* first = num_inputs > 0 ? inputs[0] : outputs[0];
  const bool per_operand = s.dtype_rule == kDLArrayDTypesPerArray;
  for (int k = 0; k < num_inputs + num_outputs; ++k) {
    const bool is_input = k < num_inputs;
    const DLArray* a = is_input ? inputs[k] : outputs[k - num_inputs];
    auto what = [&] {
      return std::string(is_input ? "input " : "output ") +
             std::to_string(is_input ? k : k - num_inputs);
    };
    if (!is_input && s.dtype_rule == kDLArrayOutputsFixed) {
      if (a->dtype == s.output_dtype) continue;
      throw DTypeError(s.name + ": " + what() + " has dtype " + DTypeToString(a->dtype) +
                       "; it must be " + DTypeToString(s.output_dtype));
    }
    if (Listed(s, a->dtype) && (per_operand || a->dtype == first->dtype)) continue;
    throw DTypeError(s.name + ": " + what() + " has dtype " + DTypeToString(a->dtype) +
                     (per_operand || a->dtype == first->dtype
                          ? std::string()
                          : " but operand 0 has " + DTypeToString(first->dtype)) +
                     "; the op supports " + Supported(s) +
                     (per_operand ? " (each operand any of them)" : " (all operands alike)"));
  }
}

// Bytes [lo, hi) of memory that the elements of a reach, relative to a->data.
void Extent(const DLArray* a, int64_t* lo, int64_t* hi) {
  const int64_t elem = static_cast<int64_t>(DTypeBytes(a->dtype));
  *lo = static_cast<int64_t>(a->byte_offset);
  *hi = *lo + elem;
  for (int d = 0; d < a->ndim; ++d) {
    const int64_t stride = a->strides != nullptr ? a->strides[d] : 0;
    const int64_t step = a->strides != nullptr ? (a->shape[d] - 1) * stride * elem : 0;
    (step < 0 ? *lo : *hi) += step;
  }
  if (a->strides == nullptr) *hi = *lo + NumElements(a) * elem;
}

// An output that overlaps an input without being the same elements would read what it already
// overwrote.
void CheckOverlap(const OpInfo& s, const DLArray* in, const DLArray* out, int i, int o) {
  if (in->data != out->data || in->ctx != out->ctx) return;
  int64_t in_lo, in_hi, out_lo, out_hi;
  Extent(in, &in_lo, &in_hi);
  Extent(out, &out_lo, &out_hi);
  if (in_hi <= out_lo || out_hi <= in_lo) return;
  const bool same =
      in->byte_offset == out->byte_offset && IsCompact(in) == IsCompact(out) &&
      (IsCompact(in) || std::equal(in->strides, in->strides + in->ndim, out->strides));
  if (same) return;
  Fail(s, "output " + std::to_string(o) + " partly overlaps input " + std::to_string(i) +
              " (views of one array); copy the input first (.copy())");
}

// Whether a and b have one shape (a loop: memcmp's call costs more at these ranks).
bool SameExtents(const DLArray* a, const DLArray* b) {
  if (a->ndim != b->ndim) return false;
  for (int d = 0; d < a->ndim; ++d) {
    if (a->shape[d] != b->shape[d]) return false;
  }
  return true;
}

// Runs the kernel registered for (op, the operands' device type) on checked operands.
void RunKernel(RuntimeState& rt, int op, const OpInfo& s, const DLArray* const* inputs,
               int num_inputs, DLArray* const* outputs, int num_outputs, const double* attrs,
               int num_attrs) {
  const DLArray* first = num_inputs > 0 ? inputs[0] : outputs[0];
  const DLContext ctx = first->ctx;
  PluginDevice* device = rt.DeviceFor(ctx);
  const KernelEntry* kernel = rt.ops.kernel(op, ctx.device_type);
  if (kernel == nullptr) {
    throw BackendError(s.name + ": no kernel is registered for " + DeviceTypeName(ctx.device_type) +
                       " devices (no loaded plugin provides it)");
  }
  const DLArrayKernelCall call_info{sizeof(DLArrayKernelCall),
                                    CoreApi(),
                                    device->api(),
                                    ctx.device_type,
                                    ctx.device_id,
                                    device->stream(ctx.device_id),
                                    inputs,
                                    outputs,
                                    attrs,
                                    num_inputs,
                                    num_outputs,
                                    num_attrs,
                                    0,
                                    s.name.c_str()};
  ClearPluginError();
  if (kernel->fn(&call_info, kernel->data) != 0) {
    ThrowPluginError(s.name + ": the kernel of plugin '" + kernel->plugin + "' on " +
                     ContextToString(ctx));
  }
}

}  // namespace

void Invoke(int op, const DLArray* const* inputs, int num_inputs, DLArray* const* outputs,
            int num_outputs, const double* attrs, int num_attrs) {
  RuntimeState& rt = RuntimeState::Get();
  if (op < 0 || op >= rt.ops.size())
    throw Error(ErrorKind::kValue, "op id " + std::to_string(op) + " is not declared");
  const OpInfo& s = rt.ops.info(op);
  CheckOperandCounts(s, num_inputs, num_outputs, num_attrs);
  if ((num_inputs > 0 && inputs == nullptr) || (num_outputs > 0 && outputs == nullptr))
    Fail(s, "the operand list is null");
  if (num_attrs > 0 && attrs == nullptr) Fail(s, "attributes are null");
  if (num_inputs == 0 && num_outputs == 0) Fail(s, "the op has no operands");
  const DLArray* first = num_inputs > 0 ? inputs[0] : outputs[0];
  if (first == nullptr) Fail(s, "operand 0 is null");
  for (int i = 0; i < num_inputs; ++i) CheckOperand(s, inputs[i], "input", i, first);
  for (int i = 0; i < num_outputs; ++i) CheckOperand(s, outputs[i], "output", i, first);
  CheckDTypes(s, inputs, num_inputs, outputs, num_outputs);
  const DLArrayOpCall call{
      sizeof(DLArrayOpCall), s.name.c_str(), inputs, outputs, attrs, num_inputs,
      num_outputs,           num_attrs,      0};
  if (s.validate != nullptr) {
    ClearPluginError();
    if (s.validate(&call, s.validate_data) != 0) {
      ThrowPluginError(s.name + ": the shape check of plugin '" + s.owner + "'");
    }
  } else {
    ValidateSameShape(call);
  }
  bool outputs_empty = true, inputs_empty = false;
  for (int o = 0; o < num_outputs; ++o)
    outputs_empty = outputs_empty && NumElements(outputs[o]) == 0;
  for (int i = 0; i < num_inputs; ++i) inputs_empty = inputs_empty || NumElements(inputs[i]) == 0;
  if (outputs_empty) return;  // nothing to compute: no kernel runs
  for (int o = 0; o < num_outputs; ++o) {
    for (int i = 0; i < num_inputs; ++i) {
      if (NumElements(inputs[i]) == 0) continue;
      if (!s.allow_inplace && outputs[o]->data == inputs[i]->data &&
          outputs[o]->byte_offset == inputs[i]->byte_offset) {
        Fail(s, "output " + std::to_string(o) + " is input " + std::to_string(i) +
                    "; this op cannot run in place, give it a separate output array");
      }
      CheckOverlap(s, inputs[i], outputs[o], i, o);
    }
  }
  if (inputs_empty) {
    if (!s.fills_when_empty) {
      Fail(s, "an input is empty (zero-size) but an output is not; the op has no result for that");
    }
    // A sum over nothing: fill each output and run no kernel of this op. Zero is all-zero bytes
    // in every dtype, so the device fills it itself; another value (NaN) has a bit pattern per
    // float format, which array_set knows.
    for (int o = 0; o < num_outputs; ++o) {
      DLArray* out[1] = {outputs[o]};
      if (s.empty_fill == 0.0 && IsCompact(outputs[o])) {
        static constexpr unsigned char kZero[8] = {};
        FillElements(outputs[o], kZero, DTypeBytes(outputs[o]->dtype));
        continue;
      }
      static const int array_set = rt.ops.Find("array_set");
      Invoke(array_set, nullptr, 0, out, 1, &s.empty_fill, 1);
    }
    return;
  }
  RunKernel(rt, op, s, inputs, num_inputs, outputs, num_outputs, attrs, num_attrs);
}

bool TryInvokeSameShape(int op, const DLArray* const* inputs, int num_inputs, DLArray* output,
                        const double* attrs, int num_attrs) {
  RuntimeState& rt = RuntimeState::Get();
  if (op < 0 || op >= rt.ops.size() || num_inputs < 1 || inputs == nullptr || output == nullptr ||
      (num_attrs > 0 && attrs == nullptr)) {
    return false;
  }
  const OpInfo& s = rt.ops.info(op);
  // Only the default shape rule (a plugin's shape check may look at anything) and operand
  // counts and dtype rules whose check is a comparison here.
  if (s.validate != nullptr || s.num_inputs != num_inputs || s.num_outputs != 1 ||
      static_cast<int>(s.attr_names.size()) != num_attrs ||
      s.dtype_rule == kDLArrayDTypesPerArray) {
    return false;
  }
  const DLArray* first = inputs[0];
  const DLArrayDType want_out =
      s.dtype_rule == kDLArrayOutputsFixed ? s.output_dtype : first->dtype;
  if (output->dtype != want_out || !Listed(s, first->dtype) || output->strides != nullptr ||
      output->ctx != first->ctx || output->data == nullptr) {
    return false;
  }
  // Storage dtypes have power-of-two sizes: the alignment check is a mask, not a division.
  const uint64_t elem = DTypeBytes(first->dtype);
  if (elem == 0 || (elem & (elem - 1)) != 0) return false;
  for (int i = 0; i < num_inputs; ++i) {
    const DLArray* a = inputs[i];
    // What CheckArrayFields, CheckOperand, CheckDTypes, ValidateSameShape and the in-place
    // checks would look at; the element count is the output's, which its allocation bounded.
    if (a == nullptr || a->ctx != first->ctx || a->dtype != first->dtype || a->strides != nullptr ||
        a->data == nullptr || a->data == output->data ||
        ((reinterpret_cast<uintptr_t>(a->data) + a->byte_offset) & (elem - 1)) != 0 ||
        !SameExtents(a, output)) {
      return false;
    }
  }
  if (NumElements(output) == 0 || rt.ops.kernel(op, first->ctx.device_type) == nullptr) {
    return false;
  }
  DLArray* outputs[1] = {output};
  RunKernel(rt, op, s, inputs, num_inputs, outputs, 1, attrs, num_attrs);
  return true;
}

}  // namespace dlarray
