/*!
 * \file cpu_kernels.h
 * \brief The CPU backend's kernels (one per core op) and the helpers they share.
 */
#ifndef DLARRAY_BACKENDS_CPU_CPU_KERNELS_H_
#define DLARRAY_BACKENDS_CPU_CPU_KERNELS_H_

#include <cstdint>

#include "dlarray/dlarray.h"
#include "dlarray/kernel.h"

namespace dlarray {
class Registry;
}  // namespace dlarray

namespace dlarray::cpu {

/*! \brief First float of an input (data + byte_offset). */
inline const float* InData(const DLArray* array) {
  return reinterpret_cast<const float*>(static_cast<const char*>(array->data) + array->byte_offset);
}

/*! \brief First float of an output (data + byte_offset). */
inline float* OutData(DLArray* array) {
  return reinterpret_cast<float*>(static_cast<char*>(array->data) + array->byte_offset);
}

void ArraySetKernel(const KernelContext& ctx);
void BroadcastToKernel(const KernelContext& ctx);
void ReduceSumAxisZeroKernel(const KernelContext& ctx);
/*!
 * \brief y[0, cols) = the column sums of the compact float32 (rows, cols) matrix x: the kernel of
 *        reduce_sum_axis_zero, which the reduce primitive's float32 sums over a leading axis use
 *        too (reduce_sum_axis_zero.cc).
 */
void SumAxisZeroF32(const float* x, float* y, int64_t rows, int64_t cols);
void MatrixMultiplyKernel(const KernelContext& ctx);
void SoftmaxKernel(const KernelContext& ctx);
void SoftmaxCrossEntropyKernel(const KernelContext& ctx);
void CopyKernel(const KernelContext& ctx);
void AstypeKernel(const KernelContext& ctx);
void GatherKernel(const KernelContext& ctx);
void GatherAlongKernel(const KernelContext& ctx);
void ScatterKernel(const KernelContext& ctx);
void NonzeroKernel(const KernelContext& ctx);
void CompressKernel(const KernelContext& ctx);
void ArgsortKernel(const KernelContext& ctx);
void SortKernel(const KernelContext& ctx);
void ReduceKernel(const KernelContext& ctx);
void ReduceMeanKernel(const KernelContext& ctx);
void ScanKernel(const KernelContext& ctx);

/*! \brief Registers the kernels of every op of dlarray/elementwise_table.h. */
void RegisterTableKernels(Registry* registry);

/*!
 * \brief The own cache-blocked, multithreaded SGEMM: C (m x n, row stride ldc) = op(A) * op(B),
 * with op(A) m x k and op(B) k x n; A and B row-major with row strides lda and ldb, transposed when
 * trans_a / trans_b. Used when no CBLAS was found at build time.
 */
void SgemmBlocked(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
                  int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc);

/*! \brief The same product through plain loops (small matrices; reference for tests). */
void SgemmNaive(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
                int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc);

/*! \brief "cblas" or "blocked": what matrix_multiply uses for large products. */
const char* GemmImplementation();

}  // namespace dlarray::cpu

#endif  // DLARRAY_BACKENDS_CPU_CPU_KERNELS_H_
