// The dtype rule of the complex part ops (real, imag, complex_abs of
// DLARRAY_COMPLEX_PART_OPS): their rows are in core_ops.cc's table, the check lives here.
#ifndef DLARRAY_RUNTIME_SRC_COMPLEX_OPS_H_
#define DLARRAY_RUNTIME_SRC_COMPLEX_OPS_H_

#include "dlarray/plugin_api.h"

namespace dlarray {

void ValidateComplexPart(const DLArrayOpCall& c);

}  // namespace dlarray

#endif  // DLARRAY_RUNTIME_SRC_COMPLEX_OPS_H_
