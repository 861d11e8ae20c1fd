// Extension "dlarray.rtc.v1" (dlarray/ext/rtc.h): run-time compiled kernels. NVRTC and the driver
// API are opened on first use (nvrtc_library.h, cuda_driver_library.h); errors are reported to
// the core with set_error, like every other plugin function.
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
#include "nvrtc_library.h"

struct DLArrayRtcProgram {
  bool compiled = false;
  std::string log;
  std::string code;
  int32_t kind = 0;
  std::vector<std::string> lowered;
};

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
  std::mutex mu;
  std::map<std::string, std::unique_ptr<DLArrayRtcFunction>> functions;
};

namespace dlarray {
namespace cuda {
namespace {

std::atomic<const DLArrayCoreApi*> g_core{nullptr};
std::atomic<CudaDevice*> g_device{nullptr};

void Report(ErrorKind kind, const char* message) noexcept {
  if (const DLArrayCoreApi* core = g_core.load(std::memory_order_acquire)) {
    core->set_error(static_cast<int32_t>(kind), message);
  }
}

// Runs f; an exception becomes -1 and the error recorded with the core.
template <typename F>
int Guard(F&& f) noexcept {
  try {
    f();
    return 0;
  } catch (const Error& e) {
    Report(e.kind(), e.what());
  } catch (const std::bad_alloc&) {
    Report(ErrorKind::kMemory, "dlarray.rtc: out of host memory");
  } catch (const std::exception& e) {
    Report(ErrorKind::kRuntime, e.what());
  } catch (...) {
    Report(ErrorKind::kRuntime, "dlarray.rtc: unknown C++ exception");
  }
  return -1;
}

Error ValueError(const std::string& message) { return Error(ErrorKind::kValue, message); }

std::string Gpu(int id) { return "gpu(" + std::to_string(id) + ")"; }

const NvrtcLibrary& Nvrtc() {
  const NvrtcLibrary& nv = NvrtcLibrary::Get();
  if (!nv.ok) throw BackendError("dlarray.rtc cannot compile: " + nv.reason);
  return nv;
}

CudaDevice& TheDevice() {
  CudaDevice* d = g_device.load(std::memory_order_acquire);
  if (d == nullptr) throw BackendError("dlarray.rtc: the CUDA plugin has no device object");
  return *d;
}

// The driver, ready for work on GPU id (its context current on this thread).
const CudaDriverLibrary& DriverFor(int id) {
  const CudaDriverLibrary& drv = CudaDriverLibrary::Get();
  CudaDevice& device = TheDevice();
  const int count = device.device_count();
  if (count == 0) throw BackendError("dlarray.rtc cannot launch: " + device.unavailable_reason());
  if (!drv.ok) throw BackendError("dlarray.rtc cannot launch: " + drv.reason);
  if (id < 0 || id >= count) {
    throw DeviceError("dlarray.rtc: " + Gpu(id) + " does not exist (this machine has " +
                      std::to_string(count) + " GPU(s))");
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

int NvrtcVersion(int32_t* major, int32_t* minor, const char** library_path) {
  return Guard([&] {
    const NvrtcLibrary& nv = Nvrtc();
    if (major != nullptr) *major = nv.major;
    if (minor != nullptr) *minor = nv.minor;
    if (library_path != nullptr) *library_path = nv.path.c_str();
  });
}

int SupportedArchs(const int32_t** archs, int32_t* count) {
  return Guard([&] {
    const NvrtcLibrary& nv = Nvrtc();
    static_assert(sizeof(int) == sizeof(int32_t), "int is 32 bits");
    if (archs != nullptr) *archs = reinterpret_cast<const int32_t*>(nv.archs.data());
    if (count != nullptr) *count = static_cast<int32_t>(nv.archs.size());
  });
}

int DeviceArch(int32_t device_id, int32_t* arch) {
  return Guard([&] {
    CudaDevice& device = TheDevice();
    const int count = device.device_count();
    if (count == 0) throw BackendError("dlarray.rtc: no GPU: " + device.unavailable_reason());
    if (device_id < 0 || device_id >= count) {
      throw DeviceError("dlarray.rtc: " + Gpu(device_id) + " does not exist (this machine has " +
                        std::to_string(count) + " GPU(s))");
    }
    int major = 0;
    int minor = 0;
    CUDA_CALL(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device_id));
    CUDA_CALL(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device_id));
    *arch = major * 10 + minor;
  });
}

// The architecture option for arch, and whether it gives machine code.
std::string ArchOption(const NvrtcLibrary& nv, int arch, bool* cubin) {
  if (arch < 10 || arch > 10000) {
    throw ValueError("dlarray.rtc: architecture " + std::to_string(arch) +
                     " is not a compute capability (e.g. 90 for sm_90)");
  }
  for (int a : nv.archs) {
    if (a == arch) {
      *cubin = true;
      return "--gpu-architecture=sm_" + std::to_string(arch);
    }
  }
  int below = 0;
  for (int a : nv.archs) {
    if (a < arch) below = a;
  }
  if (below == 0) {
    throw ValueError("dlarray.rtc: NVRTC " + std::to_string(nv.major) + "." +
                     std::to_string(nv.minor) + " cannot compile for sm_" + std::to_string(arch) +
                     ": it supports sm_" + std::to_string(nv.archs.front()) + " to sm_" +
                     std::to_string(nv.archs.back()));
  }
  *cubin = false;  // a newer GPU than this NVRTC knows: PTX, which its driver compiles
  return "--gpu-architecture=compute_" + std::to_string(below);
}

struct ProgramGuard {
  const NvrtcLibrary& nv;
  nvrtcProgram prog = nullptr;
  ~ProgramGuard() {
    if (prog != nullptr) (void)nv.DestroyProgram(&prog);
  }
};

void Check(const NvrtcLibrary& nv, nvrtcResult r, const char* what) {
  if (r != NVRTC_SUCCESS) {
    throw BackendError(std::string("dlarray.rtc: ") + what + " failed: " + nv.ErrorText(r));
  }
}

int Compile(const char* source, const char* program_name, const char* const* options,
            int32_t num_options, const char* const* name_expressions, int32_t num_names,
            int32_t arch, DLArrayRtcProgram** out) {
  return Guard([&] {
    if (source == nullptr || out == nullptr) throw ValueError("dlarray.rtc: compile: null source");
    if (num_options < 0 || num_names < 0 || (num_options > 0 && options == nullptr) ||
        (num_names > 0 && name_expressions == nullptr)) {
      throw ValueError("dlarray.rtc: compile: bad option or name lists");
    }
    const NvrtcLibrary& nv = Nvrtc();
    std::vector<std::string> owned;
    for (int i = 0; i < num_options; ++i) {
      if (options[i] == nullptr) throw ValueError("dlarray.rtc: compile: a null option");
      owned.emplace_back(options[i]);
    }
    bool want_cubin = true;  // arch 0: machine code when the options name an sm_ architecture
    if (arch != 0) owned.push_back(ArchOption(nv, arch, &want_cubin));
    std::vector<const char*> opts;
    for (const std::string& o : owned) opts.push_back(o.c_str());

    auto program = std::make_unique<DLArrayRtcProgram>();
    ProgramGuard guard{nv};
    Check(nv,
          nv.CreateProgram(&guard.prog, source, program_name != nullptr ? program_name : "rtc.cu",
                           0, nullptr, nullptr),
          "nvrtcCreateProgram");
    for (int i = 0; i < num_names; ++i) {
      if (name_expressions[i] == nullptr) throw ValueError("dlarray.rtc: a null name expression");
      Check(nv, nv.AddNameExpression(guard.prog, name_expressions[i]), "nvrtcAddNameExpression");
    }
    const nvrtcResult compiled =
        nv.CompileProgram(guard.prog, static_cast<int>(opts.size()), opts.data());
    size_t log_size = 0;
    if (nv.GetProgramLogSize(guard.prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
      program->log.resize(log_size);
      if (nv.GetProgramLog(guard.prog, &program->log[0]) != NVRTC_SUCCESS) program->log.clear();
      while (!program->log.empty() && program->log.back() == '\0') program->log.pop_back();
    }
    if (compiled != NVRTC_SUCCESS) {
      if (compiled != NVRTC_ERROR_COMPILATION) {
        program->log += (program->log.empty() ? "" : "\n") + std::string("nvrtcCompileProgram: ") +
                        nv.ErrorText(compiled);
      }
      *out = program.release();
      return;
    }
    size_t size = 0;
    if (want_cubin && nv.GetCUBINSize(guard.prog, &size) == NVRTC_SUCCESS && size > 0) {
      program->code.resize(size);
      Check(nv, nv.GetCUBIN(guard.prog, &program->code[0]), "nvrtcGetCUBIN");
      program->kind = kDLArrayRtcCubin;
    } else {
      Check(nv, nv.GetPTXSize(guard.prog, &size), "nvrtcGetPTXSize");
      program->code.resize(size);
      Check(nv, nv.GetPTX(guard.prog, &program->code[0]), "nvrtcGetPTX");
      program->kind = kDLArrayRtcPtx;  // NUL-terminated: size counts the terminator
    }
    for (int i = 0; i < num_names; ++i) {
      const char* lowered = nullptr;
      Check(nv, nv.GetLoweredName(guard.prog, name_expressions[i], &lowered),
            "nvrtcGetLoweredName");
      program->lowered.emplace_back(lowered != nullptr ? lowered : "");
    }
    program->compiled = true;
    *out = program.release();
  });
}

int32_t ProgramCompiled(const DLArrayRtcProgram* p) { return p != nullptr && p->compiled; }

const char* ProgramLog(const DLArrayRtcProgram* p) { return p != nullptr ? p->log.c_str() : ""; }

const void* ProgramCode(const DLArrayRtcProgram* p, uint64_t* size, int32_t* kind) {
  const bool has = p != nullptr && p->compiled;
  if (size != nullptr) *size = has ? p->code.size() : 0;
  if (kind != nullptr) *kind = has ? p->kind : 0;
  return has ? p->code.data() : nullptr;
}

const char* ProgramLoweredName(const DLArrayRtcProgram* p, int32_t index) {
  if (p == nullptr || index < 0 || static_cast<size_t>(index) >= p->lowered.size()) return nullptr;
  return p->lowered[static_cast<size_t>(index)].c_str();
}

void ProgramFree(DLArrayRtcProgram* p) { delete p; }

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
    throw BackendError("dlarray.rtc: no CUDA context is current for " + Gpu(id));
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
    std::string ptx;
    const void* image = code;
    if (kind == kDLArrayRtcPtx) {  // the driver reads PTX up to a NUL
      ptx.assign(static_cast<const char*>(code), static_cast<size_t>(size));
      image = ptx.c_str();
    }
    char error_log[4096] = {0};
    CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {error_log, reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof error_log))};
    auto module = std::make_unique<DLArrayRtcModule>();
    module->device_id = device_id;
    const CUresult r = drv.ModuleLoadDataEx(&module->module, image, 2, keys, values);
    if (r != CUDA_SUCCESS) {
      std::string msg = "dlarray.rtc: loading the compiled code on " + Gpu(device_id) +
                        " failed: " + drv.ErrorText(r);
      if (error_log[0] != '\0') msg += ": " + std::string(error_log);
      throw BackendError(msg);
    }
    *out = module.release();
  });
}

void ModuleFree(DLArrayRtcModule* m) {
  if (m == nullptr) return;
  const CudaDriverLibrary& drv = CudaDriverLibrary::Get();
  if (drv.ok && m->module != nullptr) {
    try {
      // Kernels of the module may still be queued: let them finish first.
      (void)cudaStreamSynchronize(TheDevice().cuda_stream(m->device_id));
      SetDevice(m->device_id);
    } catch (...) {
      // A failed device: unloading below fails harmlessly too.
    }
    (void)drv.ModuleUnload(m->module);  // fails harmlessly once the driver is shutting down
    (void)cudaGetLastError();
  }
  delete m;
}

int Attribute(const CudaDriverLibrary& drv, CUfunction_attribute a, CUfunction fn) {
  int value = 0;
  const CUresult r = drv.FuncGetAttribute(&value, a, fn);
  if (r != CUDA_SUCCESS) throw BackendError("dlarray.rtc: cuFuncGetAttribute: " + drv.ErrorText(r));
  return value;
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
    if (drv.FuncGetParamInfo != nullptr) {
      int n = 0;
      size_t offset = 0;
      size_t psize = 0;
      CUresult last = CUDA_SUCCESS;
      while (n < 4096 && (last = drv.FuncGetParamInfo(f->fn, static_cast<size_t>(n), &offset,
                                                      &psize)) == CUDA_SUCCESS) {
        ++n;
      }
      // Past the last parameter the driver says "invalid value"; anything else: it cannot tell.
      f->num_params = last == CUDA_ERROR_INVALID_VALUE ? n : -1;
    }
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
                     " bytes of dynamic shared memory exceed what " + Gpu(f.device_id) +
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
      throw DeviceError("dlarray.rtc: kernel '" + f.name + "' is loaded on " + Gpu(f.device_id) +
                        ", not on " + Gpu(device_id));
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
      throw BackendError("dlarray.rtc: launching kernel '" + f.name + "' on " + Gpu(device_id) +
                         " (grid " + Dims(grid) + ", block " + Dims(block) + ", " +
                         std::to_string(shared_mem) +
                         " bytes of shared memory) failed: " + drv.ErrorText(r));
    }
  });
}

const DLArrayRtcExt kRtc = {
    sizeof(DLArrayRtcExt), &UnavailableReason,
    &NvrtcVersion,         &SupportedArchs,
    &DeviceArch,           &Compile,
    &ProgramCompiled,      &ProgramLog,
    &ProgramCode,          &ProgramLoweredName,
    &ProgramFree,          &ModuleLoad,
    &ModuleFree,           &GetFunction,
    &FunctionInfo,         &Launch,
};

}  // namespace

void SetRtcCoreApi(const DLArrayCoreApi* core) { g_core.store(core, std::memory_order_release); }

const void* RtcExtension(CudaDevice* device) {
  g_device.store(device, std::memory_order_release);
  return &kRtc;
}

}  // namespace cuda
}  // namespace dlarray
