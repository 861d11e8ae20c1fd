// matrix_multiply: c = op(a) @ op(b) for row-major a, b, c, through cuBLAS.
//
// cuBLAS is column-major, and a row-major (r x k) buffer is its transpose read column-major. So
// C^T = op(B)^T op(A)^T is computed: B's buffer is the first operand, A's the second, and each
// keeps its own transpose flag. Leading dimensions are the row-major column counts.
#include <limits>
#include <string>

#include "cublas_library.h"
#include "gemm_types.h"
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
  const CublasLibrary& blas = CublasLibrary::Get();  // loaded by cublas() above
  const GemmTypes types = GemmTypesOf(env, c->dtype, "matrix_multiply");
  const cudaDataType_t type = types.type;
  const cublasComputeType_t compute = types.compute;
  const float alpha_f = 1.0f, beta_f = 0.0f;
  const double alpha_d = 1.0, beta_d = 0.0;
  const void* alpha = type == CUDA_R_64F ? static_cast<const void*>(&alpha_d) : &alpha_f;
  const void* beta = type == CUDA_R_64F ? static_cast<const void*>(&beta_d) : &beta_f;
  const void* a_data = Data<const char>(a);
  const void* b_data = Data<const char>(b);
  void* c_data = Data<char>(c);
  const cublasOperation_t op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int64_t lim = std::numeric_limits<int>::max();
  if (m <= lim && n <= lim && k <= lim && a->shape[1] <= lim && b->shape[1] <= lim) {
    CUBLAS_CALL(blas.GemmEx(handle, op_b, op_a, static_cast<int>(n), static_cast<int>(m),
                            static_cast<int>(k), alpha, b_data, type, static_cast<int>(b->shape[1]),
                            a_data, type, static_cast<int>(a->shape[1]), beta, c_data, type,
                            static_cast<int>(n), compute, CUBLAS_GEMM_DEFAULT));
  } else {
    CUBLAS_CALL(blas.GemmEx64(handle, op_b, op_a, n, m, k, alpha, b_data, type, b->shape[1], a_data,
                              type, a->shape[1], beta, c_data, type, n, compute,
                              CUBLAS_GEMM_DEFAULT));
  }
}

}  // namespace cuda
}  // namespace dlarray
