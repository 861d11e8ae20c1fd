// The C API: every entry point turns exceptions into -1 plus a thread-local message.
#include "dlarray/c_runtime_api.h"

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "core_ops.h"
#include "dlarray/runtime.h"

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

// Handles made by DLArrayAlloc, and those freed since (until their address is reused), so that a
// freed handle is reported as such instead of being read.
class HandleTable {
 public:
  DLArrayHandle Add(std::shared_ptr<dlarray::Array> a) {
    std::lock_guard<std::mutex> lock(mu_);
    DLArrayHandle h = a->dl();
    freed_.erase(h);
    live_[h] = std::move(a);
    return h;
  }
  void Remove(DLArrayHandle h) {
    std::shared_ptr<dlarray::Array> doomed;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = live_.find(h);
      if (it == live_.end()) {
        throw dlarray::Error(dlarray::ErrorKind::kValue,
                             freed_.count(h)
                                 ? "DLArrayFree: the handle was already freed"
                                 : "DLArrayFree: the handle was not made by DLArrayAlloc");
      }
      doomed = std::move(it->second);
      live_.erase(it);
      freed_.insert(h);
    }
  }
  // Rejects null and freed handles; other pointers are taken as caller-made DLArrays.
  void Check(const DLArray* h, const char* what) {
    if (h == nullptr)
      throw dlarray::Error(dlarray::ErrorKind::kValue, std::string(what) + " is a null handle");
    std::lock_guard<std::mutex> lock(mu_);
    if (freed_.count(const_cast<DLArray*>(h))) {
      throw dlarray::Error(dlarray::ErrorKind::kValue, std::string(what) + " is a freed handle");
    }
  }

 private:
  std::mutex mu_;
  std::unordered_map<DLArrayHandle, std::shared_ptr<dlarray::Array>> live_;
  std::unordered_set<DLArrayHandle> freed_;
};

HandleTable& Handles() {
  static HandleTable* table = new HandleTable();
  return *table;
}

int Run(dlarray::CoreOp op, std::initializer_list<DLArrayHandle> in, DLArrayHandle out,
        std::initializer_list<double> attrs) {
  API_BEGIN();
  const char* names[] = {"input 0", "input 1", "input 2"};
  int i = 0;
  for (DLArrayHandle h : in) Handles().Check(h, names[i++]);
  Handles().Check(out, "output");
  DLArrayHandle outs[] = {out};
  dlarray::Invoke(op, in.begin(), static_cast<int>(in.size()), outs, 1, attrs.begin(),
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
  *out = Handles().Add(dlarray::Array::Empty(dims, ctx, dtype));
  API_END();
}

int DLArrayAlloc(const int64_t* shape, int ndim, DLContext ctx, DLArrayHandle* out) {
  return DLArrayAllocEx(shape, ndim, dlarray::kFloat32, ctx, out);
}

int DLArrayFree(DLArrayHandle handle) {
  API_BEGIN();
  if (handle == nullptr)
    throw dlarray::Error(dlarray::ErrorKind::kValue, "DLArrayFree: null handle");
  Handles().Remove(handle);
  API_END();
}

int DLArrayCopyFromTo(DLArrayHandle from, DLArrayHandle to, void* stream) {
  (void)stream;
  API_BEGIN();
  Handles().Check(from, "copy source");
  Handles().Check(to, "copy target");
  dlarray::CopyFromTo(from, to);
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
  if ((num_inputs > 0 && inputs == nullptr) || (num_outputs > 0 && outputs == nullptr)) {
    throw dlarray::Error(dlarray::ErrorKind::kValue, "DLArrayInvoke: null operand list");
  }
  for (int i = 0; i < num_inputs; ++i) Handles().Check(inputs[i], "input");
  for (int i = 0; i < num_outputs; ++i) Handles().Check(outputs[i], "output");
  dlarray::Invoke(dlarray::RequireOp(op), inputs, num_inputs, outputs, num_outputs, attrs,
                  num_attrs);
  API_END();
}

using dlarray::CoreOp;

int DLArraySet(DLArrayHandle arr, float value) { return Run(dlarray::kArraySet, {}, arr, {value}); }
int DLArrayBroadcastTo(DLArrayHandle input, DLArrayHandle output) {
  return Run(dlarray::kBroadcastTo, {input}, output, {});
}
int DLArrayReduceSumAxisZero(DLArrayHandle input, DLArrayHandle output) {
  return Run(dlarray::kReduceSumAxisZero, {input}, output, {});
}
int DLArrayMatrixElementwiseAdd(DLArrayHandle a, DLArrayHandle b, DLArrayHandle c) {
  return Run(dlarray::kMatrixElementwiseAdd, {a, b}, c, {});
}
int DLArrayMatrixElementwiseAddByConst(DLArrayHandle input, float value, DLArrayHandle output) {
  return Run(dlarray::kMatrixElementwiseAddByConst, {input}, output, {value});
}
int DLArrayMatrixElementwiseMultiply(DLArrayHandle a, DLArrayHandle b, DLArrayHandle c) {
  return Run(dlarray::kMatrixElementwiseMultiply, {a, b}, c, {});
}
int DLArrayMatrixElementwiseMultiplyByConst(DLArrayHandle input, float value,
                                            DLArrayHandle output) {
  return Run(dlarray::kMatrixElementwiseMultiplyByConst, {input}, output, {value});
}
int DLArrayMatrixMultiply(DLArrayHandle a, int trans_a, DLArrayHandle b, int trans_b,
                          DLArrayHandle c) {
  return Run(dlarray::kMatrixMultiply, {a, b}, c, {trans_a ? 1.0 : 0.0, trans_b ? 1.0 : 0.0});
}
int DLArrayRelu(DLArrayHandle input, DLArrayHandle output) {
  return Run(dlarray::kRelu, {input}, output, {});
}
int DLArrayReluGradient(DLArrayHandle input, DLArrayHandle in_grad, DLArrayHandle output) {
  return Run(dlarray::kReluGradient, {input, in_grad}, output, {});
}
int DLArraySoftmax(DLArrayHandle input, DLArrayHandle output) {
  return Run(dlarray::kSoftmax, {input}, output, {});
}
int DLArraySoftmaxCrossEntropy(DLArrayHandle y, DLArrayHandle y_, DLArrayHandle output) {
  return Run(dlarray::kSoftmaxCrossEntropy, {y, y_}, output, {});
}
int DLArrayCopy(DLArrayHandle input, DLArrayHandle output) {
  return Run(dlarray::kCopy, {input}, output, {});
}

int DLGpuArraySet(DLArrayHandle arr, float value) { return DLArraySet(arr, value); }
int DLGpuBroadcastTo(DLArrayHandle i, DLArrayHandle o) { return DLArrayBroadcastTo(i, o); }
int DLGpuReduceSumAxisZero(DLArrayHandle i, DLArrayHandle o) {
  return DLArrayReduceSumAxisZero(i, o);
}
int DLGpuMatrixElementwiseAdd(DLArrayHandle a, DLArrayHandle b, DLArrayHandle c) {
  return DLArrayMatrixElementwiseAdd(a, b, c);
}
int DLGpuMatrixElementwiseAddByConst(DLArrayHandle i, float v, DLArrayHandle o) {
  return DLArrayMatrixElementwiseAddByConst(i, v, o);
}
int DLGpuMatrixElementwiseMultiply(DLArrayHandle a, DLArrayHandle b, DLArrayHandle c) {
  return DLArrayMatrixElementwiseMultiply(a, b, c);
}
int DLGpuMatrixMultiplyByConst(DLArrayHandle i, float v, DLArrayHandle o) {
  return DLArrayMatrixElementwiseMultiplyByConst(i, v, o);
}
int DLGpuMatrixMultiply(DLArrayHandle a, int ta, DLArrayHandle b, int tb, DLArrayHandle c) {
  return DLArrayMatrixMultiply(a, ta, b, tb, c);
}
int DLGpuRelu(DLArrayHandle i, DLArrayHandle o) { return DLArrayRelu(i, o); }
int DLGpuReluGradient(DLArrayHandle i, DLArrayHandle g, DLArrayHandle o) {
  return DLArrayReluGradient(i, g, o);
}
int DLGpuSoftmax(DLArrayHandle i, DLArrayHandle o) { return DLArraySoftmax(i, o); }
int DLGpuSoftmaxCrossEntropy(DLArrayHandle y, DLArrayHandle y_, DLArrayHandle o) {
  return DLArraySoftmaxCrossEntropy(y, y_, o);
}

}  // extern "C"
