/*!
 * \file dlarray/ext/parallel.h
 * \brief Device extension "dlarray.parallel.v1" of the CPU device: the CPU plugin's thread pool,
 *        for the CPU kernels of other plugins. Reached with DLArrayDeviceApi::get_extension on
 *        the table a CPU kernel call carries (DLArrayKernelCall::device); in C++,
 *        dlarray::ParallelFor (dlarray/parallel.h) finds and uses it.
 *
 * Why: a kernel that starts threads of its own (OpenMP, std::thread) competes with the pool the
 * core's ops run on; on a machine with few cores the two sets of threads take turns sleeping and
 * a 0.03 ms op takes milliseconds. Loops given to this extension share the pool's threads and its
 * wait policy, nest safely (a loop inside a loop runs serially) and follow set_num_threads.
 */
#ifndef DLARRAY_EXT_PARALLEL_H_
#define DLARRAY_EXT_PARALLEL_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief The extension's name (a new layout gets a new name). */
#define DLARRAY_EXT_PARALLEL_V1 "dlarray.parallel.v1"

/*! \brief One range of a parallel loop: [begin, end). Must not unwind (no C++ exception may leave
 *         it); it reports nothing back, so a body that can fail records that in its context. */
typedef void (*DLArrayParallelBody)(void* context, int64_t begin, int64_t end);

/*! \brief The table the CPU plugin returns (valid until exit). */
typedef struct DLArrayParallelExtV1 {
  uint64_t struct_size; /*!< sizeof(DLArrayParallelExtV1) of the plugin */
  void* self;           /*!< handed back to every function */
  /*!
   * \brief Calls body(context, begin, end) on disjoint ranges that cover [0, n) exactly, each
   *        beginning at a multiple of align (>= 1), on the pool's threads and the calling thread,
   *        and returns when all ran. `work` is the loop's cost in element-sized units: below the
   *        pool's threshold (about 32K) the whole range runs at once on the calling thread, as it
   *        does inside another parallel loop. Returns 0, or -1 after core->set_error (bad n/align).
   */
  int (*parallel_for)(void* self, int64_t n, int64_t work, int64_t align, DLArrayParallelBody body,
                      void* context);
  /*! \brief The threads a loop may use now (1 inside a parallel loop). */
  int32_t (*num_threads)(void* self);
} DLArrayParallelExtV1;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // DLARRAY_EXT_PARALLEL_H_
