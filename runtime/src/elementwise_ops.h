// The ops of dlarray/elementwise_table.h, declared by the core.
#ifndef DLARRAY_RUNTIME_SRC_ELEMENTWISE_OPS_H_
#define DLARRAY_RUNTIME_SRC_ELEMENTWISE_OPS_H_

#include <vector>

#include "core_ops.h"
#include "dlarray/runtime.h"

namespace dlarray {

/*! \brief The table's dtype set "kFloatTypes": float16, bfloat16, float32, float64. */
constexpr int kTableFloatTypes = 1;

/*! \brief Appends a declaration for every op of the elementwise table. */
void AppendElementwiseOps(std::vector<OpInfo>* ops);

}  // namespace dlarray

#endif  // DLARRAY_RUNTIME_SRC_ELEMENTWISE_OPS_H_
