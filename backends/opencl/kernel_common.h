/*!
 * \file kernel_common.h
 * \brief The OpenCL C put in front of every program: element and accumulator types and vector
 *        helpers, chosen by the build options (see launch.h: BuildOptions).
 */
#ifndef DLARRAY_BACKENDS_OPENCL_KERNEL_COMMON_H_
#define DLARRAY_BACKENDS_OPENCL_KERNEL_COMMON_H_

namespace dlarray::opencl {

/*!
 * \brief Defines, from the options -DT=<storage type> -DT_KIND=<0..3> [-DT_INT -DUT=<unsigned>]
 *        [-DT_FLOAT] [-DO=... -DO_KIND=... (a second type)] -DVW=<4|8|16> [-DDLARRAY_FP64]
 *        [-DDLARRAY_CPU] (see launch.h: TypeOptions): T (element), TV (vector of VW elements),
 *        LOADV/STOREV (vloadVW/vstoreVW), ACC (float accumulator: double with cl_khr_fp64, else
 *        float with compensated sums), CONVERT_ACCV, and the dtype layer: CT (compute type),
 *        LD/ST (element load and store through CT), DL_NATIVE, DL_ADDS/DL_MULS/DL_ADDV/DL_MULV.
 */
inline constexpr const char* kKernelPreamble = R"CLC(
#ifdef DLARRAY_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define ACC double
#else
#define ACC float
#endif
#ifndef T
#define T float
#endif
#ifndef VW
#define VW 4
#endif
#define DL_CAT_(a, b) a##b
#define DL_CAT(a, b) DL_CAT_(a, b)
#define TV DL_CAT(T, VW)
#define ACCV DL_CAT(ACC, VW)
#define LOADV DL_CAT(vload, VW)
#define STOREV DL_CAT(vstore, VW)
#define CONVERT_ACCV DL_CAT(convert_, ACCV)
#define CONVERT_ACC DL_CAT(convert_, ACC)
#define CONVERT_T DL_CAT(convert_, T)
#define CONVERT_TV DL_CAT(convert_, TV)

// Storage and compute types. T_KIND (and O_KIND for a second, output type O): 0 native (float,
// double, the integers: T is both storage and compute type), 1 float16 and 2 bfloat16 (stored as
// ushort bits, computed in float, rounded to nearest even on store), 3 bool (uchar 0/1), 4 complex
// (float2 or double2, computed as itself; no vectors of it: DL_NATIVE 0). LD(p, i)
// reads element i as the compute type CT, ST(p, i, v) stores v (LDO/STO and OC for O).
// DL_NATIVE: T == CT, so that vector loads and stores of T work.
float dl_bf16_to_float(ushort b) { return as_float((uint)b << 16); }
ushort dl_float_to_bf16(float f) {
  uint u = as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return (ushort)(u >> 16);
}
#define DL_LD_0(p, i) (p)[i]
// vload_half on some devices (NVIDIA's) makes every NaN positive; NumPy keeps a NaN's sign.
float dl_half_keep_nan_sign(float f, ushort bits) {
  return isnan(f) ? copysign(f, (bits & 0x8000u) ? -1.0f : 1.0f) : f;
}
#define DL_LD_1(p, i) \
  dl_half_keep_nan_sign(vload_half((i), (__global const half*)(p)), ((__global const ushort*)(p))[i])
#define DL_LD_2(p, i) dl_bf16_to_float((p)[i])
#define DL_LD_3(p, i) (p)[i]
#define DL_ST_0(p, i, v) (p)[i] = (v)
#define DL_ST_1(p, i, v) vstore_half_rte((v), (i), (__global half*)(p))
#define DL_ST_2(p, i, v) (p)[i] = dl_float_to_bf16(v)
#define DL_ST_3(p, i, v) (p)[i] = (uchar)((v) != 0)
#define DL_LD_4(p, i) (p)[i]
#define DL_ST_4(p, i, v) (p)[i] = (v)
#ifndef T_KIND
#define T_KIND 0
#endif
#define LD(p, i) DL_CAT(DL_LD_, T_KIND)(p, i)
#define ST(p, i, v) DL_CAT(DL_ST_, T_KIND)(p, i, v)
#if T_KIND == 1 || T_KIND == 2
#define CT float
#define DL_NATIVE 0
#elif T_KIND == 4
#define CT T
#define DL_NATIVE 0
#else
#define CT T
#define DL_NATIVE 1
#endif
#ifdef O
#define LDO(p, i) DL_CAT(DL_LD_, O_KIND)(p, i)
#define STO(p, i, v) DL_CAT(DL_ST_, O_KIND)(p, i, v)
#if O_KIND == 1 || O_KIND == 2
#define OC float
#else
#define OC O
#endif
#endif

// a + b and a * b on CT scalars (DL_ADDS, DL_MULS) and TV vectors (DL_ADDV, DL_MULV): integers
// wrap around (two's complement, as NumPy and the CPU backend do), computed on the unsigned type
// UT of the same size so that no signed overflow happens.
#ifdef T_INT
#define DL_UTV DL_CAT(UT, VW)
#define DL_WRAPS(a, b, op) \
  DL_CAT(as_, T)((UT)((ulong)DL_CAT(as_, UT)(a) op (ulong)DL_CAT(as_, UT)(b)))
#define DL_WRAPV(a, b, op) DL_CAT(as_, TV)(DL_CAT(as_, DL_UTV)(a) op DL_CAT(as_, DL_UTV)(b))
#define DL_ADDS(a, b) DL_WRAPS(a, b, +)
#define DL_MULS(a, b) DL_WRAPS(a, b, *)
#define DL_ADDV(a, b) DL_WRAPV(a, b, +)
#define DL_MULV(a, b) DL_WRAPV(a, b, *)
#else
#define DL_ADDS(a, b) ((a) + (b))
#define DL_MULS(a, b) ((a) * (b))
#define DL_ADDV(a, b) ((a) + (b))
#define DL_MULV(a, b) ((a) * (b))
#endif

// Non-temporal stores for outputs too large to stay in cache (a kernel argument nt != 0, set by
// the host, see NonTemporal) on CPU devices compiled by clang (PoCL): no read-for-ownership of the
// output, a third less memory traffic. Only where the address is aligned to a whole vector.
#if defined(DLARRAY_CPU) && defined(__clang__)
#define DL_NT_OK(p) (nt != 0 && (((ulong)(p)) & (sizeof(TV) - 1)) == 0)
#define DL_STORE_NT(v, p) __builtin_nontemporal_store((v), (__global TV*)(p))
#else
#define DL_NT_OK(p) 0
#define DL_STORE_NT(v, p) STOREV((v), 0, (p))
#endif
)CLC";

}  // namespace dlarray::opencl

#endif  // DLARRAY_BACKENDS_OPENCL_KERNEL_COMMON_H_
