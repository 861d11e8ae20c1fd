/*!
 * \file parallel.h
 * \brief The CPU backend's threads: ParallelFor and ParallelTasks over the backend's own pool
 *        (thread_pool.cc), which shares the machine well:
 *        - the calling thread works too, and tasks are claimed one at a time, so a thread that
 *          the OS has not scheduled yet (its core is busy with another process) is never waited
 *          for: whoever runs takes the work;
 *        - idle workers spin briefly, then sleep (DLARRAY wait policy, see WaitPolicy());
 *        - SetNumThreads() at any time; OMP_NUM_THREADS is the default;
 *        - a child forked after the threads started gets its own fresh pool.
 *        Small loops (work < kParallelWork) run on the calling thread without touching the pool.
 */
#ifndef DLARRAY_BACKENDS_CPU_PARALLEL_H_
#define DLARRAY_BACKENDS_CPU_PARALLEL_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

namespace dlarray::cpu {

/*! \brief Work (about one element touched = 1) below which a kernel stays on the calling thread. */
constexpr int64_t kParallelWork = 32768;

/*! \brief Chunk boundaries of element loops are multiples of this (64 bytes of floats). */
constexpr int64_t kElementAlign = 16;

/*! \brief Chunks per thread of a ParallelFor: spare chunks go to whichever thread is running. */
constexpr int64_t kChunksPerThread = 4;

/*!
 * \brief Threads a parallel loop may use now: NumThreads(), or 1 on a thread already inside a
 *        parallel loop (nested loops run serially).
 */
int ParallelThreads();

/*! \brief The pool's size (the calling thread included): OMP_NUM_THREADS, else the CPUs usable. */
int NumThreads();

/*! \brief Sets the pool's size (>= 1; the calling thread counts as one). Waits for a running loop.
 */
void SetNumThreads(int threads);

/*! \brief The wait policy of idle workers, e.g. "spin 50 us, then sleep" (see thread_pool.cc). */
std::string WaitPolicy();

/*! \brief Threads a parallel loop of this much work gets (1: run serially). */
inline int ThreadsFor(int64_t work) { return work < kParallelWork ? 1 : ParallelThreads(); }

/*! \brief Start of chunk c of num_chunks over [0, n), a multiple of align (or n). */
inline int64_t ChunkBegin(int64_t n, int64_t align, int64_t c, int64_t num_chunks) {
  const int64_t units = (n + align - 1) / align;
  return std::min(n, units * c / num_chunks * align);
}

/*! \brief A task function: runs task `task` on the thread with index `slot` in [0, threads). */
using TaskFn = void (*)(void* context, int64_t task, int slot);

/*!
 * \brief Runs fn(context, t, slot) once for every t in [0, num_tasks) on up to `threads` threads
 *        of the pool (the calling thread is slot 0), and returns when all have run. Tasks are
 *        claimed in order by whichever thread is free; no two threads run with the same slot at
 *        once. When the pool is busy (another thread's loop) the tasks run on the calling thread.
 */
void RunTasks(int64_t num_tasks, int threads, TaskFn fn, void* context);

/*! \brief body(task, slot) for every task in [0, num_tasks), on up to `threads` threads. */
template <typename Body>
inline void ParallelTasks(int64_t num_tasks, int threads, Body&& body) {
  if (threads <= 1 || num_tasks <= 1) {
    for (int64_t t = 0; t < num_tasks; ++t) body(t, 0);
    return;
  }
  using B = std::remove_reference_t<Body>;
  RunTasks(
      num_tasks, threads,
      [](void* context, int64_t task, int slot) { (*static_cast<B*>(context))(task, slot); },
      const_cast<void*>(static_cast<const void*>(&body)));
}

/*!
 * \brief Calls body(begin, end) on disjoint ranges covering [0, n): once, on the calling thread,
 *        when work < kParallelWork; else on about kChunksPerThread ranges per thread, starting at
 *        multiples of align.
 */
template <typename Body>
inline void ParallelFor(int64_t n, int64_t work, int64_t align, Body&& body) {
  const int threads = ThreadsFor(work);
  if (threads <= 1 || n <= align) {
    body(int64_t{0}, n);
    return;
  }
  const int64_t units = (n + align - 1) / align;
  const int64_t chunks = std::min<int64_t>(units, threads * kChunksPerThread);
  ParallelTasks(chunks, threads, [&](int64_t c, int) {
    const int64_t begin = ChunkBegin(n, align, c, chunks);
    const int64_t end = ChunkBegin(n, align, c + 1, chunks);
    if (begin < end) body(begin, end);
  });
}

}  // namespace dlarray::cpu

#endif  // DLARRAY_BACKENDS_CPU_PARALLEL_H_
