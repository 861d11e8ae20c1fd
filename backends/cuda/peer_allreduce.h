/*!
 * \file peer_allreduce.h
 * \brief The one-shot all-reduce over peer memory for small arrays on one host (issue 24): every
 *        rank's registered buffer is mapped into every other rank (CUDA IPC), and one kernel per
 *        rank copies its input in, meets the peers at a barrier in peer memory, and sums every
 *        rank's buffer in rank order. NCCL's small all-reduce costs about 40 us on NVLink, most
 *        of it fixed latency; this one costs a launch, a barrier and the NVLink reads.
 *
 * Barrier: block b of rank r writes the call's sequence number into slot [b][r] of every rank's
 * flags, then waits until its own slots [b][p] reach it (sequence numbers compared with wrap, so
 * flags are never reset and a peer one call ahead is no ABA). Block b copies in and then reduces
 * exactly the same elements (the split depends only on the element counts, equal on every rank),
 * so a per-block barrier suffices. Calls alternate between two halves of the buffer: a rank
 * writes a half again only two calls later, after every peer passed the barrier of the call in
 * between, which each started only once its kernel reading that half had finished.
 *
 * The sequence number lives on the GPU (each rank's control words): a kernel reads the last one
 * at its start and its last block to finish stores the next, so a call recorded into a CUDA graph
 * takes a new number at every replay. Every rank makes the same calls in the same order, and a
 * rank's calls run one after another (each on the communicator's stream, ordered after the last),
 * so the ranks' numbers agree.
 *
 * A peer that never arrives: the spin gives up after the group's timeout, or at once when
 * comm_abort sets the host-mapped abort word; it then writes the rank it waited for into the
 * host-mapped error word, which async_error (the group's watchdog) reports.
 */
#ifndef DLARRAY_BACKENDS_CUDA_PEER_ALLREDUCE_H_
#define DLARRAY_BACKENDS_CUDA_PEER_ALLREDUCE_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "dlarray/dlarray.h"

struct DLArrayNcclComm;

namespace dlarray {
namespace cuda {
namespace peer {

constexpr int kMaxRanks = 8;      // ranks a peer group may have (flag slots per block)
constexpr int kMaxBlocks = 128;   // blocks of one call, at most one per SM of the smallest GPU
constexpr int kThreads = 512;     // threads per block
constexpr int kMaxSegments = 64;  // arrays of one call (a gradient bucket's), kernel parameters
constexpr uint64_t kAlign = 16;   // each array's place in the buffer: one 16-byte load per unit

/*! \brief Host-mapped words: [kAbortWord] set by comm_abort, [kErrorWord] set by the kernel. */
constexpr int kAbortWord = 0;
constexpr int kErrorWord = 1;
/*! \brief Error word values: kErrTimeout or kErrAborted, times 256, plus the rank waited for. */
constexpr int32_t kErrTimeout = 1;
constexpr int32_t kErrAborted = 2;

/*! \brief One array of a call: read from `in`, reduced into `out` (may be the same); when
 *         `param` is set, param += out * scale too (all_reduce_sgd; float32/float64). */
struct Segment {
  const void* in;
  void* out;
  void* param;
  uint64_t offset;  // bytes into each rank's buffer half, a multiple of kAlign
  uint64_t count;   // elements
};

/*! \brief Control words of each rank's allocation (its own, never a peer's). */
constexpr int kLastSeq = 0;     // the sequence number of the last call that ended
constexpr int kBlocksDone = 1;  // blocks of the running call that ended (0 between calls)

/*! \brief Everything one launch needs (kernel parameters: under 4 KB). */
struct KernelArgs {
  char* buffers[kMaxRanks];    // each rank's first buffer half (world slots), mapped here
  uint32_t* flags[kMaxRanks];  // each rank's flags [kMaxBlocks][kMaxRanks], mapped here
  uint32_t* control;           // this rank's control words (kLastSeq, kBlocksDone)
  volatile int32_t* words;     // host-mapped: abort and error words
  uint64_t timeout_ns;
  uint64_t slot_bytes;  // rank r's data in a half: at r * slot_bytes
  uint64_t half_bytes;  // odd sequence numbers use the second half, at buffers[p] + half_bytes
  int32_t rank;
  int32_t world;
  double scale;  // the SGD step's -lr (rounded to the dtype) for segments with a param
  int32_t op;    // kDLArrayNcclSum, Prod, Max, Min, Avg (floats)
  int32_t num_segments;
  Segment segments[kMaxSegments];
};

/*! \brief Elements one 16-byte unit holds. */
inline uint64_t UnitElements(DLArrayDType t) { return kAlign * 8 / t.bits; }

/*! \brief Whether the kernel takes dtype t with op (sum/prod/max/min; avg on floats). */
bool Supports(DLArrayDType t, int32_t op);

/*! \brief Queues the kernel on stream: `blocks` blocks (<= kMaxBlocks; one per SM at most, so
 *         that every block is resident while it spins), dtype t (Supports). */
void Launch(const KernelArgs& args, DLArrayDType t, int blocks, cudaStream_t stream);

/*! \brief One rank's registered buffer and the peers' buffers mapped here. */
struct State {
  int device_id = 0;
  int rank = 0;
  int world = 1;
  uint64_t max_bytes = 0;        // calls of at most this many bytes go here (agreed; under c->mu)
  uint64_t capacity = 0;         // the largest max_bytes the buffers hold
  uint64_t slot_bytes = 0;       // each rank's slot of a half (room for padding too)
  uint64_t half_bytes = 0;       // each of the two buffer halves: world slots
  uint64_t timeout_ns = 0;       // a kernel gives up waiting for a peer after this long
  char* own = nullptr;           // own allocation: flags, then the two halves
  char* mapped[kMaxRanks] = {};  // every rank's allocation as seen here (own at `rank`)
  volatile int32_t* words = nullptr;  // host-mapped abort and error words
  int32_t* device_words = nullptr;    // the same words' device address
  int max_blocks = 1;  // blocks of a call: kMaxBlocks, at most the SMs of every rank's GPU
  ~State();
};

/*! \brief Bytes of the flags at the start of each allocation (a multiple of 256), then of the
 *         control words; the two buffer halves follow. */
constexpr uint64_t kFlagBytes = ((kMaxBlocks * kMaxRanks * 4 + 255) / 256) * 256;
constexpr uint64_t kControlBytes = 256;
constexpr uint64_t kHeaderBytes = kFlagBytes + kControlBytes;

/*!
 * \brief Sets the peer path up for an initialised communicator of more than one rank: a
 *        collective (two small NCCL calls) that every rank makes at comm_init, agreeing whether
 *        every rank is on this host, sees every peer's GPU with peer access, and has the path
 *        enabled; c->peer stays null otherwise. NCCL failures throw, as any collective's.
 */
void SetUp(DLArrayNcclComm* c);

/*!
 * \brief All-reduces count arrays (in[i] into out[i]) through peer memory when the call is
 *        eligible (set up, not in a group, one supported dtype and op, at most max_bytes in
 *        all); returns false, having queued nothing, when it is not. The caller has checked the
 *        arrays (compact, on the GPU, in and out of one dtype; sizes[i] elements each). While
 *        the GPU records a CUDA graph the kernel is recorded (each replay is a call). With
 *        params (count entries, null or compact arrays of out[i]'s dtype and size; checked by
 *        the caller), each param += out * scale in the same kernel.
 */
bool TryAllReduce(DLArrayNcclComm* c, const DLArray* const* in, DLArray* const* out,
                  const size_t* sizes, int count, int32_t op, DLArray* const* params = nullptr,
                  double scale = 0);

/*!
 * \brief peer_configure: before comm_init the settings SetUp uses; after it, the use of what was
 *        set up switched on or off (the benchmark's NCCL column; every rank switches between
 *        the same collectives) and its limit, within what the buffers hold.
 */
void Configure(DLArrayNcclComm* c, bool enabled, uint64_t max_bytes, double timeout_seconds);

/*! \brief peer_stats: counts[0..num_counts) of (peer calls, NCCL calls, set up and on, limit). */
void Stats(DLArrayNcclComm* c, uint64_t* counts, int32_t num_counts);

/*! \brief Throws BackendError naming the rank waited for when a kernel gave up. */
void CheckError(DLArrayNcclComm* c);

/*! \brief Makes every spinning kernel of c give up (comm_abort). Takes no mutex: a call may
 *         hold c->mu while its launch waits for a full launch queue to drain. */
void SignalAbort(DLArrayNcclComm* c);

}  // namespace peer
}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_PEER_ALLREDUCE_H_
