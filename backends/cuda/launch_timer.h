/*!
 * \file launch_timer.h
 * \brief The GPU's own time for each of several ways to queue the same work on a stream, for
 *        choosing the fastest (cublaslt_tune.cc times its products with it).
 */
#ifndef DLARRAY_BACKENDS_CUDA_LAUNCH_TIMER_H_
#define DLARRAY_BACKENDS_CUDA_LAUNCH_TIMER_H_

#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

namespace dlarray {
namespace cuda {

/*!
 * \brief Microseconds per launch of each candidate, as the GPU runs a few of them back to back;
 *        -1 where its first launch returned false (it must then have queued nothing).
 *
 * A spin kernel holds the stream while each sample's launches queue behind it, so CUDA events
 * measure the GPU's time for them (as a replayed CUDA graph runs them), not the host's launch
 * rate; a few samples per candidate, interleaved across candidates so that a clock change hits
 * all alike, the least kept. Waits for the stream: never call it while the stream records a
 * CUDA graph. Each candidate runs 1 + 3 x 4 times, writing what it writes.
 */
std::vector<float> TimeLaunches(cudaStream_t stream,
                                const std::vector<std::function<bool()>>& launches);

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_LAUNCH_TIMER_H_
