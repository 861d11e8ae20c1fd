/*!
 * \file astype.cc
 * \brief astype: out = in converted to out's dtype, as NumPy's astype does (half types round to
 *        nearest even, floats to integers truncate, anything to bool is != 0). Out-of-range floats
 *        and NaN, undefined in NumPy, saturate and give 0 here.
 */
#include <cstring>

#include "cpu_kernels.h"
#include "dtype.h"
#include "elementwise.h"

namespace dlarray::cpu {

void AstypeKernel(const KernelContext& ctx) {
  const DLArray* in = ctx.inputs[0];
  DLArray* out = ctx.outputs[0];
  const int64_t n = NumElements(out);
  if (in->dtype == out->dtype) {
    const size_t item = (out->dtype.bits + 7) / 8;
    const char* x = Data<const char>(in);
    char* y = Data<char>(out);
    if (x == y) return;
    ParallelFor(n, n, kElementAlign, [&](int64_t b, int64_t e) {
      std::memcpy(y + b * item, x + b * item, static_cast<size_t>(e - b) * item);
    });
    return;
  }
  Dispatch<kStorageTypes>(in->dtype, ctx.op_name, [&](auto from) {
    using TI = typename decltype(from)::type;
    Dispatch<kStorageTypes>(out->dtype, ctx.op_name, [&](auto to) {
      using TO = typename decltype(to)::type;
      MapTyped(
          n, Data<TO>(out), [](auto x) { return x; }, Data<const TI>(in));
    });
  });
}

}  // namespace dlarray::cpu
