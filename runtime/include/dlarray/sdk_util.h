/*!
 * \file dlarray/sdk_util.h
 * \brief What every plugin needs at the C boundary, header-only: the exception guard that turns
 *        a C++ exception into -1 and an error recorded with the core's set_error, and the names
 *        of dtypes and devices as the core prints them. The core, the in-tree backends and their
 *        extensions all use these, so a message reads the same whichever side raised it.
 */
#ifndef DLARRAY_SDK_UTIL_H_
#define DLARRAY_SDK_UTIL_H_

#include <cstdint>
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include "dlarray/dlarray.h"
#include "dlarray/dlpack.h"
#include "dlarray/errors.h"
#include "dlarray/plugin_api.h"

namespace dlarray {

/*! \brief "float32", "bfloat16", "complex64", "bool", "int8", "float32x4" (lanes), as the core
 *         prints them. */
inline std::string FormatDType(DLArrayDType t) {
  if (t.code == kDLArrayBool && t.bits == 8 && t.lanes == 1) return "bool";
  const char* code = t.code == kDLArrayInt       ? "int"
                     : t.code == kDLArrayUInt    ? "uint"
                     : t.code == kDLArrayFloat   ? "float"
                     : t.code == kDLArrayBfloat  ? "bfloat"
                     : t.code == kDLArrayComplex ? "complex"
                     : t.code == kDLArrayBool    ? "bool"
                                                 : "type";
  std::string s = code + std::to_string(t.bits);
  if (t.lanes != 1) s += "x" + std::to_string(t.lanes);
  return s;
}

/*! \brief "cpu", "cuda", DLPack's names of the other common types, else "device_type_<n>". */
inline std::string FormatDeviceType(int device_type) {
  switch (device_type) {
    case kDLArrayCPU:
      return "cpu";
    case kDLArrayCUDA:
      return "cuda";
    case kDLArrayOpenCL:
      return "opencl";
    case kDLArrayPackVulkan:
      return "vulkan";
    case kDLArrayPackMetal:
      return "metal";
    case kDLArrayPackROCM:
      return "rocm";
    case kDLArrayPackOneAPI:
      return "oneapi";
    default:
      return "device_type_" + std::to_string(device_type);
  }
}

/*! \brief "cuda(1)", "cpu(0)" (the core also prints a plugin's own name for its type). */
inline std::string FormatDevice(DLContext ctx) {
  return FormatDeviceType(ctx.device_type) + "(" + std::to_string(ctx.device_id) + ")";
}

/*!
 * \brief Records the exception being handled with core->set_error, typed by its kind; `what`
 *        names the failing function and `plugin` (may be null) the plugin, for the exceptions that
 *        carry no message of their own. Call it only inside a catch block. Allocates nothing
 *        itself, so it cannot throw.
 */
inline void ReportCurrentException(const DLArrayCoreApi* core, const char* what,
                                   const char* plugin = nullptr) noexcept {
  if (core == nullptr || core->set_error == nullptr) return;
  char message[512];
  try {
    throw;
  } catch (const CoreCallFailed&) {
    // The core recorded the error itself.
  } catch (const Error& e) {
    core->set_error(static_cast<int32_t>(e.kind()), e.what());
  } catch (const std::bad_alloc&) {
    if (plugin != nullptr) {
      std::snprintf(message, sizeof message, "%s: out of host memory (plugin '%s')", what, plugin);
    } else {
      std::snprintf(message, sizeof message, "%s: out of host memory", what);
    }
    core->set_error(kDLArrayErrMemory, message);
  } catch (const std::exception& e) {
    core->set_error(kDLArrayErrRuntime, e.what());
  } catch (...) {
    if (plugin != nullptr) {
      std::snprintf(message, sizeof message,
                    "%s: plugin '%s' threw an exception that is not a std::exception", what,
                    plugin);
    } else {
      std::snprintf(message, sizeof message, "%s: an exception that is not a std::exception", what);
    }
    core->set_error(kDLArrayErrRuntime, message);
  }
}

/*!
 * \brief The guard of every function a plugin hands the core (device tables, kernels, extension
 *        tables): runs f and returns 0, or records its exception with the core and returns -1.
 *        No C++ exception crosses the C boundary. Plugins built on dlarray/plugin.h call
 *        dlarray::Guard(what, f), which passes their own core and name.
 */
template <typename F>
int GuardCall(const DLArrayCoreApi* core, const char* what, F&& f,
              const char* plugin = nullptr) noexcept {
  try {
    f();
    return 0;
  } catch (...) {
    ReportCurrentException(core, what, plugin);
    return -1;
  }
}

}  // namespace dlarray

#endif  // DLARRAY_SDK_UTIL_H_
