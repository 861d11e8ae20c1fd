/*!
 * \file dlarray/ext/mpi.h
 * \brief "dlarray.mpi.v1": MPI collectives on host arrays, a device extension of the CPU plugin
 *        (dlarray.distributed's CPU path, as "dlarray.nccl.v1" is its GPU path).
 *
 * Reached through DLArrayDeviceApi::get_extension(self, DLARRAY_EXT_MPI_V1, &table) on the CPU
 * device type (from C++: dlarray::FindExtension(DLARRAY_EXT_MPI_V1, &type), so that another
 * backend whose arrays live in host memory could offer the same table). Plain C: no MPI header is
 * needed to build or use it.
 *
 * The MPI library is opened at the first call that needs it, never when the plugin loads, so
 * nothing changes where MPI is not installed: the file (or folder) named by DLARRAY_MPI_LIBRARY
 * alone when it is set, else the candidates given to load(), then libmpi.so.40 (Open MPI 3-5) on
 * the loader's path. When none opens, the error lists every place tried and says what to install.
 * Open MPI's ABI only (its handles are addresses of the library's objects); MPICH's libmpi.so.12
 * is named as unsupported.
 *
 * MPI is initialised (MPI_THREAD_SERIALIZED) by load() unless the process already did it (e.g.
 * mpi4py), and finalized by finalize() only when load() initialised it.
 *
 * Collectives block the calling thread until this rank's part is done (MPI has no stream). An
 * MPI call cannot be interrupted: comm_abort marks the communicator failed (later calls fail at
 * once) and says whether a call is still inside MPI, so that the caller can end the process
 * instead of waiting for a peer that is gone. Calls on one communicator come from one thread at a
 * time; comm_abort and pending_seconds may come from any thread.
 *
 * Errors: a function returning int returns 0, or -1 after core->set_error(kind, message):
 * kDLArrayErrValue for bad arguments, kDLArrayErrType for dtypes, kDLArrayErrRuntime for MPI
 * failures (with MPI's error string).
 *
 * Versioning: the table starts with struct_size; fields are only appended.
 */
#ifndef DLARRAY_EXT_MPI_H_
#define DLARRAY_EXT_MPI_H_

#include <stdint.h>

#include "dlarray/dlarray.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief The extension's name for get_extension. */
#define DLARRAY_EXT_MPI_V1 "dlarray.mpi.v1"
/*! \brief Bytes a port name may take (Open MPI's MPI_MAX_PORT_NAME). */
#define DLARRAY_MPI_PORT_BYTES 1024

/*! \brief A communicator: one rank of a group (opaque; made by comm_create). */
typedef struct DLArrayMpiComm DLArrayMpiComm;

/*! \brief Reductions: the numbers of dlarray.nccl.v1's (avg divides the sum by the ranks). */
typedef enum {
  kDLArrayMpiSum = 0,  /*!< sum (logical or for bool) */
  kDLArrayMpiProd = 1, /*!< product (logical and for bool) */
  kDLArrayMpiMax = 2,  /*!< maximum (or for bool) */
  kDLArrayMpiMin = 3,  /*!< minimum (and for bool) */
  kDLArrayMpiAvg = 4,  /*!< sum / ranks; integers truncate toward zero, as C and NCCL do */
} DLArrayMpiReduceOp;

/*!
 * \brief The table. Arrays are compact, in host memory, of any storage dtype (min and max not for
 *        complex, avg not for bool); send and recv may be the same array.
 */
typedef struct DLArrayMpiExtV1 {
  uint64_t struct_size; /*!< sizeof(DLArrayMpiExtV1) of the plugin */
  /*! \brief Opens the MPI library (once per process; candidates: files or folders tried before
   *         the system's, may be NULL) and initialises MPI unless it is already. */
  int (*load)(const char* const* candidates, int32_t num_candidates);
  /*! \brief The loaded library's path and MPI_Get_library_version's first line (valid for the
   *         process); loads it without extra candidates when needed. */
  int (*library)(const char** path, const char** version);
  /*! \brief This process's rank and size in MPI_COMM_WORLD (the launcher's job; 0 of 1 for a
   *         process not started by mpirun or srun). */
  int (*world)(int32_t* rank, int32_t* size);
  /*! \brief Opens an MPI port (MPI_Open_port) for comm_create's joins; name gets
   *         DLARRAY_MPI_PORT_BYTES at most, NUL-terminated. */
  int (*open_port)(char* name);
  /*!
   * \brief Makes the communicator of rank `rank` of `world_size`. When MPI_COMM_WORLD has
   *        world_size ranks it is the group (port is ignored); else it holds world_size / jobs
   *        ranks, and the jobs join through `port` (opened by rank 0's open_port): rank 0's job
   *        accepts the others one at a time, each connects once. Ranks are ordered by `rank`.
   *        Blocks until the group is complete.
   */
  int (*comm_create)(int32_t world_size, int32_t rank, const char* port, DLArrayMpiComm** out);
  /*! \brief Marks comm failed: calls on it fail from now on. *busy = 1 when a call is still
   *         inside MPI (it cannot be interrupted), else 0. Any thread. */
  int (*comm_abort)(DLArrayMpiComm* comm, int32_t* busy);
  /*! \brief Frees comm (MPI_Comm_free unless aborted; freed also when it returns -1). */
  int (*comm_destroy)(DLArrayMpiComm* comm);
  /*! \brief recv = op over the ranks of send (same size and dtype). */
  int (*all_reduce)(DLArrayMpiComm* comm, const DLArray* send, DLArray* recv, int32_t op);
  /*! \brief recv = root's send on every rank (send is read on root only). */
  int (*broadcast)(DLArrayMpiComm* comm, const DLArray* send, DLArray* recv, int32_t root);
  /*! \brief recv = the ranks' send arrays, concatenated in rank order (world_size x its size). */
  int (*all_gather)(DLArrayMpiComm* comm, const DLArray* send, DLArray* recv);
  /*! \brief recv = part `rank` of (op over the ranks of send); send has world_size x recv's size.
   */
  int (*reduce_scatter)(DLArrayMpiComm* comm, const DLArray* send, DLArray* recv, int32_t op);
  /*! \brief MPI_Barrier on comm. */
  int (*barrier)(DLArrayMpiComm* comm);
  /*! \brief How long the call now inside MPI on comm has been waiting, in seconds (0 when none):
   *         a watchdog fails the group when a peer never joins. Any thread. */
  int (*pending_seconds)(DLArrayMpiComm* comm, double* seconds);
  /*! \brief MPI_Finalize when load() initialised MPI and it is not finalized yet. */
  int (*finalize)(void);
  /*!
   * \brief Starts recv = op over the ranks of send (MPI_Iallreduce) and returns at once;
   *        *request names it for wait. send and recv must stay alive and untouched until then.
   *        Every rank starts the same non-blocking collectives in the same order.
   */
  int (*iall_reduce)(DLArrayMpiComm* comm, const DLArray* send, DLArray* recv, int32_t op,
                     int64_t* request);
  /*! \brief Waits for the collective iall_reduce started (and divides for avg); a request is
   *         waited for once. */
  int (*wait)(DLArrayMpiComm* comm, int64_t request);
} DLArrayMpiExtV1;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // DLARRAY_EXT_MPI_H_
