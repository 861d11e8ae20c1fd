/*!
 * \file scalar_arg.h
 * \brief A double attribute passed to a kernel as its element type T.
 */
#ifndef DLARRAY_BACKENDS_OPENCL_SCALAR_ARG_H_
#define DLARRAY_BACKENDS_OPENCL_SCALAR_ARG_H_

#include <cstdint>

#include "dlarray/errors.h"
#include "launch.h"

namespace dlarray::opencl {

/*! \brief Sets the next argument to value converted to dtype (as NumPy's astype would). */
inline void SetScalar(Launch& launch, DLArrayDType t, double value) {
  if (t.code == kDLArrayFloat && t.bits == 32) {
    launch.scalar<cl_float>(static_cast<cl_float>(value));
  } else if (t.code == kDLArrayFloat && t.bits == 64) {
    launch.scalar<cl_double>(value);
  } else if (t.code == kDLArrayInt || t.code == kDLArrayUInt) {
    const bool u = t.code == kDLArrayUInt;
    const int64_t v = static_cast<int64_t>(value);
    switch (t.bits) {
      case 8:
        u ? launch.scalar<cl_uchar>(static_cast<cl_uchar>(v))
          : launch.scalar<cl_char>(static_cast<cl_char>(v));
        return;
      case 16:
        u ? launch.scalar<cl_ushort>(static_cast<cl_ushort>(v))
          : launch.scalar<cl_short>(static_cast<cl_short>(v));
        return;
      case 32:
        u ? launch.scalar<cl_uint>(static_cast<cl_uint>(v))
          : launch.scalar<cl_int>(static_cast<cl_int>(v));
        return;
      case 64:
        u ? launch.scalar<cl_ulong>(static_cast<cl_ulong>(v)) : launch.scalar<cl_long>(v);
        return;
      default:
        break;
    }
    throw DTypeError("no OpenCL scalar of " + std::to_string(t.bits) + " bits");
  } else {
    throw DTypeError("no OpenCL scalar for this dtype");
  }
}

}  // namespace dlarray::opencl

#endif  // DLARRAY_BACKENDS_OPENCL_SCALAR_ARG_H_
