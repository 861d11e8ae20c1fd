/*!
 * \file dlarray/parallel.h
 * \brief Parallel loops for the CPU kernels of op plugins, on the CPU plugin's thread pool
 *        (extension "dlarray.parallel.v1", dlarray/ext/parallel.h). Header-only.
 *
 *     void MyKernel(const dlarray::KernelContext& ctx) {
 *       const float* x = dlarray::Data<const float>(ctx.inputs[0]);
 *       float* y = dlarray::Data<float>(ctx.outputs[0]);
 *       const int64_t n = dlarray::NumElements(ctx.outputs[0]);
 *       dlarray::ParallelFor(ctx, n, n, 16, [&](int64_t begin, int64_t end) {
 *         for (int64_t i = begin; i < end; ++i) y[i] = f(x[i]);
 *       });
 *     }
 *
 * Use it instead of OpenMP or threads of your own: those compete with the pool that every core
 * op runs on (see ext/parallel.h). Where no pool is offered (an older CPU plugin, a call on
 * another device type) the loop runs on the calling thread.
 */
#ifndef DLARRAY_PARALLEL_H_
#define DLARRAY_PARALLEL_H_

#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <type_traits>

#include "dlarray/errors.h"
#include "dlarray/ext/parallel.h"
#include "dlarray/kernel.h"

namespace dlarray {

/*! \brief The CPU pool of the device a kernel call runs on, or nullptr when there is none. */
inline const DLArrayParallelExtV1* CpuPool(const KernelContext& ctx) {
  const DLArrayDeviceApi* device = ctx.call != nullptr ? ctx.call->device : nullptr;
  if (ctx.device_type != kDLArrayCPU || device == nullptr ||
      !DLARRAY_STRUCT_HAS(device, DLArrayDeviceApi, get_extension) ||
      device->get_extension == nullptr) {
    return nullptr;
  }
  const void* ext = nullptr;
  if (device->get_extension(device->self, DLARRAY_EXT_PARALLEL_V1, &ext) != 0 || ext == nullptr) {
    return nullptr;
  }
  const auto* pool = static_cast<const DLArrayParallelExtV1*>(ext);
  return DLARRAY_STRUCT_HAS(pool, DLArrayParallelExtV1, num_threads) ? pool : nullptr;
}

/*!
 * \brief Calls body(begin, end) on disjoint ranges covering [0, n), each starting at a multiple
 *        of align, on the CPU pool; `work` is the loop's cost in element-sized units (small loops
 *        stay on the calling thread). An exception thrown by body stops the ranges not yet
 *        started and is rethrown here once all running ones have returned.
 */
template <typename Body>
void ParallelFor(const KernelContext& ctx, int64_t n, int64_t work, int64_t align, Body&& body) {
  if (n <= 0) return;
  const DLArrayParallelExtV1* pool = CpuPool(ctx);
  if (pool == nullptr) {
    body(int64_t{0}, n);
    return;
  }
  struct Loop {
    std::remove_reference_t<Body>* body;
    std::atomic<bool> failed{false};
    std::mutex mu;
    std::exception_ptr error;
  } loop;
  loop.body = &body;
  // The C boundary: no exception may cross it, so the first one is carried to this thread.
  auto range = [](void* context, int64_t begin, int64_t end) {
    Loop* l = static_cast<Loop*>(context);
    if (l->failed.load(std::memory_order_relaxed)) return;
    try {
      (*l->body)(begin, end);
    } catch (...) {
      std::lock_guard<std::mutex> lock(l->mu);
      if (!l->error) l->error = std::current_exception();
      l->failed.store(true, std::memory_order_relaxed);
    }
  };
  if (pool->parallel_for(pool->self, n, work, align, range, &loop) != 0) throw CoreCallFailed();
  if (loop.error) std::rethrow_exception(loop.error);
}

}  // namespace dlarray

#endif  // DLARRAY_PARALLEL_H_
