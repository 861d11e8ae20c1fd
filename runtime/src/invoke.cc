// One op call: validate once, here, then run the kernel registered for (op, device type).
#include <string>

#include "dlarray/runtime.h"
#include "runtime_state.h"

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

const OpSchema& GetOpSchema(int op) {
  OpTable& t = RuntimeState::Get().ops;
  if (op < 0 || op >= t.size())
    throw Error(ErrorKind::kValue, "op id " + std::to_string(op) + " is not declared");
  return t.schema(op);
}

bool HasKernel(int op, int device_type) {
  OpTable& t = RuntimeState::Get().ops;
  return op >= 0 && op < t.size() && device_type > 0 && device_type < DLARRAY_MAX_DEVICE_TYPES &&
         t.kernel(op, device_type) != nullptr;
}

namespace {

[[noreturn]] void Fail(const OpSchema& s, const std::string& msg) {
  throw Error(ErrorKind::kValue, s.name + ": " + msg);
}

void CheckOperand(const OpSchema& s, const DLArray* a, const char* kind, int i,
                  const DLArray* first) {
  auto what = [&] { return std::string(kind) + " " + std::to_string(i); };
  if (a == nullptr) Fail(s, what() + " is null");
  if (a->data == nullptr) Fail(s, what() + " has no data");
  if (a->ndim < 0 || a->ndim > 64 || (a->ndim > 0 && a->shape == nullptr))
    Fail(s, what() + " has an invalid shape");
  if (a->strides != nullptr) {
    int64_t expect = 1;
    for (int d = a->ndim - 1; d >= 0; --d) {
      if (a->shape[d] != 1 && a->strides[d] != expect) {
        throw ShapeError(s.name + ": " + what() + " is not compact row-major");
      }
      expect *= a->shape[d];
    }
  }
  for (int d = 0; d < a->ndim; ++d) {
    if (a->shape[d] < 1)
      throw ShapeError(s.name + ": " + what() + " has shape " + ShapeToString(a));
  }
  if (a->ctx != first->ctx) {
    throw DeviceError(
        s.name + ": operands are on different devices: " + ContextToString(first->ctx) + " and " +
        ContextToString(a->ctx) + " (" + what() + "); copy one of them first with copyto()");
  }
  bool dtype_ok;
  if (s.dtypes.empty()) {
    dtype_ok = a->dtype == kFloat32;
  } else {
    dtype_ok = a->dtype == first->dtype;
    bool listed = false;
    for (const DLArrayDType& t : s.dtypes) listed = listed || t == a->dtype;
    dtype_ok = dtype_ok && listed;
  }
  if (!dtype_ok) {
    std::string allowed;
    if (s.dtypes.empty()) allowed = "float32";
    for (const DLArrayDType& t : s.dtypes)
      allowed += (allowed.empty() ? "" : ", ") + DTypeToString(t);
    throw DTypeError(s.name + ": " + what() + " has dtype " + DTypeToString(a->dtype) +
                     "; the op supports " + allowed + " (all operands alike)");
  }
}

}  // namespace

void Invoke(int op, const DLArray* const* inputs, int num_inputs, DLArray* const* outputs,
            int num_outputs, const double* attrs, int num_attrs) {
  RuntimeState& rt = RuntimeState::Get();
  if (op < 0 || op >= rt.ops.size())
    throw Error(ErrorKind::kValue, "op id " + std::to_string(op) + " is not declared");
  const OpSchema& s = rt.ops.schema(op);
  if (num_inputs != s.num_inputs || num_outputs != s.num_outputs ||
      num_attrs != static_cast<int>(s.attr_names.size())) {
    Fail(s, "takes " + std::to_string(s.num_inputs) + " inputs, " + std::to_string(s.num_outputs) +
                " outputs and " + std::to_string(s.attr_names.size()) + " attributes; got " +
                std::to_string(num_inputs) + ", " + std::to_string(num_outputs) + " and " +
                std::to_string(num_attrs));
  }
  if (num_attrs > 0 && attrs == nullptr) Fail(s, "attributes are null");
  const DLArray* first = num_inputs > 0 ? inputs[0] : outputs[0];
  if (first == nullptr) Fail(s, "operand 0 is null");
  for (int i = 0; i < num_inputs; ++i) CheckOperand(s, inputs[i], "input", i, first);
  for (int i = 0; i < num_outputs; ++i) CheckOperand(s, outputs[i], "output", i, first);
  OpCall call{&s.name, inputs, num_inputs, outputs, num_outputs, attrs, num_attrs};
  s.validate(call);
  if (!s.allow_inplace) {
    for (int o = 0; o < num_outputs; ++o) {
      for (int i = 0; i < num_inputs; ++i) {
        if (outputs[o]->data == inputs[i]->data &&
            outputs[o]->byte_offset == inputs[i]->byte_offset) {
          Fail(s, "output " + std::to_string(o) + " is input " + std::to_string(i) +
                      "; this op cannot run in place, give it a separate output array");
        }
      }
    }
  }
  const DLContext ctx = first->ctx;
  Device* device = rt.DeviceFor(ctx);
  KernelFn fn = rt.ops.kernel(op, ctx.device_type);
  if (fn == nullptr) {
    throw BackendError(s.name + ": no kernel is registered for " + DeviceTypeName(ctx.device_type) +
                       " devices (no loaded plugin provides it)");
  }
  KernelContext kc{device,      ctx.device_id, device->stream(ctx.device_id),
                   inputs,      num_inputs,    outputs,
                   num_outputs, attrs,         num_attrs};
  fn(kc);
}

}  // namespace dlarray
