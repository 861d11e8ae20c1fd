/*!
 * \file rtc_common.h
 * \brief What the two halves of the dlarray.rtc extension share (rtc_compile.cc: NVRTC;
 *        rtc_ext.cc: modules, launches and the table): the guard that reports errors through the
 *        core (dlarray/sdk_util.h) and the plugin's device object.
 */
#ifndef DLARRAY_BACKENDS_CUDA_RTC_COMMON_H_
#define DLARRAY_BACKENDS_CUDA_RTC_COMMON_H_

#include <cstdint>
#include <string>

#include "dlarray/errors.h"
#include "dlarray/ext/rtc.h"
#include "dlarray/sdk_util.h"

namespace dlarray {
namespace cuda {

class CudaDevice;

namespace rtc {

/*! \brief The core's functions (null until the extension is first asked for). */
const DLArrayCoreApi* Core() noexcept;

/*! \brief Runs f; an exception becomes -1 and the error recorded with the core. */
template <typename F>
int Guard(F&& f) noexcept {
  return GuardCall(Core(), "dlarray.rtc", static_cast<F&&>(f));
}

inline Error ValueError(const std::string& message) { return Error(ErrorKind::kValue, message); }

/*! \brief The plugin's device object (set when the extension is first asked for). */
CudaDevice& TheDevice();

// The compiling half (rtc_compile.cc), as the table's entries.
int NvrtcVersion(int32_t* major, int32_t* minor, const char** library_path);
int SupportedArchs(const int32_t** archs, int32_t* count);
int Compile(const char* source, const char* program_name, const char* const* options,
            int32_t num_options, const char* const* name_expressions, int32_t num_names,
            int32_t arch, DLArrayRtcProgram** out);
int32_t ProgramCompiled(const DLArrayRtcProgram* p);
const char* ProgramLog(const DLArrayRtcProgram* p);
const void* ProgramCode(const DLArrayRtcProgram* p, uint64_t* size, int32_t* kind);
const char* ProgramLoweredName(const DLArrayRtcProgram* p, int32_t index);
void ProgramFree(DLArrayRtcProgram* p);

}  // namespace rtc
}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_RTC_COMMON_H_
