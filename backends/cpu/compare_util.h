/*!
 * \file compare_util.h
 * \brief The six comparisons of compare and compare_by_const, chosen once per call.
 */
#ifndef DLARRAY_BACKENDS_CPU_COMPARE_UTIL_H_
#define DLARRAY_BACKENDS_CPU_COMPARE_UTIL_H_

#include <string>

#include "dlarray/errors.h"

namespace dlarray::cpu {

/*!
 * \brief Calls run(cmp) with cmp the comparison named by kind (0 ==, 1 !=, 2 <, 3 <=, 4 >, 5 >=);
 *        NaN compares unequal to everything, as in NumPy.
 */
template <typename Run>
inline void WithComparison(double kind, Run&& run) {
  switch (static_cast<int>(kind)) {
    case 0:
      return run([](auto a, auto b) { return a == b; });
    case 1:
      return run([](auto a, auto b) { return a != b; });
    case 2:
      return run([](auto a, auto b) { return a < b; });
    case 3:
      return run([](auto a, auto b) { return a <= b; });
    case 4:
      return run([](auto a, auto b) { return a > b; });
    case 5:
      return run([](auto a, auto b) { return a >= b; });
    default:
      throw Error(ErrorKind::kValue, "compare: unknown comparison " + std::to_string(kind));
  }
}

}  // namespace dlarray::cpu

#endif  // DLARRAY_BACKENDS_CPU_COMPARE_UTIL_H_
