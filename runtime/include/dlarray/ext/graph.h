/*!
 * \file dlarray/ext/graph.h
 * \brief Extension "dlarray.graph.v1": records the work queued on a device's stream once and
 *        replays it with one launch (CUDA graphs: stream capture, cudaGraphInstantiate,
 *        cudaGraphLaunch). Offered by the CUDA plugin; reached with
 *        DLArrayDeviceApi::get_extension(self, DLARRAY_EXT_GRAPH_V1, &table) (C++:
 *        dlarray::DeviceExtension(kDLArrayCUDA, DLARRAY_EXT_GRAPH_V1)).
 *
 * A recording: begin_capture(device), then queue ops on the device (every op of dlarray runs on
 * the device's one stream), then end_capture gives an executable graph, which launch() replays
 * on that stream as often as wanted. While recording, ops are not run, only recorded.
 *
 * What a recording may not do (end_capture then fails and discards it, or the op fails at once):
 * - wait for the device (synchronize, copies to the host, asnumpy): these belong before or after;
 * - allocate memory the device's cache does not hold: run the same ops once unrecorded first, so
 *   that their scratch memory is cached (the caching allocator never calls cudaMalloc while
 *   recording; it raises a clear error instead);
 * - use another device's stream.
 * Scratch memory the recorded ops took and gave back belongs to the graph until destroy() (so no
 * array allocated later can alias it); the arrays the ops read and write must outlive the graph:
 * replays read and write the same addresses.
 *
 * Errors: functions returning int return 0, or -1 after recording the error with the dlarray
 * core's set_error (read it with dlarray::ThrowPluginError, runtime.h): kDLArrayErrValue for bad
 * arguments (no such device, a recording already running or none running), kDLArrayErrRuntime for
 * CUDA failures (their names are in the message).
 *
 * Threads: one recording per device at a time; the thread that began it must queue the ops and
 * end it (CUDA's thread-local capture mode). launch and destroy may be called from any thread.
 */
#ifndef DLARRAY_EXT_GRAPH_H_
#define DLARRAY_EXT_GRAPH_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief The extension's name (get_extension). A new layout gets a new name (".v2"). */
#define DLARRAY_EXT_GRAPH_V1 "dlarray.graph.v1"

/*! \brief A recorded, instantiated graph (owned by the plugin; destroy). */
typedef struct DLArrayGraphExec DLArrayGraphExec;

/*! \brief The table get_extension returns (static: valid until the process exits). */
typedef struct DLArrayGraphExtV1 {
  uint64_t struct_size; /*!< sizeof(DLArrayGraphExtV1) of the plugin */
  /*!
   * \brief Starts recording the work queued on device_id's stream. Makes first what a recording
   *        cannot make (the stream, the cuBLAS handle and its workspace, the kernels' counters).
   */
  int (*begin_capture)(int32_t device_id);
  /*!
   * \brief Stops recording and instantiates the graph into *out. When an op broke the recording
   *        (see above), the recording is discarded and the error names the cause.
   */
  int (*end_capture)(int32_t device_id, DLArrayGraphExec** out);
  /*! \brief Stops a recording and discards it (after an op failed while recording). */
  int (*abort_capture)(int32_t device_id);
  /*! \brief 1 while device_id's stream is recording, else 0. */
  int32_t (*is_capturing)(int32_t device_id);
  /*! \brief Queues one replay of the graph on its device's stream; does not wait. */
  int (*launch)(DLArrayGraphExec* exec);
  /*! \brief Number of operations (kernels, copies, ...) in the graph. */
  int64_t (*num_nodes)(const DLArrayGraphExec* exec);
  /*!
   * \brief Frees the graph and gives its scratch memory back to the device's cache (after its
   *        last replay, in stream order). NULL is ignored.
   */
  void (*destroy)(DLArrayGraphExec* exec);
} DLArrayGraphExtV1;

/* Deprecated names from before the extension naming rule (docs/architecture.md), kept for
 * out-of-tree plugins and callers; define DLARRAY_NO_DEPRECATED_EXT_NAMES to hide them. */
#ifndef DLARRAY_NO_DEPRECATED_EXT_NAMES
#define DLARRAY_EXT_GRAPH DLARRAY_EXT_GRAPH_V1
typedef DLArrayGraphExtV1 DLArrayGraphExt;
#endif

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // DLARRAY_EXT_GRAPH_H_
