/*!
 * \file program_cache.cc
 * \brief ProgramCache (see program_cache.h).
 */
#include "program_cache.h"

#include <vector>

#include "cl_check.h"
#include "disk_cache.h"
#include "dlarray/errors.h"
#include "kernel_common.h"
#include "opencl_device.h"

namespace dlarray::opencl {
namespace {

// Bump when the way entries are made changes (the file names, what a binary holds).
constexpr const char* kFormat = "dlarray-opencl-program-1";
constexpr const char* kNamespace = "opencl";
constexpr size_t kMaxLog = 8000;

std::string BuildLog(cl_program program, cl_device_id device) {
  size_t size = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) !=
          CL_SUCCESS ||
      size == 0) {
    return "";
  }
  std::string log(size, '\0');
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, &log[0], nullptr) !=
      CL_SUCCESS) {
    return "";
  }
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  if (log.size() > kMaxLog) log = log.substr(0, kMaxLog) + "\n[... build log cut]";
  return log;
}

std::string Binary(cl_program program) {
  size_t size = 0;
  CL_CALL(clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, nullptr));
  if (size == 0) return "";
  std::string binary(size, '\0');
  unsigned char* ptr = reinterpret_cast<unsigned char*>(&binary[0]);
  CL_CALL(clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof(ptr), &ptr, nullptr));
  return binary;
}

std::string KeyJson(const std::vector<std::string>& parts) {
  std::string out = "[";
  for (size_t i = 0; i < parts.size(); ++i) {
    out += (i ? ", " : "") + disk_cache::JsonString(parts[i]);
  }
  return out + "]\n";
}

}  // namespace

ProgramCache::ProgramCache(cl_context context, const DeviceInfo& info, std::string where)
    : context_(context), info_(info), where_(std::move(where)) {}

// Programs and kernels are left to the process exit, like their context.
ProgramCache::~ProgramCache() = default;

std::string ProgramCache::DiskStatus() {
  try {
    return disk_cache::CacheDir() + "/" + kNamespace;
  } catch (const std::exception& e) {
    return std::string("disabled: ") + e.what();
  }
}

cl_kernel ProgramCache::kernel(const ProgramSource& src, const std::string& options,
                               const char* name) {
  std::lock_guard<std::mutex> lock(mu_);
  cl_program& program = programs_[{src.source, options}];
  if (program == nullptr) program = Build(src, options);
  cl_kernel& kernel = kernels_[{program, name}];
  if (kernel == nullptr) {
    cl_int err = CL_SUCCESS;
    kernel = clCreateKernel(program, name, &err);
    if (err != CL_SUCCESS) {
      kernel = nullptr;
      ThrowClError(err, std::string("clCreateKernel(") + name + ") of program '" + src.name + "'",
                   __FILE__, __LINE__);
    }
  }
  return kernel;
}

cl_program ProgramCache::FromSource(const std::string& source, const std::string& options,
                                    const ProgramSource& src) {
  const char* text = source.c_str();
  const size_t length = source.size();
  cl_int err = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(context_, 1, &text, &length, &err);
  CL_CHECK(err, std::string("clCreateProgramWithSource(") + src.name + ")");
  err = clBuildProgram(program, 1, &info_.device, options.c_str(), nullptr, nullptr);
  if (err != CL_SUCCESS) {
    const std::string log = BuildLog(program, info_.device);
    (void)clReleaseProgram(program);
    throw BackendError(where_ + ": clBuildProgram(" + src.name + ", \"" + options +
                       "\") failed: " + ClErrorText(err) + (log.empty() ? "" : "\n" + log));
  }
  return program;
}

cl_program ProgramCache::FromBinary(const std::string& binary, const std::string& options) {
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(binary.data());
  const size_t length = binary.size();
  cl_int status = CL_SUCCESS;
  cl_int err = CL_SUCCESS;
  cl_program program =
      clCreateProgramWithBinary(context_, 1, &info_.device, &length, &bytes, &status, &err);
  if (err != CL_SUCCESS || status != CL_SUCCESS) {
    if (program != nullptr) (void)clReleaseProgram(program);
    return nullptr;
  }
  if (clBuildProgram(program, 1, &info_.device, options.c_str(), nullptr, nullptr) != CL_SUCCESS) {
    (void)clReleaseProgram(program);
    return nullptr;
  }
  return program;
}

cl_program ProgramCache::Build(const ProgramSource& src, const std::string& options) {
  const std::string source = std::string(kKernelPreamble) + src.source;
  const std::vector<std::string> parts = {kFormat,
                                          source,
                                          options,
                                          info_.platform_name + " | " + info_.platform_version,
                                          info_.name + " | " + info_.device_version,
                                          info_.driver_version};
  std::string entry;
  try {
    entry = disk_cache::EntryDir(kNamespace, disk_cache::MakeKey(parts));
  } catch (const std::exception&) {
    return FromSource(source, options, src);  // no usable cache folder: build every time
  }
  const std::string path = entry + "/program.bin";
  disk_cache::FolderLock lock(entry);
  if (std::optional<std::string> binary = disk_cache::LoadBytes(path)) {
    if (cl_program program = FromBinary(*binary, options)) return program;
    // The driver rejected it (another driver build, a damaged file): rebuilt and replaced below.
  }
  cl_program program = FromSource(source, options, src);
  try {
    const std::string binary = Binary(program);
    if (!binary.empty()) {
      disk_cache::StoreBytes(entry + "/key.json", KeyJson(parts));
      disk_cache::StoreBytes(path, binary);
    }
  } catch (const std::exception&) {
    // A full disk or a read-only cache costs the next process a build, nothing more.
  }
  return program;
}

}  // namespace dlarray::opencl
