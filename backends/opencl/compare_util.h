/*!
 * \file compare_util.h
 * \brief What compare and compare_by_const share: the comparison as a build option and the
 *        OpenCL C macro DL_CMP(a, b) it selects.
 */
#ifndef DLARRAY_BACKENDS_OPENCL_COMPARE_UTIL_H_
#define DLARRAY_BACKENDS_OPENCL_COMPARE_UTIL_H_

#include <string>

#include "dlarray/errors.h"

namespace dlarray::opencl {

/*! \brief OpenCL C: DL_CMP(a, b), the comparison CMP (0 ==, 1 !=, 2 <, 3 <=, 4 >, 5 >=). */
inline constexpr const char* kCompareMacros = R"CLC(
#if CMP == 0
#define DL_CMP(a, b) ((a) == (b))
#elif CMP == 1
#define DL_CMP(a, b) ((a) != (b))
#elif CMP == 2
#define DL_CMP(a, b) ((a) < (b))
#elif CMP == 3
#define DL_CMP(a, b) ((a) <= (b))
#elif CMP == 4
#define DL_CMP(a, b) ((a) > (b))
#else
#define DL_CMP(a, b) ((a) >= (b))
#endif
)CLC";

/*! \brief "-DCMP=<kind>" for the attribute kind (truncated, as the CPU backend reads it); throws
 *         ValueError for unknown kinds. */
inline std::string CompareOption(double kind) {
  if (!(kind > -1.0 && kind < 6.0)) {
    throw Error(ErrorKind::kValue, "compare: unknown comparison " + std::to_string(kind));
  }
  return "-DCMP=" + std::to_string(static_cast<int>(kind));
}

}  // namespace dlarray::opencl

#endif  // DLARRAY_BACKENDS_OPENCL_COMPARE_UTIL_H_
