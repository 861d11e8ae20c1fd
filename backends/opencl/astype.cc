/*!
 * \file astype.cc
 * \brief astype: out = in converted to out's dtype, as the CPU backend and NumPy's astype do:
 *        float16 and bfloat16 round to nearest even (float16 from float64 in one rounding),
 *        floats to integers truncate (NaN 0, out of range saturated: convert_<O>_sat_rtz),
 *        integers to integers wrap, anything to bool is != 0; real to complex has imaginary part
 *        0, complex to real keeps the real part (bool: either part != 0). One program per
 *        (in, out) pair:
 *        the input is T (loaded as its compute type CT), the output O.
 */
#include <string>

#include "elementwise.h"
#include "kernels.h"

namespace dlarray::opencl {
namespace {

const ProgramSource kProgram{"astype", R"CLC(
// The spec makes convert_<O>_sat of NaN 0; NVIDIA's OpenCL gives the type's minimum, so NaN is
// tested first.
#define DL_FLOAT_TO_INT(f) ((f) != (f) ? (O)0 : DL_CAT(convert_, DL_CAT(O, _sat_rtz))(f))
#if defined(O_COMPLEX) && defined(T_COMPLEX)
#define DL_CONV(v) ((O)((O_REAL)(v).x, (O_REAL)(v).y))
#elif defined(O_COMPLEX)
#define DL_CONV(v) ((O)((O_REAL)(v), (O_REAL)0))
#elif defined(T_COMPLEX) && O_KIND == 3
#define DL_CONV(v) ((v).x != 0 || (v).y != 0)
#elif defined(T_COMPLEX) && O_KIND == 1
#define DL_CONV(v) ((v).x)
#elif defined(T_COMPLEX) && O_KIND == 2
#define DL_CONV(v) ((float)(v).x)
#elif defined(T_COMPLEX) && defined(O_INT)
#define DL_CONV(v) DL_FLOAT_TO_INT((v).x)
#elif defined(T_COMPLEX)
#define DL_CONV(v) ((O)(v).x)
#elif O_KIND == 1
#ifdef T_FLOAT
#define DL_CONV(v) (v)
#else
#define DL_CONV(v) ((float)(v))
#endif
#elif O_KIND == 2
#define DL_CONV(v) ((float)(v))
#elif O_KIND == 3
#define DL_CONV(v) (v)
#elif defined(O_INT) && defined(T_FLOAT)
#define DL_CONV(v) DL_FLOAT_TO_INT(v)
#else
#define DL_CONV(v) ((O)(v))
#endif

__kernel void astype(__global const T* xp, ulong xo, __global O* yp, ulong yo, uint nt, ulong n,
                     ulong chunk) {
  xp += xo;
  yp += yo;
  ulong i = get_global_id(0) * chunk;
  if (i >= n) return;
  const ulong end = min(i + chunk, n);
  for (; i < end; ++i) STO(yp, i, DL_CONV(LD(xp, i)));
}
)CLC"};

}  // namespace

void AstypeKernel(const KernelContext& ctx) {
  const DLArray* in = ctx.inputs[0];
  const DLArray* out = ctx.outputs[0];
  if (in->dtype == out->dtype) {
    CopyKernel(ctx);  // the same bits (NaN payloads included)
    return;
  }
  const DeviceInfo& info = DeviceOf(ctx).info(ctx.device_id);
  const std::string options = BuildOptions(in->dtype, info) + TypeOptions("O", out->dtype, info);
  RunMap(ctx, kProgram, "astype", {in}, out, options, nullptr);
}

}  // namespace dlarray::opencl
