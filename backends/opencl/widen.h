/*!
 * \file widen.h
 * \brief Ops on float16 and bfloat16 through their float32 kernels: each operand converted to a
 *        float32 twin (exactly), the float32 kernel run on the twins, and each output converted
 *        back with one rounding to nearest even, as the CPU backend computes the half types in
 *        float.
 */
#ifndef DLARRAY_BACKENDS_OPENCL_WIDEN_H_
#define DLARRAY_BACKENDS_OPENCL_WIDEN_H_

#include "dlarray/kernel.h"

namespace dlarray::opencl {

/*! \brief Whether the call's operands are float16 or bfloat16 (computed through float32). */
bool IsHalfType(const KernelContext& ctx);

/*! \brief Runs the float32 `kernel` on float32 twins of the operands (see the file comment). */
void RunInFloat32(const KernelContext& ctx, KernelFn kernel);

}  // namespace dlarray::opencl

#endif  // DLARRAY_BACKENDS_OPENCL_WIDEN_H_
