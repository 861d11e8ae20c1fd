// The compiling half of "dlarray.rtc.v1": NVRTC (opened on first use, nvrtc_library.h) turns
// source into a cubin for one architecture, or PTX for a GPU newer than NVRTC. Needs no GPU.
#include <memory>
#include <string>
#include <vector>

#include "nvrtc_library.h"
#include "rtc_common.h"

struct DLArrayRtcProgram {
  bool compiled = false;
  std::string log;
  std::string code;
  int32_t kind = 0;
  std::vector<std::string> lowered;
};

namespace dlarray {
namespace cuda {
namespace rtc {
namespace {

const NvrtcLibrary& Nvrtc() {
  const NvrtcLibrary& nv = NvrtcLibrary::Get();
  if (!nv.ok) throw BackendError("dlarray.rtc cannot compile: " + nv.reason);
  return nv;
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

}  // namespace

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

}  // namespace rtc
}  // namespace cuda
}  // namespace dlarray
