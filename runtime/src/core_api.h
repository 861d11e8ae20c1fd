// The core's half of the plugin ABI: the DLArrayCoreApi table handed to every plugin, the
// thread-local error a failing plugin call leaves behind, and the strings plugins fill.
#ifndef DLARRAY_RUNTIME_SRC_CORE_API_H_
#define DLARRAY_RUNTIME_SRC_CORE_API_H_

#include <string>

#include "dlarray/plugin_api.h"

struct DLArrayString {
  std::string value;
};

namespace dlarray {

/*! \brief The table every plugin receives (lives for the process). */
const DLArrayCoreApi* CoreApi();

/*! \brief Forgets any error recorded on this thread (call before calling into a plugin). */
void ClearPluginError();

/*!
 * \brief Throws the error a plugin recorded on this thread with set_error (typed by its kind), or,
 *        when it recorded none, a BackendError saying `what` failed without a message.
 */
[[noreturn]] void ThrowPluginError(const std::string& what);

}  // namespace dlarray

#endif  // DLARRAY_RUNTIME_SRC_CORE_API_H_
