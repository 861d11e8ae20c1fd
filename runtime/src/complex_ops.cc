// The complex part ops take a complex array and give one of the real dtype of its parts, of the
// same shape: complex64 -> float32, complex128 -> float64.
#include "complex_ops.h"

#include <string>

#include "dlarray/errors.h"
#include "dlarray/kernel.h"
#include "dlarray/runtime.h"

namespace dlarray {

void ValidateComplexPart(const DLArrayOpCall& c) {
  const DLArray* x = c.inputs[0];
  const DLArray* out = c.outputs[0];
  if (x->dtype.code != kDLArrayComplex) {
    throw DTypeError(std::string(c.op_name) + ": x must be complex64 or complex128, got " +
                     DTypeToString(x->dtype));
  }
  if (out->dtype.code != kDLArrayFloat || out->dtype.bits * 2 != x->dtype.bits) {
    throw DTypeError(std::string(c.op_name) + ": the output of " + DTypeToString(x->dtype) +
                     " x must be float" + std::to_string(x->dtype.bits / 2) + ", got " +
                     DTypeToString(out->dtype));
  }
  bool same = x->ndim == out->ndim;
  for (int d = 0; same && d < x->ndim; ++d) same = x->shape[d] == out->shape[d];
  if (!same) {
    throw ShapeError(std::string(c.op_name) + ": x has shape " + ShapeToString(x) +
                     " and the output " + ShapeToString(out) + "; they must be equal");
  }
}

}  // namespace dlarray
