/*!
 * \file fft.h
 * \brief The CPU backend's FFT kernels (fft.cc): fft_c2c, fft_r2c, fft_c2r.
 */
#ifndef DLARRAY_BACKENDS_CPU_FFT_H_
#define DLARRAY_BACKENDS_CPU_FFT_H_

#include "dlarray/kernel.h"

namespace dlarray::cpu {

void FftC2CKernel(const KernelContext& ctx);
void FftR2CKernel(const KernelContext& ctx);
void FftC2RKernel(const KernelContext& ctx);

}  // namespace dlarray::cpu

#endif  // DLARRAY_BACKENDS_CPU_FFT_H_
