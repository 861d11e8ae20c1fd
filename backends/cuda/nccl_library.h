/*!
 * \file nccl_library.h
 * \brief libnccl.so.2 opened at run time: where it is searched, and the few NCCL functions the
 *        CUDA plugin calls, declared here from NCCL's published API (no NCCL header is needed to
 *        build). Plain C++: no CUDA header either, so it is unit-tested without a GPU.
 */
#ifndef DLARRAY_BACKENDS_CUDA_NCCL_LIBRARY_H_
#define DLARRAY_BACKENDS_CUDA_NCCL_LIBRARY_H_

#include <cstddef>
#include <string>
#include <vector>

namespace dlarray {
namespace cuda {
namespace nccl {

// NCCL's types, as nccl.h declares them (its enums are int-sized).
using Result = int;           //!< ncclResult_t
using Comm = struct Opaque*;  //!< ncclComm_t
using Stream = void*;         //!< cudaStream_t
constexpr Result kSuccess = 0;
constexpr Result kInProgress = 7;

/*! \brief ncclUniqueId. */
struct UniqueId {
  char internal[128];
};

/*! \brief NCCL_CONFIG_UNDEF_INT (INT_MIN): "NCCL's default". */
constexpr int kConfigUndefInt = -2147483647 - 1;

/*!
 * \brief ncclConfig_t as of NCCL 2.14 (the first with non-blocking communicators). NCCL reads
 *        `size` bytes and gives later fields their defaults, as the version field says.
 */
struct Config {
  size_t size = sizeof(Config);
  unsigned int magic = 0xcafebeef;
  unsigned int version = 21400;  // NCCL_VERSION(2, 14, 0)
  int blocking = 1;
  int cga_cluster_size = kConfigUndefInt;
  int min_ctas = kConfigUndefInt;
  int max_ctas = kConfigUndefInt;
  const char* net_name = nullptr;
};

/*! \brief NCCL 2.14 is the oldest version with what the plugin uses (non-blocking comms). */
constexpr int kMinVersion = 21400;

/*! \brief An opened libnccl and its functions (all resolved). */
struct Library {
  std::string path;  //!< absolute path of the file opened
  int version = 0;   //!< ncclGetVersion's code, e.g. 22809
  Result (*GetVersion)(int*) = nullptr;
  const char* (*GetErrorString)(Result) = nullptr;
  const char* (*GetLastError)(Comm) = nullptr;
  Result (*GetUniqueId)(UniqueId*) = nullptr;
  Result (*CommInitRankConfig)(Comm*, int, UniqueId, int, Config*) = nullptr;
  Result (*CommFinalize)(Comm) = nullptr;
  Result (*CommDestroy)(Comm) = nullptr;
  Result (*CommAbort)(Comm) = nullptr;
  Result (*CommGetAsyncError)(Comm, Result*) = nullptr;
  Result (*AllReduce)(const void*, void*, size_t, int, int, Comm, Stream) = nullptr;
  Result (*Broadcast)(const void*, void*, size_t, int, int, Comm, Stream) = nullptr;
  Result (*AllGather)(const void*, void*, size_t, int, Comm, Stream) = nullptr;
  Result (*ReduceScatter)(const void*, void*, size_t, int, int, Comm, Stream) = nullptr;
  Result (*GroupStart)() = nullptr;
  Result (*GroupEnd)() = nullptr;
  // Optional (NCCL 2.18+): null in older libraries, whose communicators stay non-blocking.
  Result (*CommSplit)(Comm, int, int, Comm*, Config*) = nullptr;
};

/*!
 * \brief The places tried, in order: DLARRAY_NCCL_LIBRARY alone when set (a file, or a folder
 *        holding libnccl.so.2); else `candidates` (files or folders), "libnccl.so.2" for the
 *        dynamic loader's own search, then the CUDA toolkit's library folders.
 */
std::vector<std::string> SearchPath(const std::vector<std::string>& candidates);

/*!
 * \brief Opens the first place of SearchPath(candidates) that holds a usable NCCL (not cached).
 *        Throws BackendError "NCCL was not found: tried A (why), B (why), ..." otherwise.
 */
Library Open(const std::vector<std::string>& candidates);

/*!
 * \brief The process's NCCL: opened by the first successful call, then returned as it is (later
 *        candidates are ignored). A failed search is not remembered. Thread-safe.
 */
const Library& Load(const std::vector<std::string>& candidates);

/*! \brief "2.28.9" for 22809 (NCCL's two encodings of its version). */
std::string VersionText(int code);

/*! \brief "ncclRemoteError (remote process exited or there was a network error)". */
std::string ErrorText(const Library& lib, Result r);

}  // namespace nccl
}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_NCCL_LIBRARY_H_
