/*!
 * \file gemm_types.h
 * \brief The cuBLAS / cuBLASLt data and compute types of a product's dtype, one rule for
 *        matrix_multiply and the fused products (linear, linear_weight_grad).
 */
#ifndef DLARRAY_BACKENDS_CUDA_GEMM_TYPES_H_
#define DLARRAY_BACKENDS_CUDA_GEMM_TYPES_H_

#include <cublas_api.h>

#include <string>

#include "dlarray/errors.h"
#include "kernel_util.cuh"

namespace dlarray {
namespace cuda {

struct GemmTypes {
  cudaDataType_t type;
  cublasComputeType_t compute;
};

/*!
 * \brief float32 (TF32 tensor cores when matmul_precision is "tf32"), float16 and bfloat16
 *        (tensor cores, float32 accumulation and scalars), float64; a DTypeError naming `op`
 *        for any other dtype.
 */
inline GemmTypes GemmTypesOf(const LaunchEnv& env, DLArrayDType t, const char* op) {
  if (t.code == kDLArrayFloat && t.bits == 32) {
    return {CUDA_R_32F,
            env.device->matmul_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F};
  }
  if (t.code == kDLArrayFloat && t.bits == 16) return {CUDA_R_16F, CUBLAS_COMPUTE_32F};
  if (t.code == kDLArrayBfloat && t.bits == 16) return {CUDA_R_16BF, CUBLAS_COMPUTE_32F};
  if (t.code == kDLArrayFloat && t.bits == 64) return {CUDA_R_64F, CUBLAS_COMPUTE_64F};
  throw DTypeError(std::string(op) + " on cuda: no kernel for " + std::to_string(t.bits) +
                   "-bit type code " + std::to_string(t.code));
}

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_GEMM_TYPES_H_
