// The DLArrayCoreApi table: what plugins may call in the core.
#include "core_api.h"

#include <exception>
#include <new>
#include <string>

#include "dlarray/errors.h"
#include "dlarray/runtime.h"
#include "op_table.h"

namespace dlarray {
namespace {

struct PendingError {
  bool set = false;
  int32_t kind = kDLArrayErrRuntime;
  std::string message;
};

thread_local PendingError pending;

void SetError(int32_t kind, const char* message) {
  if (kind < kDLArrayErrRuntime || kind > kDLArrayErrMemory) kind = kDLArrayErrRuntime;
  try {
    pending.message = message != nullptr ? message : "";
  } catch (...) {
    pending.message.clear();
  }
  pending.set = true;
  pending.kind = kind;
}

// Records the exception being handled as the pending error.
void RecordCurrent() {
  try {
    throw;
  } catch (const Error& e) {
    SetError(static_cast<int32_t>(e.kind()), e.what());
  } catch (const std::bad_alloc&) {
    SetError(kDLArrayErrMemory, "out of host memory");
  } catch (const std::exception& e) {
    SetError(kDLArrayErrRuntime, e.what());
  } catch (...) {
    SetError(kDLArrayErrRuntime, "unknown C++ exception in the dlarray core");
  }
}

void StringSet(DLArrayString* out, const char* text) {
  if (out == nullptr) return;
  try {
    out->value = text != nullptr ? text : "";
  } catch (...) {
    out->value.clear();
  }
}

int DeclareOp(DLArrayRegistry* registry, const DLArrayOpSchema* schema) {
  try {
    if (registry == nullptr) throw BackendError("declare_op: the registry is null");
    static_cast<StagingRegistry*>(registry)->DeclareOp(schema);
    return 0;
  } catch (...) {
    RecordCurrent();
    return -1;
  }
}

int RegisterKernel(DLArrayRegistry* registry, const char* op, int32_t device_type,
                   DLArrayKernelFn kernel, void* data) {
  try {
    if (registry == nullptr) throw BackendError("register_kernel: the registry is null");
    static_cast<StagingRegistry*>(registry)->RegisterKernel(op, device_type, kernel, data);
    return 0;
  } catch (...) {
    RecordCurrent();
    return -1;
  }
}

int InvokeByName(const char* op, const DLArray* const* inputs, int32_t num_inputs,
                 DLArray* const* outputs, int32_t num_outputs, const double* attrs,
                 int32_t num_attrs) {
  try {
    if (op == nullptr) throw Error(ErrorKind::kValue, "invoke: the op name is null");
    Invoke(RequireOp(op), inputs, num_inputs, outputs, num_outputs, attrs, num_attrs);
    return 0;
  } catch (...) {
    RecordCurrent();
    return -1;
  }
}

const DLArrayCoreApi kCoreApi = {
    sizeof(DLArrayCoreApi),
    DLARRAY_PLUGIN_ABI_MAJOR,
    DLARRAY_PLUGIN_ABI_MINOR,
    DLARRAY_VERSION,
    &SetError,
    &StringSet,
    &DeclareOp,
    &RegisterKernel,
    &InvokeByName,
};

}  // namespace

const DLArrayCoreApi* CoreApi() { return &kCoreApi; }

void ClearPluginError() { pending.set = false; }

void ThrowPluginError(const std::string& what) {
  if (!pending.set) throw BackendError(what + " failed without saying why");
  const int32_t kind = pending.kind;
  std::string message = std::move(pending.message);
  pending.set = false;
  pending.message.clear();
  if (message.empty()) message = what + " failed (the plugin gave no message)";
  switch (kind) {
    case kDLArrayErrValue:
      throw Error(ErrorKind::kValue, message);
    case kDLArrayErrType:
      throw DTypeError(message);
    case kDLArrayErrMemory:
      throw OutOfMemoryError(message);
    default:
      throw BackendError(message);
  }
}

}  // namespace dlarray
