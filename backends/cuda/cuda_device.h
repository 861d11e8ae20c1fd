/*!
 * \file cuda_device.h
 * \brief CudaDevice: the dlarray::Device of the CUDA plugin (every GPU of the machine).
 */
#ifndef DLARRAY_BACKENDS_CUDA_CUDA_DEVICE_H_
#define DLARRAY_BACKENDS_CUDA_CUDA_DEVICE_H_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "dlarray/device.h"
#include "dlarray/plugin_api.h"

namespace dlarray {
namespace cuda {

class CachingAllocator;

/*! \brief The plugin's extension tables by name (cuda_plugin.cc), or nullptr. */
const void* FindExtension(const std::string& name);
class HostStaging;

/*!
 * \brief All GPUs of the machine. Per GPU: one non-blocking stream that every kernel and copy
 *        uses, a caching allocator, a cuBLAS handle bound to the stream (made at first use).
 *        Nothing touches the driver before the first call that needs it.
 *
 * Copies between two GPUs run on the destination's stream, ordered by events after the source's
 * queued work and before the source's later work; the calling thread never waits. With peer
 * access (enabled at the first copy between a pair, where the hardware allows it) the copy
 * engines read the other GPU's memory directly; without it the driver stages the copy through
 * its own pinned buffers, still asynchronously. Options "peer_access:A,B" and "pci_bus_id:N"
 * report which way a pair copies and which physical GPU an id is.
 */
class CudaDevice final : public Device {
 public:
  /*! \brief Counters kernels may use for cross-block hand-offs; see semaphores(). */
  static constexpr int kNumSemaphores = 4096;

  /*! \brief core: the table the core gave the plugin (device extensions report errors to it). */
  explicit CudaDevice(const DLArrayCoreApi* core = nullptr);
  ~CudaDevice() override;

  int device_type() const override { return kDLArrayCUDA; }
  int device_count() override;
  std::string unavailable_reason() override;
  std::string device_name(int id) override;
  void* allocate(int id, size_t nbytes) override;
  void free(int id, void* ptr, size_t nbytes) noexcept override;
  uint64_t capabilities() const override { return DLARRAY_DEVICE_POINTER_ARITHMETIC; }
  void copy(const void* src_buffer, uint64_t src_offset, DLDevice src_ctx, void* dst_buffer,
            uint64_t dst_offset, DLDevice dst_ctx, size_t nbytes) override;
  /*! \brief On the device's stream, as its kernels (fill.cu). */
  void fill(void* dst_buffer, uint64_t dst_offset, DLDevice device, const void* pattern,
            uint32_t pattern_size, size_t nbytes) override;
  void synchronize(int id) override;
  void* stream(int id) override { return cuda_stream(id); }
  MemoryStats memory_stats(int id) override;
  void empty_cache(int id) override;
  void set_option(const std::string& key, const std::string& value) override;
  std::string get_option(const std::string& key) override;
  /*! \brief "dlarray.mem_info.v1" and "dlarray.streams.v1" (see cuda_plugin.cc). */
  const void* extension(const std::string& name) override;
  /*! \brief cudaMemGetInfo of device id. */
  void mem_info(int id, uint64_t* free_bytes, uint64_t* total_bytes);
  /*! \brief Makes `waiter` wait for the work queued on `signaller` so far (an event). */
  void wait_stream(int id, cudaStream_t waiter, cudaStream_t signaller);

  // For the kernels of this plugin (device id already validated by the core).
  /*! \brief The stream of device id, made at first use. */
  cudaStream_t cuda_stream(int id);
  /*! \brief Number of multiprocessors of device id (cached). */
  int sm_count(int id);
  /*! \brief The cuBLAS handle of device id, bound to its stream. */
  cublasHandle_t cublas(int id);
  /*!
   * \brief The workspace cublas(id) gave its handle, and its bytes ({nullptr, 0}: cuBLAS keeps
   *        its own). Products on the device's stream may share it: they run one at a time.
   */
  std::pair<void*, size_t> cublas_workspace(int id);
  /*! \brief Whether matmul_precision is "tf32". */
  bool matmul_tf32() const { return matmul_tf32_.load(std::memory_order_relaxed); }
  /*!
   * \brief kNumSemaphores zeroed unsigned counters on device id. A kernel that counts blocks on
   *        them must leave them zero when it ends; kernels of a device never overlap (one stream).
   */
  unsigned int* semaphores(int id);

  // CUDA graphs (graph_ext.cc, dlarray/ext/graph.h).
  /*! \brief Makes what a recording cannot make, then starts recording device id's stream. */
  void BeginCapture(int id);
  /*!
   * \brief Stops recording; returns the graph (null after abort) and, in blocks, the scratch
   *        memory it keeps. Throws (after discarding the recording) when an op broke it.
   */
  cudaGraph_t EndCapture(int id, std::vector<std::pair<void*, size_t>>* blocks);
  /*! \brief Whether device id's stream is recording a graph. */
  bool capturing(int id);
  /*!
   * \brief Records event on stream (a stream of device id) unless device id is recording a graph
   *        (the check and the record under the lock BeginCapture takes); whether it recorded. For
   *        threads other than the recording one: an event recorded into a recording stream
   *        becomes part of the graph, and querying it then breaks the recording.
   */
  bool RecordUnlessCapturing(int id, cudaEvent_t event, cudaStream_t stream);
  /*!
   * \brief Runs fn now or, while device id records a graph, once the recording ends. For
   *        teardown that waits for the stream, unloads code or destroys a graph (a garbage
   *        collection in the middle of a recording frees them): done while recording, it would
   *        break the recording, and only the next op would say so. fn must not throw. (A
   *        recording begun by another thread between the check and fn is not waited for: the
   *        thread that records is the one that frees, in practice.)
   */
  void RunUnlessCapturing(int id, std::function<void()> fn);
  /*! \brief Gives a destroyed graph's scratch memory back to the device's cache. */
  void ReleaseGraphBlocks(int id, const std::vector<std::pair<void*, size_t>>& blocks) noexcept;

 private:
  struct PerDevice;
  void InitDevices();
  PerDevice& At(int id);     // the device, range-checked
  PerDevice& Ready(int id);  // the device, with its stream made
  void CopyBetweenDevices(const void* src, int src_id, void* dst, int dst_id, size_t nbytes);
  void ThrowIfCapturing(int id, const char* what);
  // Makes waiter's later work wait for the work queued so far on from's stream.
  void StreamWaitsFor(PerDevice& from, int from_id, cudaStream_t waiter);
  // Enables access from GPU `from` to the memory of GPU `to` once; whether it is enabled.
  bool EnablePeerAccess(int from, int to);
  int OptionDeviceId(const std::string& key, const std::string& text);

  std::once_flag count_once_;
  int count_ = 0;
  std::string unavailable_reason_;
  std::vector<std::unique_ptr<PerDevice>> devices_;
  std::atomic<bool> matmul_tf32_{false};
  const DLArrayCoreApi* core_;
  std::mutex peer_mu_;
  std::vector<char> peer_state_;  // count_ x count_: 0 untried, 1 enabled, 2 unavailable
};

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_CUDA_DEVICE_H_
