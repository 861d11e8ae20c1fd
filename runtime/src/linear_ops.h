// The shape rules of the fused product ops (linear, linear_weight_grad): their rows are in
// core_ops.cc's table; the checks live here to keep that table readable.
#ifndef DLARRAY_RUNTIME_SRC_LINEAR_OPS_H_
#define DLARRAY_RUNTIME_SRC_LINEAR_OPS_H_

#include "dlarray/plugin_api.h"

namespace dlarray {

void ValidateLinear(const DLArrayOpCall& c);
void ValidateLinearWeightGrad(const DLArrayOpCall& c);
void InferLinear(const DLArrayShapeCall& c);
void InferLinearWeightGrad(const DLArrayShapeCall& c);

}  // namespace dlarray

#endif  // DLARRAY_RUNTIME_SRC_LINEAR_OPS_H_
