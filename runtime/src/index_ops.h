// The shape rules of the indexing primitives (gather, gather_along, scatter, nonzero, compress,
// argsort, sort): their rows are in core_ops.cc's table; the checks live here to keep that table
// readable.
#ifndef DLARRAY_RUNTIME_SRC_INDEX_OPS_H_
#define DLARRAY_RUNTIME_SRC_INDEX_OPS_H_

#include "dlarray/plugin_api.h"

namespace dlarray {

void ValidateGather(const DLArrayOpCall& c);
void ValidateGatherAlong(const DLArrayOpCall& c);
void ValidateScatter(const DLArrayOpCall& c);
void ValidateNonzero(const DLArrayOpCall& c);
void ValidateCompress(const DLArrayOpCall& c);
void ValidateArgsort(const DLArrayOpCall& c);  // and sort's
void InferGather(const DLArrayShapeCall& c);
void InferGatherAlong(const DLArrayShapeCall& c);
void InferNonzero(const DLArrayShapeCall& c);
void InferCompress(const DLArrayShapeCall& c);
void InferArgsort(const DLArrayShapeCall& c);  // and sort's

}  // namespace dlarray

#endif  // DLARRAY_RUNTIME_SRC_INDEX_OPS_H_
