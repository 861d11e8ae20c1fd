// Extension "dlarray.rtc.v1" (dlarray/ext/rtc.h): run-time compiled kernels. This half loads
// modules and launches with the driver API, opened on first use (cuda_driver_library.h), and
// assembles the table; rtc_compile.cc compiles. Errors are reported to the core with set_error,
// like every other plugin function.
#include "rtc_ext.h"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "cuda_check.h"
#include "cuda_device.h"
#include "cuda_driver_library.h"
#include "dlarray/errors.h"
#include "dlarray/ext/rtc.h"
#include "kernel_params.h"
#include "nvrtc_library.h"
#include "rtc_common.h"

struct DLArrayRtcFunction {
  CUfunction fn = nullptr;
  std::string name;
  int device_id = 0;
  int max_threads = 0;
  int static_shared = 0;
  int max_dynamic_shared = 0;
  int registers = 0;
  int num_params = -1;
  std::atomic<int> dynamic_shared_allowed{48 * 1024};  // the driver's default without opt-in
};

struct DLArrayRtcModule {
  CUmodule module = nullptr;
  int device_id = 0;
  int kind = kDLArrayRtcCubin;
  std::string image;  // the loaded code, read for kernels' parameter counts (kernel_params.h)
  std::mutex mu;
  std::map<std::string, std::unique_ptr<DLArrayRtcFunction>> functions;
};

namespace dlarray {
namespace cuda {
namespace {

std::atomic<const DLArrayCoreApi*> g_core{nullptr};
std::atomic<CudaDevice*> g_device{nullptr};

}  // namespace

namespace rtc {

const DLArrayCoreApi* Core() noexcept { return g_core.load(std::memory_order_acquire); }

CudaDevice& TheDevice() {
  CudaDevice* d = g_device.load(std::memory_order_acquire);
  if (d == nullptr) throw BackendError("dlarray.rtc: the CUDA plugin has no device object");
  return *d;
}

}  // namespace rtc

namespace {

using rtc::Guard;
using rtc::TheDevice;
using rtc::ValueError;

// The driver, ready for work on GPU id (its context current on this thread).
const CudaDriverLibrary& DriverFor(int id) {
  const CudaDriverLibrary& drv = CudaDriverLibrary::Get();
  CudaDevice& device = TheDevice();
  const int count = device.device_count();
  if (count == 0) throw BackendError("dlarray.rtc cannot launch: " + device.unavailable_reason());
  if (!drv.ok) throw BackendError("dlarray.rtc cannot launch: " + drv.reason);
  if (id < 0 || id >= count) {
    throw DeviceError("dlarray.rtc: " + FormatDevice({kDLArrayCUDA, id}) +
                      " does not exist (this machine has " + std::to_string(count) + " GPU(s))");
  }
  return drv;
}

std::string LaunchReason() {
  const CudaDriverLibrary& drv = CudaDriverLibrary::Get();
  CudaDevice* device = g_device.load(std::memory_order_acquire);
  if (device == nullptr) return "the CUDA plugin has no device object";
  if (device->device_count() == 0) return device->unavailable_reason();
  return drv.ok ? std::string() : drv.reason;
}

int UnavailableReason(int32_t service, const char** out) {
  return Guard([&] {
    if (out == nullptr) throw ValueError("dlarray.rtc: unavailable_reason: out is null");
    if (service == kDLArrayRtcCompiling) {
      *out = NvrtcLibrary::Get().reason.c_str();
    } else if (service == kDLArrayRtcLaunching) {
      static const std::string reason = LaunchReason();  // devices and driver never change
      *out = reason.c_str();
    } else {
      throw ValueError("dlarray.rtc: unknown service " + std::to_string(service));
    }
  });
}

int DeviceArch(int32_t device_id, int32_t* arch) {
  return Guard([&] {
    CudaDevice& device = TheDevice();
    const int count = device.device_count();
    if (count == 0) throw BackendError("dlarray.rtc: no GPU: " + device.unavailable_reason());
    if (device_id < 0 || device_id >= count) {
      throw DeviceError("dlarray.rtc: " + FormatDevice({kDLArrayCUDA, device_id}) +
                        " does not exist (this machine has " + std::to_string(count) + " GPU(s))");
    }
    int major = 0;
    int minor = 0;
    CUDA_CALL(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device_id));
    CUDA_CALL(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device_id));
    *arch = major * 10 + minor;
  });
}

// Makes GPU id current on this thread with its primary context bound: the driver API needs the
// context, and a thread that never called the runtime has none even when device 0 is "current".
void MakeCurrent(const CudaDriverLibrary& drv, int id) {
  SetDevice(id);
  CUcontext ctx = nullptr;
  if (drv.CtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx != nullptr) return;
  CUDA_CALL(cudaSetDevice(id));  // binds the primary context (CUDA 12 and newer)
  if (drv.CtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx != nullptr) return;
  CUDA_CALL(cudaFree(nullptr));  // older runtimes bind it at the first call that needs it
  if (drv.CtxGetCurrent(&ctx) != CUDA_SUCCESS || ctx == nullptr) {
    throw BackendError("dlarray.rtc: no CUDA context is current for " +
                       FormatDevice({kDLArrayCUDA, id}));
  }
}

int ModuleLoad(int32_t device_id, const void* code, uint64_t size, int32_t kind,
               DLArrayRtcModule** out) {
  return Guard([&] {
    if (code == nullptr || size == 0 || out == nullptr) {
      throw ValueError("dlarray.rtc: module_load: no code");
    }
    if (kind != kDLArrayRtcCubin && kind != kDLArrayRtcPtx) {
      throw ValueError("dlarray.rtc: module_load: unknown code kind " + std::to_string(kind));
    }
    const CudaDriverLibrary& drv = DriverFor(device_id);
    TheDevice().cuda_stream(device_id);  // first use of the GPU: the runtime's context and stream
    MakeCurrent(drv, device_id);
    char error_log[4096] = {0};
    CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {error_log, reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof error_log))};
    auto module = std::make_unique<DLArrayRtcModule>();
    module->device_id = device_id;
    module->kind = kind;
    module->image.assign(static_cast<const char*>(code), static_cast<size_t>(size));
    // c_str(): the driver reads PTX up to a NUL, which the caller's bytes need not end with.
    const CUresult r =
        drv.ModuleLoadDataEx(&module->module, module->image.c_str(), 2, keys, values);
    if (r != CUDA_SUCCESS) {
      std::string msg = "dlarray.rtc: loading the compiled code on " +
                        FormatDevice({kDLArrayCUDA, device_id}) + " failed: " + drv.ErrorText(r);
      if (error_log[0] != '\0') msg += ": " + std::string(error_log);
      throw BackendError(msg);
    }
    *out = module.release();
  });
}

// Waits for the kernels of the module still queued on stream (when given), then unloads it.
void Unload(const CudaDriverLibrary& drv, int id, cudaStream_t stream, CUmodule module) noexcept {
  if (stream != nullptr && cudaSetDevice(id) == cudaSuccess) (void)cudaStreamSynchronize(stream);
  (void)drv.ModuleUnload(module);  // fails harmlessly once the driver is shutting down
  (void)cudaGetLastError();
}

void ModuleFree(DLArrayRtcModule* m) {
  if (m == nullptr) return;
  std::unique_ptr<DLArrayRtcModule> owned(m);
  const CudaDriverLibrary& drv = CudaDriverLibrary::Get();
  if (!drv.ok || m->module == nullptr) return;
  const int id = m->device_id;
  const CUmodule module = m->module;
  try {
    // Neither the wait nor the unload may happen while the stream records (a module freed by a
    // garbage collection in the middle of a recording): they wait for the recording's end.
    CudaDevice& device = TheDevice();
    const cudaStream_t stream = device.cuda_stream(id);  // made by ModuleLoad
    device.RunUnlessCapturing(id, [&drv, id, stream, module] { Unload(drv, id, stream, module); });
  } catch (...) {
    Unload(drv, id, nullptr, module);  // the plugin's device is gone (exit): nothing records
  }
}

int Attribute(const CudaDriverLibrary& drv, CUfunction_attribute a, CUfunction fn) {
  int value = 0;
  const CUresult r = drv.FuncGetAttribute(&value, a, fn);
  if (r != CUDA_SUCCESS) throw BackendError("dlarray.rtc: cuFuncGetAttribute: " + drv.ErrorText(r));
  return value;
}

// -1: unknown (launches then go unchecked). The driver's count where it has one (CUDA 13.1+),
// else the module's code says; never a probe past the last parameter, an API error that
// compute-sanitizer reports.
int ParamCount(const CudaDriverLibrary& drv, const DLArrayRtcModule& m, CUfunction fn,
               const std::string& name) {
  if (drv.FuncGetParamCount != nullptr) {
    size_t n = 0;
    if (drv.FuncGetParamCount(fn, &n) == CUDA_SUCCESS) return static_cast<int>(n);
  }
  return m.kind == kDLArrayRtcPtx ? PtxParamCount(m.image, name)
                                  : CubinParamCount(m.image.data(), m.image.size(), name);
}

int GetFunction(DLArrayRtcModule* m, const char* name, DLArrayRtcFunction** out) {
  return Guard([&] {
    if (m == nullptr || name == nullptr || out == nullptr) {
      throw ValueError("dlarray.rtc: get_function: null module or name");
    }
    std::lock_guard<std::mutex> lock(m->mu);
    auto it = m->functions.find(name);
    if (it != m->functions.end()) {
      *out = it->second.get();
      return;
    }
    const CudaDriverLibrary& drv = DriverFor(m->device_id);
    MakeCurrent(drv, m->device_id);
    auto f = std::make_unique<DLArrayRtcFunction>();
    f->name = name;
    f->device_id = m->device_id;
    const CUresult r = drv.ModuleGetFunction(&f->fn, m->module, name);
    if (r == CUDA_ERROR_NOT_FOUND) {
      throw ValueError("dlarray.rtc: the module has no kernel named '" + std::string(name) + "'");
    }
    if (r != CUDA_SUCCESS) {
      throw BackendError("dlarray.rtc: cuModuleGetFunction('" + std::string(name) +
                         "'): " + drv.ErrorText(r));
    }
    f->max_threads = Attribute(drv, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f->fn);
    f->static_shared = Attribute(drv, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f->fn);
    f->registers = Attribute(drv, CU_FUNC_ATTRIBUTE_NUM_REGS, f->fn);
    int optin = 0;
    CUDA_CALL(
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, f->device_id));
    f->max_dynamic_shared = optin > f->static_shared ? optin - f->static_shared : 0;
    f->num_params = ParamCount(drv, *m, f->fn, name);
    *out = f.get();
    m->functions.emplace(f->name, std::move(f));
  });
}

int FunctionInfo(const DLArrayRtcFunction* f, DLArrayRtcFunctionInfo* out) {
  return Guard([&] {
    if (f == nullptr || out == nullptr) throw ValueError("dlarray.rtc: function_info: null");
    DLArrayRtcFunctionInfo info{};
    info.struct_size = sizeof(DLArrayRtcFunctionInfo);
    info.name = f->name.c_str();
    info.device_id = f->device_id;
    info.max_threads_per_block = f->max_threads;
    info.static_shared_bytes = f->static_shared;
    info.max_dynamic_shared_bytes = f->max_dynamic_shared;
    info.num_registers = f->registers;
    info.num_params = f->num_params;
    const uint64_t caller = out->struct_size;
    std::memcpy(out, &info,
                static_cast<size_t>(caller < info.struct_size ? caller : info.struct_size));
    out->struct_size = caller;
  });
}

std::string Dims(const uint32_t d[3]) {
  return "(" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) +
         ")";
}

std::string Who(const DLArrayRtcFunction& f) { return "dlarray.rtc: kernel '" + f.name + "'"; }

// Checks a launch against the kernel's and the device's limits (messages built only on error).
void CheckConfig(const DLArrayRtcFunction& f, const uint32_t grid[3], const uint32_t block[3],
                 uint32_t shared_mem) {
  static const uint32_t kGridMax[3] = {2147483647u, 65535u, 65535u};
  static const uint32_t kBlockMax[3] = {1024u, 1024u, 64u};
  for (int i = 0; i < 3; ++i) {
    if (grid[i] == 0 || grid[i] > kGridMax[i]) {
      throw ValueError(Who(f) + ": grid " + Dims(grid) +
                       " is out of range (each size from 1; at most " + Dims(kGridMax) + ")");
    }
    if (block[i] == 0 || block[i] > kBlockMax[i]) {
      throw ValueError(Who(f) + ": block " + Dims(block) +
                       " is out of range (each size from 1; at most " + Dims(kBlockMax) + ")");
    }
  }
  const uint64_t threads = uint64_t{block[0]} * block[1] * block[2];
  if (threads > static_cast<uint64_t>(f.max_threads)) {
    throw ValueError(Who(f) + ": a block of " + std::to_string(threads) + " threads " +
                     Dims(block) + " exceeds the kernel's limit of " +
                     std::to_string(f.max_threads) + " threads per block (" +
                     std::to_string(f.registers) + " registers per thread)");
  }
  if (shared_mem > static_cast<uint32_t>(f.max_dynamic_shared)) {
    throw ValueError(Who(f) + ": " + std::to_string(shared_mem) +
                     " bytes of dynamic shared memory exceed what " +
                     FormatDevice({kDLArrayCUDA, f.device_id}) +
                     " allows it: " + std::to_string(f.max_dynamic_shared) + " bytes (" +
                     std::to_string(f.static_shared) + " more are declared in the kernel)");
  }
}

int Launch(const DLArrayRtcFunction* fc, const uint32_t grid[3], const uint32_t block[3],
           uint32_t shared_mem, void** args, int32_t device_id, void* stream) {
  return Guard([&] {
    if (fc == nullptr || grid == nullptr || block == nullptr) {
      throw ValueError("dlarray.rtc: launch: null function, grid or block");
    }
    auto& f = const_cast<DLArrayRtcFunction&>(*fc);
    if (device_id != f.device_id) {
      throw DeviceError("dlarray.rtc: kernel '" + f.name + "' is loaded on " +
                        FormatDevice({kDLArrayCUDA, f.device_id}) + ", not on " +
                        FormatDevice({kDLArrayCUDA, device_id}));
    }
    CheckConfig(f, grid, block, shared_mem);
    const CudaDriverLibrary& drv = CudaDriverLibrary::Get();
    if (static_cast<int>(shared_mem) > f.dynamic_shared_allowed.load(std::memory_order_relaxed)) {
      const CUresult r = drv.FuncSetAttribute(f.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                              static_cast<int>(shared_mem));
      if (r != CUDA_SUCCESS) {
        throw BackendError("dlarray.rtc: kernel '" + f.name + "': allowing " +
                           std::to_string(shared_mem) +
                           " bytes of dynamic shared memory failed: " + drv.ErrorText(r));
      }
      f.dynamic_shared_allowed.store(static_cast<int>(shared_mem), std::memory_order_relaxed);
    }
    if (stream == nullptr) stream = TheDevice().cuda_stream(device_id);
    MakeCurrent(drv, device_id);
    const CUresult r =
        drv.LaunchKernel(f.fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared_mem,
                         static_cast<CUstream>(stream), args, nullptr);
    if (r != CUDA_SUCCESS) {
      throw BackendError("dlarray.rtc: launching kernel '" + f.name + "' on " +
                         FormatDevice({kDLArrayCUDA, device_id}) + " (grid " + Dims(grid) +
                         ", block " + Dims(block) + ", " + std::to_string(shared_mem) +
                         " bytes of shared memory) failed: " + drv.ErrorText(r));
    }
  });
}

using rtc::Compile;
using rtc::NvrtcVersion;
using rtc::ProgramCode;
using rtc::ProgramCompiled;
using rtc::ProgramFree;
using rtc::ProgramLog;
using rtc::ProgramLoweredName;
using rtc::SupportedArchs;

const DLArrayRtcExtV1 kRtc = {
    sizeof(DLArrayRtcExtV1),
    &UnavailableReason,
    &NvrtcVersion,
    &SupportedArchs,
    &DeviceArch,
    &Compile,
    &ProgramCompiled,
    &ProgramLog,
    &ProgramCode,
    &ProgramLoweredName,
    &ProgramFree,
    &ModuleLoad,
    &ModuleFree,
    &GetFunction,
    &FunctionInfo,
    &Launch,
};

}  // namespace

void SetRtcCoreApi(const DLArrayCoreApi* core) { g_core.store(core, std::memory_order_release); }

const void* RtcExtension(CudaDevice* device) {
  g_device.store(device, std::memory_order_release);
  return &kRtc;
}

}  // namespace cuda
}  // namespace dlarray
