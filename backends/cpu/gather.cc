/*!
 * \file gather.cc
 * \brief The indexing primitives gather, scatter and nonzero (their canonical shapes are in the
 *        core's index_ops.cc). Elements are moved as unsigned integers of their size; the indices
 *        are checked as they are used: a row whose index is out of bounds is skipped (never read
 *        or written) and the call fails naming that index (a scatter has then written the valid
 *        rows, as on the GPUs, where the check happens in the kernel too).
 */
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "cpu_kernels.h"
#include "dlarray/dtype_dispatch.h"
#include "dlarray/errors.h"
#include "parallel.h"

namespace dlarray::cpu {
namespace {

// An index outside [-n, n) met by a worker: the first one recorded is reported.
struct BadIndex {
  std::atomic<bool> seen{false};
  int64_t value = 0;
  void Record(int64_t v) {
    bool expected = false;
    if (seen.compare_exchange_strong(expected, true)) value = v;
  }
};

// dst row (o, j) <- src row (o, idx[j]) when gathering; the other way round when scattering.
// Rows whose index is out of bounds are skipped (never read or written) and reported.
template <typename U, bool kScatter>
void MoveRows(const char* src, char* dst, const int64_t* idx, int64_t m, int64_t outer, int64_t n,
              int64_t inner, BadIndex* bad) {
  const U* x = reinterpret_cast<const U*>(src);
  U* y = reinterpret_cast<U*>(dst);
  // Scattered duplicates write the same row from several tasks: split over outer only then.
  const int64_t tasks = kScatter ? outer : outer * m;
  ParallelFor(tasks, outer * m * inner, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t o = kScatter ? t : t / m;
      const int64_t j0 = kScatter ? 0 : t % m, j1 = kScatter ? m : j0 + 1;
      for (int64_t j = j0; j < j1; ++j) {
        const int64_t i = idx[j] < 0 ? idx[j] + n : idx[j];
        if (static_cast<uint64_t>(i) >= static_cast<uint64_t>(n)) {
          bad->Record(idx[j]);
          continue;
        }
        const int64_t picked = (o * m + j) * inner, indexed = (o * n + i) * inner;
        const U* from = x + (kScatter ? picked : indexed);
        U* to = y + (kScatter ? indexed : picked);
        if (inner == 1) {
          *to = *from;
        } else {
          std::memcpy(to, from, static_cast<size_t>(inner) * sizeof(U));
        }
      }
    }
  });
}

template <bool kScatter>
void Take(const KernelContext& ctx) {
  const DLArray* data = kScatter ? ctx.outputs[0] : ctx.inputs[0];
  const int64_t outer = data->shape[0], n = data->shape[1], inner = data->shape[2];
  const int64_t m = NumElements(ctx.inputs[1]);
  if (outer * inner == 0 || m == 0) return;
  const int64_t* idx = Data<const int64_t>(ctx.inputs[1]);
  const char* src = Data<const char>(ctx.inputs[0]);
  char* dst = Data<char>(ctx.outputs[0]);
  BadIndex bad;
  VisitElementSize(data->dtype, [&](auto tag) {
    MoveRows<typename decltype(tag)::type, kScatter>(src, dst, idx, m, outer, n, inner, &bad);
  });
  if (bad.seen) {  // Python turns this text ("index ... is out of bounds") into an IndexError
    throw Error(ErrorKind::kValue, std::string(ctx.op_name) + ": index " +
                                       std::to_string(bad.value) + " is out of bounds for size " +
                                       std::to_string(n));
  }
}

}  // namespace

void GatherKernel(const KernelContext& ctx) { Take<false>(ctx); }

void ScatterKernel(const KernelContext& ctx) { Take<true>(ctx); }

// Count per chunk, prefix sum over the chunks, then each chunk writes its positions in order.
void NonzeroKernel(const KernelContext& ctx) {
  const int64_t n = NumElements(ctx.inputs[0]);
  const uint8_t* mask = Data<const uint8_t>(ctx.inputs[0]);
  int64_t* out = Data<int64_t>(ctx.outputs[0]);
  const int64_t chunks = ThreadsFor(n) * kChunksPerThread;
  std::vector<int64_t> count(static_cast<size_t>(chunks) + 1, 0);
  ParallelTasks(chunks, ThreadsFor(n), [&](int64_t c, int) {
    const int64_t b = ChunkBegin(n, 64, c, chunks), e = ChunkBegin(n, 64, c + 1, chunks);
    int64_t k = 0;
    for (int64_t i = b; i < e; ++i) k += mask[i] != 0;
    count[static_cast<size_t>(c) + 1] = k;
  });
  for (int64_t c = 0; c < chunks; ++c) count[c + 1] += count[c];
  out[0] = count[static_cast<size_t>(chunks)];
  ParallelTasks(chunks, ThreadsFor(n), [&](int64_t c, int) {
    const int64_t b = ChunkBegin(n, 64, c, chunks), e = ChunkBegin(n, 64, c + 1, chunks);
    int64_t* w = out + 1 + count[static_cast<size_t>(c)];
    for (int64_t i = b; i < e; ++i) {
      if (mask[i] != 0) *w++ = i;
    }
  });
}

}  // namespace dlarray::cpu
