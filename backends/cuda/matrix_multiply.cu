// matrix_multiply: c = op(a) @ op(b) for row-major a, b, c, through cuBLAS.
//
// cuBLAS is column-major, and a row-major (r x k) buffer is its transpose read column-major. So
// C^T = op(B)^T op(A)^T is computed: B's buffer is the first operand, A's the second, and each
// keeps its own transpose flag. Leading dimensions are the row-major column counts.
#include <limits>

#include "kernel_util.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {

void MatrixMultiplyKernel(const KernelContext& ctx) {
  const DLArray* a = ctx.inputs[0];
  const DLArray* b = ctx.inputs[1];
  DLArray* c = ctx.outputs[0];
  const bool trans_a = ctx.attrs[0] != 0.0;
  const bool trans_b = ctx.attrs[1] != 0.0;
  const int64_t m = c->shape[0];
  const int64_t n = c->shape[1];
  const int64_t k = trans_a ? a->shape[0] : a->shape[1];
  const LaunchEnv env = Prepare(ctx);
  cublasHandle_t handle = env.device->cublas(env.id);
  const cublasComputeType_t compute =
      env.device->matmul_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  const float alpha = 1.0f;
  const float beta = 0.0f;
  const cublasOperation_t op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int64_t lim = std::numeric_limits<int>::max();
  if (m <= lim && n <= lim && k <= lim && a->shape[1] <= lim && b->shape[1] <= lim) {
    CUBLAS_CALL(cublasGemmEx(handle, op_b, op_a, static_cast<int>(n), static_cast<int>(m),
                             static_cast<int>(k), &alpha, Data<const float>(b), CUDA_R_32F,
                             static_cast<int>(b->shape[1]), Data<const float>(a), CUDA_R_32F,
                             static_cast<int>(a->shape[1]), &beta, Data<float>(c), CUDA_R_32F,
                             static_cast<int>(n), compute, CUBLAS_GEMM_DEFAULT));
  } else {
    CUBLAS_CALL(cublasGemmEx_64(handle, op_b, op_a, n, m, k, &alpha, Data<const float>(b),
                                CUDA_R_32F, b->shape[1], Data<const float>(a), CUDA_R_32F,
                                a->shape[1], &beta, Data<float>(c), CUDA_R_32F, n, compute,
                                CUBLAS_GEMM_DEFAULT));
  }
}

}  // namespace cuda
}  // namespace dlarray
