// What the two files of dlarray.rtc's binding share (rtc.cc: compile, load, status;
// rtc_kernel.cc: RtcKernel, the launch path): the CUDA plugin's table and the loaded handles.
#ifndef DLARRAY_PYTHON_SRC_RTC_BINDING_H_
#define DLARRAY_PYTHON_SRC_RTC_BINDING_H_

#include <memory>
#include <string>

#include "binding.h"
#include "dlarray/ext/rtc.h"

namespace dlarray {
namespace rtc_binding {

/*! \brief The rtc table of whichever device plugin offers it, found by name (the CUDA plugin's
 *         today); throws with the reason when there is none. */
const DLArrayRtcExtV1* Rtc();

/*! \brief The device type whose plugin gave Rtc(): the arrays a kernel takes live there. */
int RtcDeviceType();

/*! \brief Runs an extension call that returns 0 or -1 after set_error; throws its error. */
template <typename F>
void Call(const char* what, F&& f) {
  ClearPluginError();
  if (f() != 0) ThrowPluginError(std::string("dlarray.rtc: ") + what);
}

/*! \brief Whether the interpreter is exiting (modules are then left to the process's end). */
bool Exiting();
/*! \brief Called at interpreter exit (dlarray.rtc registers it with atexit). */
void MarkExiting();

/*! \brief Code loaded on one GPU; unloaded with the last reference. */
struct ModuleHandle {
  DLArrayRtcModule* module = nullptr;
  int device_id = 0;
  ~ModuleHandle() {
    if (module != nullptr && !Exiting()) Rtc()->module_free(module);
  }
};

/*! \brief A kernel of a loaded module (keeps the module alive). */
struct FunctionHandle {
  std::shared_ptr<ModuleHandle> module;
  DLArrayRtcFunction* function = nullptr;
  DLArrayRtcFunctionInfo info{};
  std::string name;
};

/*! \brief Binds _RtcKernel (rtc_kernel.cc). */
void BindRtcKernel(py::module_& m);

}  // namespace rtc_binding
}  // namespace dlarray

#endif  // DLARRAY_PYTHON_SRC_RTC_BINDING_H_
