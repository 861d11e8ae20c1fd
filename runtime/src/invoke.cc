// One op call: validate once, here, then run the kernel registered for (op, device type).
#include <string>

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
  CheckArrayFields(a, s.name + ": " + what());
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
  CheckOperandCounts(s, num_inputs, num_outputs, num_attrs);
  if ((num_inputs > 0 && inputs == nullptr) || (num_outputs > 0 && outputs == nullptr))
    Fail(s, "the operand list is null");
  if (num_attrs > 0 && attrs == nullptr) Fail(s, "attributes are null");
  if (num_inputs == 0 && num_outputs == 0) Fail(s, "the op has no operands");
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
