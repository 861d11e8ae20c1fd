// The C API: every entry point turns exceptions into -1 plus a thread-local message.
#include "dlarray/c_runtime_api.h"

#include <string>
#include <vector>

#include "c_api_ops.h"
#include "dlarray/runtime.h"
#include "handle_table.h"
#include "validate.h"

namespace {

thread_local std::string last_error;
thread_local int last_error_kind = kDLArrayErrRuntime;

int SetError(const char* msg, int kind) {
  last_error = msg;
  last_error_kind = kind;
  return -1;
}

#define API_BEGIN() try {
#define API_END()                                                 \
  }                                                               \
  catch (const dlarray::Error& e) {                               \
    return SetError(e.what(), static_cast<int>(e.kind()));        \
  }                                                               \
  catch (const std::bad_alloc&) {                                 \
    return SetError("out of host memory", kDLArrayErrMemory);     \
  }                                                               \
  catch (const std::exception& e) {                               \
    return SetError(e.what(), kDLArrayErrRuntime);                \
  }                                                               \
  catch (...) {                                                   \
    return SetError("unknown C++ exception", kDLArrayErrRuntime); \
  }                                                               \
  return 0;

dlarray::HandleTable& Handles() { return dlarray::HandleTable::Get(); }

// Runs op (by name, as DLArrayInvoke does) on handles: each is resolved (and its array kept alive)
// for the whole call, so that a concurrent DLArrayFree cannot pull the memory away from a running
// kernel.
int Run(const char* op, std::initializer_list<DLArrayHandle> in, DLArrayHandle out,
        std::initializer_list<double> attrs) {
  API_BEGIN();
  const char* names[] = {"input 0", "input 1", "input 2"};
  dlarray::HandleTable::Ref refs[4];
  const DLArray* ins[3] = {};
  int i = 0;
  for (DLArrayHandle h : in) {
    refs[i] = Handles().Resolve(h, names[i]);
    ins[i] = refs[i].dl;
    ++i;
  }
  refs[3] = Handles().Resolve(out, "output");
  DLArray* outs[] = {refs[3].dl};
  dlarray::Invoke(dlarray::RequireOp(op), ins, static_cast<int>(in.size()), outs, 1, attrs.begin(),
                  static_cast<int>(attrs.size()));
  API_END();
}

}  // namespace

extern "C" {

const char* DLGetLastError(void) { return last_error.c_str(); }
int DLGetLastErrorKind(void) { return last_error_kind; }

int DLArrayAllocEx(const int64_t* shape, int ndim, DLArrayDType dtype, DLContext ctx,
                   DLArrayHandle* out) {
  API_BEGIN();
  if (out == nullptr) throw dlarray::Error(dlarray::ErrorKind::kValue, "DLArrayAlloc: out is null");
  if (ndim < 0 || ndim > 64 || (ndim > 0 && shape == nullptr)) {
    throw dlarray::ShapeError("DLArrayAlloc: invalid ndim " + std::to_string(ndim) +
                              " or null shape");
  }
  std::vector<int64_t> dims(shape, shape + ndim);
  *out = nullptr;
  *out = Handles().Add(dlarray::Array::Empty(dims, ctx, dtype));
  API_END();
}

int DLArrayAlloc(const int64_t* shape, int ndim, DLContext ctx, DLArrayHandle* out) {
  return DLArrayAllocEx(shape, ndim, dlarray::kFloat32, ctx, out);
}

int DLArrayFree(DLArrayHandle handle) {
  API_BEGIN();
  Handles().Remove(handle);
  API_END();
}

int DLArrayCopyFromTo(DLArrayHandle from, DLArrayHandle to, void* stream) {
  (void)stream;
  API_BEGIN();
  const dlarray::HandleTable::Ref src = Handles().Resolve(from, "copy source");
  const dlarray::HandleTable::Ref dst = Handles().Resolve(to, "copy target");
  dlarray::CopyFromTo(src.dl, dst.dl);
  API_END();
}

int DLArraySynchronize(DLContext ctx) {
  API_BEGIN();
  dlarray::Synchronize(ctx);
  API_END();
}

int DLArrayDeviceCount(int device_type, int* out) {
  API_BEGIN();
  if (out == nullptr)
    throw dlarray::Error(dlarray::ErrorKind::kValue, "DLArrayDeviceCount: out is null");
  *out = dlarray::DeviceCount(device_type);
  API_END();
}

int DLArrayLoadPlugin(const char* path) {
  API_BEGIN();
  if (path == nullptr)
    throw dlarray::Error(dlarray::ErrorKind::kValue, "DLArrayLoadPlugin: path is null");
  dlarray::PluginInfo info = dlarray::LoadPlugin(path);
  if (info.status != dlarray::PluginStatus::kLoaded) {
    throw dlarray::BackendError("plugin " + info.path + ": " +
                                dlarray::PluginStatusName(info.status) + ": " + info.reason);
  }
  API_END();
}

int DLArrayInvoke(const char* op, const DLArrayHandle* inputs, int num_inputs,
                  const DLArrayHandle* outputs, int num_outputs, const double* attrs,
                  int num_attrs) {
  API_BEGIN();
  if (op == nullptr) throw dlarray::Error(dlarray::ErrorKind::kValue, "DLArrayInvoke: op is null");
  const int id = dlarray::RequireOp(op);
  // The counts first: the lists are read only up to counts the op really takes.
  dlarray::CheckOperandCounts(dlarray::GetOpInfo(id), num_inputs, num_outputs, num_attrs);
  if ((num_inputs > 0 && inputs == nullptr) || (num_outputs > 0 && outputs == nullptr)) {
    throw dlarray::Error(dlarray::ErrorKind::kValue,
                         std::string("DLArrayInvoke(") + op + "): null operand list");
  }
  if (num_attrs > 0 && attrs == nullptr) {
    throw dlarray::Error(dlarray::ErrorKind::kValue,
                         std::string("DLArrayInvoke(") + op + "): null attribute list");
  }
  std::vector<dlarray::HandleTable::Ref> refs;
  std::vector<const DLArray*> ins;
  std::vector<DLArray*> outs;
  refs.reserve(static_cast<size_t>(num_inputs) + num_outputs);
  for (int i = 0; i < num_inputs; ++i) {
    refs.push_back(Handles().Resolve(inputs[i], ("input " + std::to_string(i)).c_str()));
    ins.push_back(refs.back().dl);
  }
  for (int i = 0; i < num_outputs; ++i) {
    refs.push_back(Handles().Resolve(outputs[i], ("output " + std::to_string(i)).c_str()));
    outs.push_back(refs.back().dl);
  }
  dlarray::Invoke(id, ins.data(), num_inputs, outs.data(), num_outputs, attrs, num_attrs);
  API_END();
}

// The per-op functions, from the tables of c_api_ops.h: one signature per argument pattern.
#define DLARRAY_C_SET(fn, op) \
  int fn(DLArrayHandle arr, float value) { return Run(op, {}, arr, {value}); }
#define DLARRAY_C_UNARY(fn, op) \
  int fn(DLArrayHandle input, DLArrayHandle output) { return Run(op, {input}, output, {}); }
#define DLARRAY_C_BINARY(fn, op)                                   \
  int fn(DLArrayHandle a, DLArrayHandle b, DLArrayHandle output) { \
    return Run(op, {a, b}, output, {});                            \
  }
#define DLARRAY_C_BY_CONST(fn, op)                                 \
  int fn(DLArrayHandle input, float value, DLArrayHandle output) { \
    return Run(op, {input}, output, {value});                      \
  }
#define DLARRAY_C_MATMUL(fn, op)                                                             \
  int fn(DLArrayHandle a, int trans_a, DLArrayHandle b, int trans_b, DLArrayHandle output) { \
    return Run(op, {a, b}, output, {trans_a ? 1.0 : 0.0, trans_b ? 1.0 : 0.0});              \
  }
#define DLARRAY_C_DEFINE(fn, op, pattern) DLARRAY_C_##pattern(fn, op)

DLARRAY_C_API_OPS(DLARRAY_C_DEFINE)
DLARRAY_SEED_OPS(DLARRAY_C_DEFINE)

}  // extern "C"
