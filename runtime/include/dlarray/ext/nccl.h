/*!
 * \file dlarray/ext/nccl.h
 * \brief "dlarray.nccl.v1": NCCL collectives on DLArrays, a device extension of the CUDA plugin.
 *
 * Reached through DLArrayDeviceApi::get_extension(self, DLARRAY_EXT_NCCL_V1, &table) on the CUDA
 * device type (from C++: dlarray::PluginExtension(kDLArrayCUDA, DLARRAY_EXT_NCCL_V1), which
 * also works where the plugin found no GPU), giving a `const DLArrayNcclExtV1*`. Plain C: no NCCL
 * header is needed to use it. Without a GPU, load, library and get_unique_id work; comm_create
 * says there is no GPU.
 *
 * libnccl.so.2 is opened at the first call that needs it, never when the plugin loads, so nothing
 * changes where NCCL is not installed. Search order: the file (or folder holding libnccl.so.2)
 * named by DLARRAY_NCCL_LIBRARY, alone when it is set; else the candidates given to load() (e.g.
 * the nvidia-nccl wheel's lib folder, which the Python package finds), the dynamic loader's own
 * search for libnccl.so.2 (LD_LIBRARY_PATH, ld.so.cache), then the CUDA toolkit's library folders
 * ($CUDA_HOME, /usr/local/cuda). When none opens, the error lists every place tried and why.
 *
 * Collectives run on the CUDA stream of the communicator's GPU (the stream every dlarray op on that
 * GPU uses), so they are ordered with other ops and return without waiting for the GPU.
 *
 * Errors: a function returning int returns 0, or -1 after core->set_error(kind, message) (see
 * plugin_api.h): kDLArrayErrValue for bad arguments (devices, sizes, ranks), kDLArrayErrType for
 * dtypes, kDLArrayErrRuntime for NCCL or CUDA failures (the NCCL error name and NCCL's last error
 * text in the message). C++ callers of the core read it with dlarray::ClearPluginError and
 * dlarray::ThrowPluginError (runtime.h).
 *
 * Communicators are non-blocking NCCL communicators: a call that NCCL has to finish in the
 * background (joining the other ranks, the first connection to a peer) is waited for inside the
 * call, and comm_abort ends that wait. Threads: comm_abort may be called from any thread, also
 * while another thread is inside a call on the same communicator (which then returns -1) or waits
 * for the GPU (NCCL's kernels stop), but not concurrently with comm_destroy. Other calls on one
 * communicator must come from one thread at a time.
 *
 * Versioning: the table starts with struct_size; fields are only appended (check with
 * DLARRAY_STRUCT_HAS before using one added later). An incompatible change takes a new name.
 */
#ifndef DLARRAY_EXT_NCCL_H_
#define DLARRAY_EXT_NCCL_H_

#include <stdint.h>

#include "dlarray/dlarray.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief The extension's name for get_extension. */
#define DLARRAY_EXT_NCCL_V1 "dlarray.nccl.v1"
/*! \brief Bytes of a unique id (NCCL's ncclUniqueId). */
#define DLARRAY_NCCL_UNIQUE_ID_BYTES 128

/*! \brief A communicator: one rank of a group on one GPU (opaque; made by comm_create). */
typedef struct DLArrayNcclComm DLArrayNcclComm;

/*! \brief Reductions (NCCL's own numbers). */
typedef enum {
  kDLArrayNcclSum = 0,  /*!< sum */
  kDLArrayNcclProd = 1, /*!< product */
  kDLArrayNcclMax = 2,  /*!< maximum */
  kDLArrayNcclMin = 3,  /*!< minimum */
  kDLArrayNcclAvg = 4,  /*!< mean over the ranks */
} DLArrayNcclReduceOp;

/*!
 * \brief The table. Arrays are compact, on the communicator's GPU, of one dtype (float16/32/64,
 *        bfloat16, int8/32/64, uint8/32/64); send and recv may be the same array where NCCL
 *        allows it (all_reduce, broadcast).
 */
typedef struct DLArrayNcclExtV1 {
  uint64_t struct_size; /*!< sizeof(DLArrayNcclExtV1) of the plugin */
  /*!
   * \brief Opens libnccl.so.2 (once per process) and resolves the functions used. candidates:
   *        num_candidates library files or folders to try before the system's (may be NULL).
   *        Fails with "NCCL was not found: tried ..." naming every place and why, or when the
   *        library is older than NCCL 2.14. A failed search may be repeated.
   */
  int (*load)(const char* const* candidates, int32_t num_candidates);
  /*! \brief The loaded library's absolute path (valid for the process) and version code (e.g.
   *         22809 for 2.28.9); loads it without extra candidates when needed. */
  int (*library)(const char** path, int32_t* version);
  /*! \brief Fills id (DLARRAY_NCCL_UNIQUE_ID_BYTES) with a new unique id; rank 0 makes it and
   *         sends it to the other ranks. */
  int (*get_unique_id)(uint8_t* id);
  /*! \brief A communicator for rank `rank` of `world_size` on GPU device_id; no traffic yet. */
  int (*comm_create)(int32_t device_id, int32_t world_size, int32_t rank, DLArrayNcclComm** out);
  /*! \brief Joins the group of id (every rank calls it with the same id); waits until all ranks
   *         have joined, NCCL fails, or comm_abort. Made non-blocking (so that the wait can be
   *         aborted), then, with NCCL 2.18+, split into a blocking communicator for the
   *         collectives, which then return as soon as they are queued on the stream. */
  int (*comm_init)(DLArrayNcclComm* comm, const uint8_t* id);
  /*! \brief Aborts: NCCL's kernels of comm stop, calls on it fail from now on. Any thread, any
   *         number of times; comm stays allocated until comm_destroy. */
  int (*comm_abort)(DLArrayNcclComm* comm);
  /*! \brief Waits until comm's queued collectives are done and NCCL has flushed it (the clean
   *         way to end); comm_abort ends the wait. */
  int (*comm_finalize)(DLArrayNcclComm* comm);
  /*! \brief Frees comm: NCCL's resources are released (aborted first unless finalized). comm is
   *         freed also when it returns -1. */
  int (*comm_destroy)(DLArrayNcclComm* comm);
  /*! \brief recv = op over the ranks of send (same shape and dtype). */
  int (*all_reduce)(DLArrayNcclComm* comm, const DLArray* send, DLArray* recv, int32_t op);
  /*! \brief recv = root's send on every rank (send is read on root only). */
  int (*broadcast)(DLArrayNcclComm* comm, const DLArray* send, DLArray* recv, int32_t root);
  /*! \brief recv = the ranks' send arrays, concatenated in rank order (world_size x its size). */
  int (*all_gather)(DLArrayNcclComm* comm, const DLArray* send, DLArray* recv);
  /*! \brief recv = part `rank` of (op over the ranks of send); send has world_size x recv's size.
   */
  int (*reduce_scatter)(DLArrayNcclComm* comm, const DLArray* send, DLArray* recv, int32_t op);
  /*! \brief Opens a group on comm (this thread): its collectives up to group_end are launched
   *         together, in one launch for many small arrays. Call group_end also after a failure. */
  int (*group_start)(DLArrayNcclComm* comm);
  /*! \brief Closes the group and launches its collectives (a comm_abort meanwhile waits for it). */
  int (*group_end)(DLArrayNcclComm* comm);
  /*! \brief 0 while comm is healthy; -1 with the error when NCCL reported an asynchronous error
   *         (e.g. a peer failed) or comm was aborted. Cheap: a watchdog may poll it. */
  int (*async_error)(DLArrayNcclComm* comm);
  /*! \brief How long the oldest collective of comm not yet finished on the GPU has been queued, in
   *         seconds (0 when none is): a watchdog aborts when a peer never joins one. */
  int (*pending_seconds)(DLArrayNcclComm* comm, double* seconds);
  /*!
   * \brief side = 1: comm's later collectives go on its own stream (made at first use), each
   *        ordered after the work queued on the GPU's stream when it is called, so that they
   *        overlap the compute queued after them (data-parallel training's gradient buckets).
   *        side = 0: back to the GPU's stream, which waits (on the GPU, not the host) for every
   *        collective queued on the side stream. Not inside a group.
   */
  int (*set_stream)(DLArrayNcclComm* comm, int32_t side);
  /*!
   * \brief The peer-memory all-reduce (CUDA IPC, one kernel, for small arrays on one host), set
   *        before comm_init: enabled (0/1), max_bytes (all_reduce calls of at most that many
   *        bytes take it), timeout_seconds (its kernel gives up waiting for a peer after that
   *        long; async_error then names the peer). comm_init sets it up when every rank has it
   *        enabled, is on this host and can access every peer's GPU; off until configured.
   *        After comm_init it switches the use of what was set up on or off, and sets max_bytes
   *        (at most the set-up's); every rank must do the same between the same collectives.
   */
  int (*peer_configure)(DLArrayNcclComm* comm, int32_t enabled, uint64_t max_bytes,
                        double timeout_seconds);
  /*! \brief All-reduces count arrays in place: one peer-memory kernel when eligible (one
   *         dtype, at most max_bytes in all), else one NCCL group of all_reduce calls. */
  int (*all_reduce_group)(DLArrayNcclComm* comm, DLArray* const* arrays, int32_t count, int32_t op);
  /*! \brief counts[0..num_counts): all-reduce calls that took the peer path, that went to
   *         NCCL (a group counts once), 1 when the peer path is set up and on, its max_bytes. */
  int (*peer_stats)(DLArrayNcclComm* comm, uint64_t* counts, int32_t num_counts);
  /*!
   * \brief The mean of count float32 (or float64) arrays over the ranks in place, and the SGD
   *        step params[i] += arrays[i] * scale (multiply, then add, each rounded: the separate
   *        ops' bits) for each params[i] not null, in one peer-memory kernel (data-parallel
   *        training's bucket and its update). params[i]: compact, the dtype and size of
   *        arrays[i]. Only where the peer path takes the call (all_reduce_group's rules); an
   *        error otherwise (it has no NCCL form).
   */
  int (*all_reduce_sgd)(DLArrayNcclComm* comm, DLArray* const* arrays, DLArray* const* params,
                        int32_t count, double scale);
} DLArrayNcclExtV1;

/* Deprecated names from before the extension naming rule (docs/architecture.md), kept for
 * out-of-tree plugins and callers; define DLARRAY_NO_DEPRECATED_EXT_NAMES to hide them. */
#ifndef DLARRAY_NO_DEPRECATED_EXT_NAMES
#define DLARRAY_NCCL_EXTENSION DLARRAY_EXT_NCCL_V1
typedef DLArrayNcclExtV1 DLArrayNcclApi;
#endif

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // DLARRAY_EXT_NCCL_H_
