/*!
 * \file cublaslt_tune.h
 * \brief One cuBLASLt product with an epilogue, run by the algorithm chosen for it: the fastest,
 *        timed on the GPU the first time a problem is seen, of cuBLASLt's heuristic results and
 *        of an unfused alternative (cuBLAS's product and plain kernels, given by the caller).
 */
#ifndef DLARRAY_BACKENDS_CUDA_CUBLASLT_TUNE_H_
#define DLARRAY_BACKENDS_CUDA_CUBLASLT_TUNE_H_

#include <cublasLt.h>

#include <cstdint>
#include <functional>
#include <string>

#include "kernel_util.cuh"

namespace dlarray {
namespace cuda {

/*! \brief D (m x n) = op_a(A) . op_b(B), column-major, then the epilogue (bias read or written). */
struct LtProblem {
  const char* op;  //!< the dlarray op, for messages and the choices' listing
  cudaDataType_t type;
  cublasComputeType_t compute;
  cublasOperation_t op_a, op_b;
  int64_t m, n, k;
  const void* a;
  int64_t lda;
  const void* b;
  int64_t ldb;
  void* d;
  int64_t ldd;
  cublasLtEpilogue_t epilogue;
  void* bias;  //!< read (BIAS, RELU_BIAS) or written (BGRADA)
};

/*!
 * \brief Queues p on env's stream: through the choice made for p's shapes, types, epilogue,
 *        alignments and device, made at the first call (see cublaslt_tune.cc). `unfused` queues
 *        the same results without cuBLASLt; it runs where it was the faster, or where cuBLASLt
 *        has no algorithm for p. Throws BackendError (nothing queued) when cuBLASLt is missing.
 */
void RunLtProblem(const LaunchEnv& env, const LtProblem& p, const std::function<void()>& unfused);

/*! \brief The choices made on device id, one line each (get_option "cublaslt_choices:<id>"). */
std::string CublasLtChoices(int id);

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_CUBLASLT_TUNE_H_
