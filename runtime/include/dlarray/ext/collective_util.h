/*!
 * \file dlarray/ext/collective_util.h
 * \brief What the collective extensions (dlarray.nccl.v1, dlarray.mpi.v1) check alike, so that a
 *        third-party one words its failures as they do: header-only C++.
 */
#ifndef DLARRAY_EXT_COLLECTIVE_UTIL_H_
#define DLARRAY_EXT_COLLECTIVE_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "dlarray/errors.h"
#include "dlarray/kernel.h"

namespace dlarray {

/*!
 * \brief The element count of an array a collective reads or writes as one compact row-major
 *        buffer, checked: a valid shape, compact strides (or none), and data where there are
 *        elements. Throws ShapeError or Error(kValue) naming `op` and `which` ("the input").
 */
inline size_t CheckedCompactSize(const DLArray* a, const std::string& op,
                                 const std::string& which) {
  if (a->ndim < 0 || a->ndim > DLARRAY_MAX_NDIM || (a->ndim > 0 && a->shape == nullptr)) {
    throw ShapeError(op + ": the " + which + " has an invalid shape");
  }
  if (a->strides != nullptr) {
    int64_t expected = 1;
    for (int d = a->ndim - 1; d >= 0; --d) {
      if (a->shape[d] != 1 && a->strides[d] != expected) {
        throw ShapeError(op + ": the " + which + " is not compact (row-major)");
      }
      expected *= a->shape[d];
    }
  }
  const int64_t n = NumElements(a);
  if (n < 0) throw ShapeError(op + ": the " + which + " has a negative extent");
  if (n > 0 && a->data == nullptr) {
    throw Error(ErrorKind::kValue, op + ": the " + which + " has no data");
  }
  return static_cast<size_t>(n);
}

}  // namespace dlarray

#endif  // DLARRAY_EXT_COLLECTIVE_UTIL_H_
