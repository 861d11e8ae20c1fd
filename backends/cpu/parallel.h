/*!
 * \file parallel.h
 * \brief ParallelFor: a loop split into one contiguous chunk per OpenMP thread, run serially (no
 *        parallel region at all) when the work is small, or in a process forked after OpenMP's
 *        threads had started (libgomp's thread pool does not survive fork: the child would wait
 *        forever for threads that do not exist).
 */
#ifndef DLARRAY_BACKENDS_CPU_PARALLEL_H_
#define DLARRAY_BACKENDS_CPU_PARALLEL_H_

#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace dlarray::cpu {

/*! \brief Work (about one element touched = 1) below which a kernel stays on the calling thread. */
constexpr int64_t kParallelWork = 32768;

/*! \brief Chunk boundaries of element loops are multiples of this (64 bytes of floats). */
constexpr int64_t kElementAlign = 16;

/*!
 * \brief OpenMP threads a parallel region may use: omp_get_max_threads(), or 1 (after a one-time
 *        warning on stderr) in a process forked after this process's OpenMP threads started.
 *        Every parallel region of the backend asks here first.
 */
int ParallelThreads();

/*! \brief Threads a parallel loop of this much work gets (1: run serially). */
inline int ThreadsFor(int64_t work) { return work < kParallelWork ? 1 : ParallelThreads(); }

/*! \brief Start of chunk c of num_chunks over [0, n), a multiple of align (or n). */
inline int64_t ChunkBegin(int64_t n, int64_t align, int64_t c, int64_t num_chunks) {
  const int64_t units = (n + align - 1) / align;
  return std::min(n, units * c / num_chunks * align);
}

/*!
 * \brief Calls body(begin, end) on disjoint ranges covering [0, n): once, on the calling thread,
 *        when work < kParallelWork; else one contiguous range per thread, starting at multiples
 *        of align.
 */
template <typename Body>
inline void ParallelFor(int64_t n, int64_t work, int64_t align, Body&& body) {
  const int threads = ThreadsFor(work);
  if (threads <= 1 || n <= align) {
    body(int64_t{0}, n);
    return;
  }
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int c = 0; c < threads; ++c) {
    const int64_t begin = ChunkBegin(n, align, c, threads);
    const int64_t end = ChunkBegin(n, align, c + 1, threads);
    if (begin < end) body(begin, end);
  }
}

}  // namespace dlarray::cpu

#endif  // DLARRAY_BACKENDS_CPU_PARALLEL_H_
