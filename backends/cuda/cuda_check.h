/*!
 * \file cuda_check.h
 * \brief Error checks of the CUDA backend: CUDA_CALL, CUBLAS_CALL and the launch check.
 */
#ifndef DLARRAY_BACKENDS_CUDA_CUDA_CHECK_H_
#define DLARRAY_BACKENDS_CUDA_CUDA_CHECK_H_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <string>

namespace dlarray {
namespace cuda {

/*! \brief "cudaErrorX (description)" for an error code. */
std::string CudaErrorText(cudaError_t err);

/*! \brief Throws BackendError "<what> failed at <file>:<line>: cudaErrorX (description)". */
[[noreturn]] void ThrowCudaError(cudaError_t err, const char* what, const char* file, int line);

/*! \brief Throws BackendError for a failed cuBLAS call, with the status name. */
[[noreturn]] void ThrowCublasError(cublasStatus_t status, const char* what, const char* file,
                                   int line);

/*! \brief Throws BackendError when the kernel launch just made failed (bad configuration, ...). */
inline void CheckLaunch(const char* kernel, const char* file, int line) {
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) ThrowCudaError(err, kernel, file, line);
}

/*! \brief Makes device id current unless it already is (cudaSetDevice is not free). */
inline void SetDevice(int id) {
  int current = -1;
  if (cudaGetDevice(&current) == cudaSuccess && current == id) return;
  const cudaError_t err = cudaSetDevice(id);
  if (err != cudaSuccess) ThrowCudaError(err, "cudaSetDevice", __FILE__, __LINE__);
}

}  // namespace cuda
}  // namespace dlarray

/*! \brief Runs a CUDA runtime call; throws BackendError naming the call, file:line and error. */
#define CUDA_CALL(expr)                                                              \
  do {                                                                               \
    const cudaError_t dlarray_cuda_err_ = (expr);                                    \
    if (dlarray_cuda_err_ != cudaSuccess) {                                          \
      ::dlarray::cuda::ThrowCudaError(dlarray_cuda_err_, #expr, __FILE__, __LINE__); \
    }                                                                                \
  } while (0)

/*! \brief Runs a cuBLAS call; throws BackendError naming the call and the status. */
#define CUBLAS_CALL(expr)                                                               \
  do {                                                                                  \
    const cublasStatus_t dlarray_cublas_st_ = (expr);                                   \
    if (dlarray_cublas_st_ != CUBLAS_STATUS_SUCCESS) {                                  \
      ::dlarray::cuda::ThrowCublasError(dlarray_cublas_st_, #expr, __FILE__, __LINE__); \
    }                                                                                   \
  } while (0)

/*! \brief Checks the launch just made: kernel<<<...>>>(...); CHECK_LAUNCH("Kernel"); */
#define CHECK_LAUNCH(name) ::dlarray::cuda::CheckLaunch(name, __FILE__, __LINE__)

#endif  // DLARRAY_BACKENDS_CUDA_CUDA_CHECK_H_
