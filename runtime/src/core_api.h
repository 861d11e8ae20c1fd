// The core's half of the plugin ABI: the DLArrayCoreApi table handed to every plugin, the
// thread-local error a failing plugin call leaves behind, and the strings plugins fill.
#ifndef DLARRAY_RUNTIME_SRC_CORE_API_H_
#define DLARRAY_RUNTIME_SRC_CORE_API_H_

#include <string>

#include "dlarray/plugin_api.h"
#include "dlarray/runtime.h"

struct DLArrayString {
  std::string value;
};

namespace dlarray {

/*! \brief The table every plugin receives (lives for the process). */
const DLArrayCoreApi* CoreApi();

// ClearPluginError and ThrowPluginError, the other half of set_error, are declared in runtime.h
// (exported: the Python module calls device extensions that report errors with set_error).

}  // namespace dlarray

#endif  // DLARRAY_RUNTIME_SRC_CORE_API_H_
