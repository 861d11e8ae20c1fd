// The shape and dtype rules of the FFT primitives (fft_c2c, fft_r2c, fft_c2r): their rows are in
// core_ops.cc's table; the checks live here, as index_ops.h's do.
#ifndef DLARRAY_RUNTIME_SRC_FFT_OPS_H_
#define DLARRAY_RUNTIME_SRC_FFT_OPS_H_

#include "dlarray/plugin_api.h"

namespace dlarray {

void ValidateFftC2C(const DLArrayOpCall& c);
void ValidateFftR2C(const DLArrayOpCall& c);
void ValidateFftC2R(const DLArrayOpCall& c);
void InferFftR2C(const DLArrayShapeCall& c);

}  // namespace dlarray

#endif  // DLARRAY_RUNTIME_SRC_FFT_OPS_H_
