/*!
 * \file dlarray/ext/streams.h
 * \brief Device extension "dlarray.streams.v1": ordering work between streams of one device (the
 *        DLPack and __cuda_array_interface__ stream handshakes). Offered by device plugins whose
 *        devices have streams (CUDA); reached with DLArrayDeviceApi::get_extension.
 */
#ifndef DLARRAY_EXT_STREAMS_H_
#define DLARRAY_EXT_STREAMS_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief The extension's name (a new layout gets a new name). */
#define DLARRAY_EXT_STREAMS_V1 "dlarray.streams.v1"

/*! \brief The table the plugin returns (valid until exit). Functions return 0, or -1 after
 *         core->set_error. */
typedef struct DLArrayStreamsExtV1 {
  uint64_t struct_size; /*!< sizeof(DLArrayStreamsExtV1) of the plugin */
  void* self;           /*!< handed back to every function */
  /*!
   * \brief Makes stream `waiter` of device `device_id` wait for the work queued so far on stream
   *        `signaller` (e.g. an event recorded on one, waited on by the other), without blocking
   *        the host. Handles are the backend's (CUDA: cudaStream_t, with 1 and 2 the legacy and
   *        the per-thread default stream).
   */
  int (*wait_stream)(void* self, int32_t device_id, void* waiter, void* signaller);
} DLArrayStreamsExtV1;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // DLARRAY_EXT_STREAMS_H_
