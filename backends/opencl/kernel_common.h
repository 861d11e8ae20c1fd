/*!
 * \file kernel_common.h
 * \brief The OpenCL C put in front of every program: element and accumulator types and vector
 *        helpers, chosen by the build options (see launch.h: BuildOptions).
 */
#ifndef DLARRAY_BACKENDS_OPENCL_KERNEL_COMMON_H_
#define DLARRAY_BACKENDS_OPENCL_KERNEL_COMMON_H_

namespace dlarray::opencl {

/*!
 * \brief Defines, from the options -DT=<type> -DVW=<4|8|16> [-DDLARRAY_FP64] [-DDLARRAY_CPU]:
 *        T (element), TV (vector of VW elements), LOADV/STOREV (vloadVW/vstoreVW), ACC (float
 *        accumulator: double with cl_khr_fp64, else float with compensated sums), CONVERT_ACCV.
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
