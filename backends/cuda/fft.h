/*!
 * \file fft.h
 * \brief The CUDA backend's FFT kernels (fft.cu, through cuFFT): fft_c2c, fft_r2c, fft_c2r.
 */
#ifndef DLARRAY_BACKENDS_CUDA_FFT_H_
#define DLARRAY_BACKENDS_CUDA_FFT_H_

#include "dlarray/kernel.h"

namespace dlarray {
namespace cuda {

void FftC2CKernel(const KernelContext& ctx);
void FftR2CKernel(const KernelContext& ctx);
void FftC2RKernel(const KernelContext& ctx);

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_FFT_H_
