#include "cuda_check.h"

#include <string>

#include "cublas_library.h"
#include "dlarray/errors.h"

namespace dlarray {
namespace cuda {
namespace {

// "backends/cuda/x.cu" rather than the build machine's absolute path.
const char* ShortPath(const char* file) {
  const std::string path(file);
  const size_t pos = path.find("backends/cuda/");
  return pos == std::string::npos ? file : file + pos;
}

}  // namespace

std::string CudaErrorText(cudaError_t err) {
  return std::string(cudaGetErrorName(err)) + " (" + cudaGetErrorString(err) + ")";
}

void ThrowCudaError(cudaError_t err, const char* what, const char* file, int line) {
  // Clears the non-sticky error so that the next launch check does not report it again.
  (void)cudaGetLastError();
  throw BackendError(std::string("CUDA call ") + what + " failed at " + ShortPath(file) + ":" +
                     std::to_string(line) + ": " + CudaErrorText(err));
}

void ThrowCublasError(cublasStatus_t status, const char* what, const char* file, int line) {
  const CublasLibrary& blas = CublasLibrary::Get();  // loaded: the status came from it
  const std::string text =
      blas.ok ? std::string(blas.GetStatusName(status)) + " (" + blas.GetStatusString(status) + ")"
              : "status " + std::to_string(static_cast<int>(status));
  // A failed launch inside cuBLAS leaves its cause with the runtime (a broken recording, a bad
  // address); without it the status alone says only "execution failed".
  const cudaError_t cause = cudaGetLastError();
  const std::string why = cause == cudaSuccess ? "" : "; the CUDA runtime: " + CudaErrorText(cause);
  throw BackendError(std::string("cuBLAS call ") + what + " failed at " + ShortPath(file) + ":" +
                     std::to_string(line) + ": " + text + why);
}

}  // namespace cuda
}  // namespace dlarray
