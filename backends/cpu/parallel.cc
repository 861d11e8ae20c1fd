/*!
 * \file parallel.cc
 * \brief Whether OpenMP may be used: not in a child forked after the parent's OpenMP threads had
 *        started. libgomp keeps its thread pool across fork() but not the threads, so the child's
 *        first parallel region would wait forever; such a child runs every op serially instead.
 */
#include "parallel.h"

#include <omp.h>
#include <pthread.h>

#include <atomic>
#include <cstdio>

namespace dlarray::cpu {
namespace {

std::atomic<bool> pool_started{false};       // this process has asked OpenMP for threads
std::atomic<bool> forked_after_pool{false};  // ... and is a child forked after that
std::atomic<bool> warned{false};

void OnForkChild() {
  if (pool_started.load(std::memory_order_relaxed)) {
    forked_after_pool.store(true, std::memory_order_relaxed);
  }
}

// Registered when the backend is loaded; the handler runs in every child of fork().
const bool registered = pthread_atfork(nullptr, nullptr, &OnForkChild) == 0;

}  // namespace

int ParallelThreads() {
  if (forked_after_pool.load(std::memory_order_relaxed)) {
    if (!warned.exchange(true)) {
      std::fprintf(stderr,
                   "dlarray warning: this process was forked after its OpenMP threads had "
                   "started; CPU ops in it run on one thread (OpenMP's threads do not survive "
                   "fork). Use the 'spawn' or 'forkserver' start method of multiprocessing to "
                   "keep them parallel.\n");
    }
    return 1;
  }
  if (!pool_started.load(std::memory_order_relaxed)) {
    (void)registered;
    pool_started.store(true, std::memory_order_relaxed);
  }
  return omp_get_max_threads();
}

}  // namespace dlarray::cpu
