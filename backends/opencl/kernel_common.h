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
)CLC";

}  // namespace dlarray::opencl

#endif  // DLARRAY_BACKENDS_OPENCL_KERNEL_COMMON_H_
