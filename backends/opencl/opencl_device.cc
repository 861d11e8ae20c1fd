/*!
 * \file opencl_device.cc
 * \brief OpenclDevice: finding and selecting devices, contexts and queues, memory and copies.
 */
#include "opencl_device.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "buffer_pool.h"
#include "cl_check.h"
#include "device_selection.h"
#include "dlarray/errors.h"
#include "dlarray/ext/mem_info.h"
#include "dlarray/ext/opencl.h"
#include "opencl_extension.h"
#include "program_cache.h"

namespace dlarray::opencl {

struct OpenclDevice::PerDevice {
  DeviceInfo info;
  std::string where;  // "opencl(0) (name)"
  std::once_flag ready_once;
  std::atomic<bool> ready{false};
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  std::unique_ptr<BufferPool> pool;
  std::unique_ptr<ProgramCache> programs;
  std::mutex launch_mu;
};

namespace {

std::string PlatformString(cl_platform_id p, cl_platform_info what) {
  size_t size = 0;
  if (clGetPlatformInfo(p, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string s(size, '\0');
  if (clGetPlatformInfo(p, what, size, &s[0], nullptr) != CL_SUCCESS) return "";
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

std::string DeviceString(cl_device_id d, cl_device_info what) {
  size_t size = 0;
  if (clGetDeviceInfo(d, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string s(size, '\0');
  if (clGetDeviceInfo(d, what, size, &s[0], nullptr) != CL_SUCCESS) return "";
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

template <typename T>
T DeviceValue(cl_device_id d, cl_device_info what, T fallback) {
  T value{};
  return clGetDeviceInfo(d, what, sizeof(T), &value, nullptr) == CL_SUCCESS ? value : fallback;
}

std::string GiB(uint64_t n) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f GiB", static_cast<double>(n) / (1024.0 * 1024 * 1024));
  return text;
}

struct Found {
  DeviceCandidate candidate;
  cl_platform_id platform;
  cl_device_id device;
};

DeviceInfo Describe(const Found& f) {
  DeviceInfo info;
  info.platform = f.platform;
  info.device = f.device;
  info.name = f.candidate.device_name;
  info.platform_name = f.candidate.platform_name;
  info.platform_vendor = f.candidate.platform_vendor;
  info.platform_version = PlatformString(f.platform, CL_PLATFORM_VERSION);
  info.device_version = DeviceString(f.device, CL_DEVICE_VERSION);
  info.driver_version = DeviceString(f.device, CL_DRIVER_VERSION);
  info.global_mem = DeviceValue<cl_ulong>(f.device, CL_DEVICE_GLOBAL_MEM_SIZE, 0);
  info.max_alloc = DeviceValue<cl_ulong>(f.device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, 0);
  info.max_work_group = DeviceValue<size_t>(f.device, CL_DEVICE_MAX_WORK_GROUP_SIZE, 1);
  info.compute_units = DeviceValue<cl_uint>(f.device, CL_DEVICE_MAX_COMPUTE_UNITS, 1);
  info.is_cpu =
      (DeviceValue<cl_device_type>(f.device, CL_DEVICE_TYPE, 0) & CL_DEVICE_TYPE_CPU) != 0;
  // DLARRAY_OPENCL_KERNELS=gpu|cpu picks the kernel variants regardless of the device type, so
  // that the GPU variants can be tested on a CPU implementation (PoCL) and the other way round.
  if (const char* kinds = std::getenv("DLARRAY_OPENCL_KERNELS")) {
    if (std::string(kinds) == "gpu") info.is_cpu = false;
    if (std::string(kinds) == "cpu") info.is_cpu = true;
  }
  const std::string ext = DeviceString(f.device, CL_DEVICE_EXTENSIONS);
  info.fp64 = ext.find("cl_khr_fp64") != std::string::npos;
  const cl_device_fp_config fp32 =
      DeviceValue<cl_device_fp_config>(f.device, CL_DEVICE_SINGLE_FP_CONFIG, 0);
  info.fp32_correct_divide = (fp32 & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
  return info;
}

}  // namespace

OpenclDevice::OpenclDevice() = default;

// Contexts, queues and buffers are left to the process exit: the OpenCL implementation may be
// torn down before this object, and calls into it from a static destructor are not safe.
OpenclDevice::~OpenclDevice() {
  for (auto& d : devices_) {
    (void)d.release();  // NOLINT(bugprone-unused-return-value): leaked on purpose (see above)
  }
}

void OpenclDevice::FindDevices() {
  found_pid_ = static_cast<long>(getpid());
  const char* env = std::getenv("DLARRAY_OPENCL_DEVICES");
  selection_ = env != nullptr ? env : "";
  cl_uint num_platforms = 0;
  cl_int err = clGetPlatformIDs(0, nullptr, &num_platforms);
  if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && num_platforms == 0)) {
    unavailable_reason_ =
        "no OpenCL platform: the ICD loader found no OpenCL implementation (clGetPlatformIDs: " +
        ClErrorText(err == CL_SUCCESS ? CL_PLATFORM_NOT_FOUND_KHR : err) +
        "); install one, e.g. Debian's pocl-opencl-icd, or a GPU vendor's driver (ICD files are "
        "read from /etc/OpenCL/vendors or OCL_ICD_VENDORS)";
    return;
  }
  if (err != CL_SUCCESS) {
    unavailable_reason_ = "OpenCL is unusable: clGetPlatformIDs failed: " + ClErrorText(err);
    return;
  }
  std::vector<cl_platform_id> platforms(num_platforms);
  err = clGetPlatformIDs(num_platforms, platforms.data(), nullptr);
  if (err != CL_SUCCESS) {
    unavailable_reason_ = "OpenCL is unusable: clGetPlatformIDs failed: " + ClErrorText(err);
    return;
  }
  std::vector<Found> found;
  std::string empty_platforms;
  for (cl_platform_id p : platforms) {
    const std::string pname = PlatformString(p, CL_PLATFORM_NAME);
    const std::string vendor = PlatformString(p, CL_PLATFORM_VENDOR);
    cl_uint n = 0;
    err = clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n);
    if (err != CL_SUCCESS || n == 0) {
      empty_platforms += (empty_platforms.empty() ? "" : ", ") + ("\"" + pname + "\"") +
                         (err == CL_SUCCESS || err == CL_DEVICE_NOT_FOUND
                              ? std::string()
                              : " (clGetDeviceIDs: " + ClErrorText(err) + ")");
      continue;
    }
    std::vector<cl_device_id> ids(n);
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, ids.data(), nullptr) != CL_SUCCESS) continue;
    for (cl_device_id d : ids) {
      found.push_back(Found{{pname, vendor, DeviceString(d, CL_DEVICE_NAME)}, p, d});
    }
  }
  if (found.empty()) {
    unavailable_reason_ =
        "no OpenCL device: the platform(s) " + empty_platforms + " have no device (clGetDeviceIDs)";
    return;
  }
  std::vector<DeviceCandidate> candidates;
  for (const Found& f : found) candidates.push_back(f.candidate);
  const DeviceSelection sel = SelectDevices(selection_, candidates);
  if (!sel.error.empty()) {
    unavailable_reason_ = "no OpenCL device selected: " + sel.error;
    return;
  }
  std::vector<std::unique_ptr<PerDevice>> devices;
  for (size_t index : sel.chosen) {
    auto d = std::make_unique<PerDevice>();
    d->info = Describe(found[index]);
    d->where = "opencl(" + std::to_string(devices.size()) + ") (" + d->info.name + ")";
    devices.push_back(std::move(d));
  }
  devices_ = std::move(devices);
  count_ = static_cast<int>(devices_.size());
}

int OpenclDevice::device_count() {
  std::call_once(found_once_, [this] { FindDevices(); });
  return count_;
}

std::string OpenclDevice::unavailable_reason() {
  return device_count() == 0 ? unavailable_reason_ : std::string();
}

OpenclDevice::PerDevice& OpenclDevice::At(int id) {
  if (id < 0 || id >= device_count()) {
    throw DeviceError("opencl(" + std::to_string(id) + ") does not exist: " +
                      (count_ == 0 ? unavailable_reason_
                                   : "there are " + std::to_string(count_) + " OpenCL device(s)"));
  }
  return *devices_[static_cast<size_t>(id)];
}

// OpenCL implementations run worker threads (PoCL) or driver state that a fork()ed child does not
// inherit: its first OpenCL call would hang. So a child gets an error instead.
void OpenclDevice::CheckProcess() const {
  if (found_pid_ != 0 && static_cast<long>(getpid()) != found_pid_) {
    throw BackendError("opencl: this process was fork()ed from process " +
                       std::to_string(found_pid_) +
                       ", which had started OpenCL; OpenCL cannot be used in a forked child "
                       "(its runtime's threads are not copied). Start workers with "
                       "multiprocessing's 'spawn' or 'forkserver' method instead");
  }
}

OpenclDevice::PerDevice& OpenclDevice::Ready(int id) {
  CheckProcess();
  PerDevice& d = At(id);
  if (d.ready.load(std::memory_order_acquire)) return d;
  std::call_once(d.ready_once, [&] {
    const cl_context_properties props[] = {
        CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(d.info.platform), 0};
    cl_int err = CL_SUCCESS;
    cl_context context = clCreateContext(props, 1, &d.info.device, nullptr, nullptr, &err);
    CL_CHECK(err, "clCreateContext for " + d.where);
    cl_command_queue queue = clCreateCommandQueue(context, d.info.device, 0, &err);
    if (err != CL_SUCCESS) {
      (void)clReleaseContext(context);
      ThrowClError(err, "clCreateCommandQueue for " + d.where, __FILE__, __LINE__);
    }
    d.context = context;
    d.queue = queue;
    d.pool = std::make_unique<BufferPool>(context, d.where, d.info.max_alloc, d.info.global_mem);
    d.programs = std::make_unique<ProgramCache>(context, d.info, d.where);
    d.ready.store(true, std::memory_order_release);
  });
  return d;
}

std::string OpenclDevice::device_name(int id) {
  const DeviceInfo& i = At(id).info;
  // "OpenCL 3.0 PoCL HSTR: ..." -> "OpenCL 3.0": the version, not the vendor's details.
  const size_t second = i.device_version.find(' ', i.device_version.find(' ') + 1);
  return i.name + " (" + i.platform_name + ", " + i.device_version.substr(0, second) + ", " +
         GiB(i.global_mem) + ")";
}

const DeviceInfo& OpenclDevice::info(int id) { return At(id).info; }
cl_context OpenclDevice::context(int id) { return Ready(id).context; }
cl_command_queue OpenclDevice::queue(int id) { return Ready(id).queue; }
ProgramCache& OpenclDevice::programs(int id) { return *Ready(id).programs; }
std::mutex& OpenclDevice::launch_mutex(int id) { return At(id).launch_mu; }

void* OpenclDevice::allocate(int id, size_t nbytes) {
  PerDevice& d = Ready(id);
  size_t size = 0;
  cl_mem mem = d.pool->allocate(nbytes, &size);
  try {
    buffers_.Insert(mem, id, size);
  } catch (...) {
    d.pool->release(mem, size);
    throw;
  }
  return mem;  // the handle itself: the device has no pointer arithmetic (capabilities 0)
}

void OpenclDevice::free(int id, void* ptr, size_t nbytes) noexcept {
  (void)nbytes;
  const BufferRef b = buffers_.Erase(ptr);
  if (b.mem == nullptr || id < 0 || id >= count_) return;
  devices_[static_cast<size_t>(id)]->pool->release(b.mem, b.size);
}

cl_mem OpenclDevice::scratch(int id, size_t nbytes, size_t* size) {
  return Ready(id).pool->allocate(nbytes == 0 ? 1 : nbytes, size);
}

void OpenclDevice::release_scratch(int id, cl_mem mem, size_t size) noexcept {
  devices_[static_cast<size_t>(id)]->pool->release(mem, size);
}

void OpenclDevice::copy(const void* src, uint64_t src_offset, DLDevice src_ctx, void* dst,
                        uint64_t dst_offset, DLDevice dst_ctx, size_t nbytes) {
  if (nbytes == 0) return;
  const bool src_dev = src_ctx.device_type == kDLOpenCL;
  const bool dst_dev = dst_ctx.device_type == kDLOpenCL;
  if (src_dev && !dst_dev) {
    const BufferRef s = resolve(src_ctx.device_id, src, src_offset, nbytes, "copy source");
    CL_CALL(clEnqueueReadBuffer(queue(src_ctx.device_id), s.mem, CL_TRUE, s.offset, nbytes,
                                static_cast<char*>(dst) + dst_offset, 0, nullptr, nullptr));
    return;
  }
  if (!src_dev && dst_dev) {
    const BufferRef t = resolve(dst_ctx.device_id, dst, dst_offset, nbytes, "copy target");
    CL_CALL(clEnqueueWriteBuffer(queue(dst_ctx.device_id), t.mem, CL_TRUE, t.offset, nbytes,
                                 static_cast<const char*>(src) + src_offset, 0, nullptr, nullptr));
    return;
  }
  if (!src_dev || !dst_dev) {
    throw DeviceError("opencl copy: neither side is an OpenCL device");
  }
  const BufferRef s = resolve(src_ctx.device_id, src, src_offset, nbytes, "copy source");
  const BufferRef t = resolve(dst_ctx.device_id, dst, dst_offset, nbytes, "copy target");
  if (src_ctx.device_id == dst_ctx.device_id) {
    cl_command_queue q = queue(src_ctx.device_id);
    const bool overlap =
        s.mem == t.mem && s.offset < t.offset + nbytes && t.offset < s.offset + nbytes;
    if (!overlap) {
      CL_CALL(
          clEnqueueCopyBuffer(q, s.mem, t.mem, s.offset, t.offset, nbytes, 0, nullptr, nullptr));
      return;
    }
    Scratch tmp(this, src_ctx.device_id, nbytes);
    CL_CALL(clEnqueueCopyBuffer(q, s.mem, tmp.get(), s.offset, 0, nbytes, 0, nullptr, nullptr));
    CL_CALL(clEnqueueCopyBuffer(q, tmp.get(), t.mem, 0, t.offset, nbytes, 0, nullptr, nullptr));
    return;
  }
  // Two devices (maybe two platforms): through host memory.
  std::vector<char> host(nbytes);
  CL_CALL(clEnqueueReadBuffer(queue(src_ctx.device_id), s.mem, CL_TRUE, s.offset, nbytes,
                              host.data(), 0, nullptr, nullptr));
  CL_CALL(clEnqueueWriteBuffer(queue(dst_ctx.device_id), t.mem, CL_TRUE, t.offset, nbytes,
                               host.data(), 0, nullptr, nullptr));
}

void OpenclDevice::fill(void* dst, uint64_t dst_offset, DLDevice device, const void* pattern,
                        uint32_t pattern_size, size_t nbytes) {
  if (nbytes == 0) return;
  const BufferRef t = resolve(device.device_id, dst, dst_offset, nbytes, "fill target");
  CL_CALL(clEnqueueFillBuffer(queue(device.device_id), t.mem, pattern, pattern_size, t.offset,
                              nbytes, 0, nullptr, nullptr));
}

void OpenclDevice::synchronize(int id) {
  PerDevice& d = At(id);
  // Nothing was ever queued (by this process: a forked child cannot queue work).
  if (!d.ready.load(std::memory_order_acquire) || getpid() != found_pid_) return;
  CL_CALL(clFinish(d.queue));
}

MemoryStats OpenclDevice::memory_stats(int id) {
  PerDevice& d = At(id);
  if (!d.ready.load(std::memory_order_acquire)) return {};
  return d.pool->stats();
}

void OpenclDevice::empty_cache(int id) {
  PerDevice& d = At(id);
  if (d.ready.load(std::memory_order_acquire) && getpid() == found_pid_) d.pool->empty();
}

std::string OpenclDevice::get_option(const std::string& key) {
  if (key == "program_cache") return ProgramCache::DiskStatus();
  if (key == "selection") return selection_;
  // "platform" / "driver_version" are device 0's; "platform:<id>" names the device.
  const size_t colon = key.find(':');
  const std::string name = key.substr(0, colon);
  if (name == "platform" || name == "driver_version") {
    int id = 0;
    if (colon != std::string::npos) {
      const std::string arg = key.substr(colon + 1);
      size_t used = 0;
      try {
        id = std::stoi(arg, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != arg.size()) {
        throw Error(ErrorKind::kValue,
                    "opencl: option " + key + ": '" + arg + "' is not a device id");
      }
    }
    const DeviceInfo& i = At(id).info;  // range-checked: names the device that is missing
    return name == "platform" ? i.platform_name + " | " + i.platform_version : i.driver_version;
  }
  throw Error(ErrorKind::kValue, "unknown option '" + key +
                                     "' for OpenCL devices (known: platform[:<id>], "
                                     "driver_version[:<id>], program_cache, selection)");
}

const void* OpenclDevice::extension(const std::string& name) {
  if (name == DLARRAY_EXT_OPENCL_V2) return OpenclExtensionTable(this);
  if (name == DLARRAY_EXT_MEM_INFO_V1) return MemInfoTable(this);
  return nullptr;
}

}  // namespace dlarray::opencl
