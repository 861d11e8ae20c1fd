// The ops the core declares: one table of schemas, declared like a plugin's.
#ifndef DLARRAY_RUNTIME_SRC_CORE_OPS_H_
#define DLARRAY_RUNTIME_SRC_CORE_OPS_H_

#include <vector>

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

/*! \brief The default shape rule: every input and output has the same shape. */
void ValidateSameShape(const DLArrayOpCall& call);

}  // namespace dlarray

#endif  // DLARRAY_RUNTIME_SRC_CORE_OPS_H_
