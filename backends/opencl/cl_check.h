/*!
 * \file cl_check.h
 * \brief Error checks of the OpenCL backend: every failing call is reported with its name and
 *        the CL_* code as text.
 */
#ifndef DLARRAY_BACKENDS_OPENCL_CL_CHECK_H_
#define DLARRAY_BACKENDS_OPENCL_CL_CHECK_H_

#include <string>

#include "cl_headers.h"

namespace dlarray::opencl {

/*! \brief "CL_OUT_OF_RESOURCES (-5)" for an OpenCL error code. */
std::string ClErrorText(cl_int err);

/*! \brief Whether err means that memory ran out (host or device). */
bool IsOutOfMemory(cl_int err);

/*!
 * \brief Throws "<call> failed: CL_X (-n) at file:line": OutOfMemoryError for the out-of-memory
 *        codes, BackendError for the others.
 */
[[noreturn]] void ThrowClError(cl_int err, const std::string& call, const char* file, int line);

}  // namespace dlarray::opencl

/*! \brief Runs an OpenCL call returning cl_int; throws naming the call and the code. */
#define CL_CALL(expr)                                                              \
  do {                                                                             \
    const cl_int dlarray_cl_err_ = (expr);                                         \
    if (dlarray_cl_err_ != CL_SUCCESS) {                                           \
      ::dlarray::opencl::ThrowClError(dlarray_cl_err_, #expr, __FILE__, __LINE__); \
    }                                                                              \
  } while (0)

/*! \brief Checks the error code an OpenCL constructor wrote: CL_CHECK(err, "clCreateBuffer"). */
#define CL_CHECK(err, what)                                               \
  do {                                                                    \
    if ((err) != CL_SUCCESS) {                                            \
      ::dlarray::opencl::ThrowClError((err), (what), __FILE__, __LINE__); \
    }                                                                     \
  } while (0)

#endif  // DLARRAY_BACKENDS_OPENCL_CL_CHECK_H_
