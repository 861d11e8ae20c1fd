// The ops the core declares: one table of schemas, declared like a plugin's.
#ifndef DLARRAY_RUNTIME_SRC_CORE_OPS_H_
#define DLARRAY_RUNTIME_SRC_CORE_OPS_H_

#include <exception>
#include <vector>

#include "core_api.h"
#include "dlarray/errors.h"
#include "dlarray/plugin_api.h"
#include "dlarray/runtime.h"

namespace dlarray {

/*! \brief The comparisons of compare and compare_by_const (attribute "cmp"). */
enum CompareKind : int {
  kCompareEqual = 0,
  kCompareNotEqual = 1,
  kCompareLess = 2,
  kCompareLessEqual = 3,
  kCompareGreater = 4,
  kCompareGreaterEqual = 5,
};

/*! \brief Declares the built-in ops (owner "core") from their table, through the plugin API. */
void DeclareCoreOps(DLArrayRegistry* registry);

/*!
 * \brief The core's C++ rules behind the C function pointers of a schema, as a plugin's SDK does
 *        it: an exception becomes -1 and the error the core records for the calling thread.
 */
template <typename Call, void (*F)(const Call&)>
int Guarded(const Call* call, void*) {
  try {
    F(*call);
    return 0;
  } catch (const Error& e) {
    CoreApi()->set_error(static_cast<int32_t>(e.kind()), e.what());
  } catch (const std::exception& e) {
    CoreApi()->set_error(kDLArrayErrRuntime, e.what());
  }
  return -1;
}

/*! \brief The default shape rule: every input and output has the same shape. */
void ValidateSameShape(const DLArrayOpCall& call);

}  // namespace dlarray

#endif  // DLARRAY_RUNTIME_SRC_CORE_OPS_H_
