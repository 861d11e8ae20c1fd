/*!
 * \file gather.cc
 * \brief The indexing primitives gather, gather_along, scatter, nonzero and compress (their
 *        canonical shapes are in the core's index_ops.cc). Elements are moved as unsigned integers
 *        of their size; the indices are checked as they are used: a row whose index is out of
 *        bounds is skipped (never read or written) and the call fails naming that index (a
 *        scatter has then written the valid rows, as on the GPUs, where the check happens in the
 *        kernel too).
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

// Python turns this text ("index ... is out of bounds") into an IndexError.
[[noreturn]] void ThrowOutOfBounds(const char* op, int64_t index, int64_t n) {
  throw Error(ErrorKind::kValue, std::string(op) + ": index " + std::to_string(index) +
                                     " is out of bounds for size " + std::to_string(n));
}

// Copies row i of the indexed array into row t of the picked one (gather) or back (scatter);
// an index out of bounds is recorded and its row skipped.
template <typename U, bool kScatter>
inline void MoveRow(const U* x, U* y, int64_t raw, int64_t o, int64_t t, int64_t n, int64_t inner,
                    BadIndex* bad) {
  const int64_t i = raw < 0 ? raw + n : raw;
  if (static_cast<uint64_t>(i) >= static_cast<uint64_t>(n)) {
    bad->Record(raw);
    return;
  }
  const int64_t picked = t * inner, indexed = (o * n + i) * inner;
  const U* from = x + (kScatter ? picked : indexed);
  U* to = y + (kScatter ? indexed : picked);
  if (inner == 1) {
    *to = *from;
  } else {
    std::memcpy(to, from, static_cast<size_t>(inner) * sizeof(U));
  }
}

// How far ahead a single-element gather prefetches its source (memory latency over the time
// one element takes when it hits the cache).
constexpr int64_t kPrefetchAhead = 32;

// A prefetch of x[base + i] for any i: the address is computed in unsigned arithmetic, as a bad
// index (reported later) may point anywhere.
template <typename U>
inline void Prefetch(const U* x, int64_t base, int64_t i) {
  const uint64_t at = reinterpret_cast<uintptr_t>(x) +
                      (static_cast<uint64_t>(base) + static_cast<uint64_t>(i)) * sizeof(U);
  __builtin_prefetch(reinterpret_cast<const void*>(static_cast<uintptr_t>(at)));
}

// Every (o, j) row pair. A gather splits the rows of the output over the threads; a scatter
// splits only over `outer`, so that duplicate indices are written in order (the last wins, as in
// NumPy) rather than by racing threads.
template <typename U, bool kScatter>
void MoveRows(const char* src, char* dst, const int64_t* idx, int64_t m, int64_t outer, int64_t n,
              int64_t inner, BadIndex* bad) {
  const U* x = reinterpret_cast<const U*>(src);
  U* y = reinterpret_cast<U*>(dst);
  if (kScatter) {
    ParallelFor(outer, outer * m * inner, 1, [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) {
        for (int64_t j = 0; j < m; ++j) MoveRow<U, true>(x, y, idx[j], o, o * m + j, n, inner, bad);
      }
    });
    return;
  }
  ParallelFor(outer * m, outer * m * inner, kElementAlign, [&](int64_t t0, int64_t t1) {
    int64_t o = t0 / m, j = t0 % m;  // one division per chunk, then counted
    if (inner == 1) {  // single elements: branch-free, out-of-bounds reads go to element 0
      bool all_in = true;
      for (int64_t t = t0; t < t1; ++t) {
        // Random reads from a large array wait on memory: asking kPrefetchAhead elements early
        // keeps that many misses in flight (a prefetch never faults, whatever the address).
        if (j + kPrefetchAhead < m) Prefetch(x, o * n, idx[j + kPrefetchAhead]);
        const int64_t raw = idx[j];
        const int64_t i = raw < 0 ? raw + n : raw;
        const bool in = static_cast<uint64_t>(i) < static_cast<uint64_t>(n);
        all_in &= in;
        y[t] = x[o * n + (in ? i : 0)];
        if (++j == m) {
          j = 0;
          ++o;
        }
      }
      if (all_in) return;
      o = t0 / m;
      j = t0 % m;
    }
    for (int64_t t = t0; t < t1; ++t) {  // rows (and the report of a bad single element)
      MoveRow<U, false>(x, y, idx[j], o, t, n, inner, bad);
      if (++j == m) {
        j = 0;
        ++o;
      }
    }
  });
}

// gather_along: out[o, j, i] = x[o, idx[o, j, i], i], an index per element (take_along_axis), in
// output order; an index out of bounds reads element 0 of its row and is reported after.
template <typename U>
void MoveAlong(const char* src, char* dst, const int64_t* idx, int64_t m, int64_t outer, int64_t n,
               int64_t inner, BadIndex* bad) {
  const U* x = reinterpret_cast<const U*>(src);
  U* y = reinterpret_cast<U*>(dst);
  const int64_t total = outer * m * inner, block = m * inner;
  ParallelFor(total, total, kElementAlign, [&](int64_t t0, int64_t t1) {
    int64_t o = t0 / block, i = t0 % inner;  // divisions once per chunk, then counted
    int64_t next_row = (o + 1) * block;
    const U* row = x + o * n * inner;
    for (int64_t t = t0; t < t1; ++t) {
      if (t == next_row) {
        row += n * inner;
        next_row += block;
      }
      if (inner == 1 && t + kPrefetchAhead < next_row) Prefetch(row, 0, idx[t + kPrefetchAhead]);
      const int64_t raw = idx[t];
      const int64_t k = raw < 0 ? raw + n : raw;
      const bool in = static_cast<uint64_t>(k) < static_cast<uint64_t>(n);
      if (!in) bad->Record(raw);
      y[t] = row[(in ? k : 0) * inner + i];
      if (++i == inner) i = 0;
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
  if (bad.seen) ThrowOutOfBounds(ctx.op_name, bad.value, n);
}

// The stream compaction of nonzero and compress: value(i) for each i where mask[i] is set, in
// order, to out; their number to *count. Count per chunk, a prefix sum over the chunks, then each
// chunk writes its values in order.
template <typename T, typename Value>
void SelectFlagged(int64_t n, const uint8_t* mask, T* out, int64_t* count, Value value) {
  const int64_t chunks = ThreadsFor(n) * kChunksPerThread;
  std::vector<int64_t> ends(static_cast<size_t>(chunks) + 1, 0);
  ParallelTasks(chunks, ThreadsFor(n), [&](int64_t c, int) {
    const int64_t b = ChunkBegin(n, 64, c, chunks), e = ChunkBegin(n, 64, c + 1, chunks);
    int64_t k = 0;
    for (int64_t i = b; i < e; ++i) k += mask[i] != 0;
    ends[static_cast<size_t>(c) + 1] = k;
  });
  for (int64_t c = 0; c < chunks; ++c) ends[c + 1] += ends[c];
  *count = ends[static_cast<size_t>(chunks)];
  ParallelTasks(chunks, ThreadsFor(n), [&](int64_t c, int) {
    const int64_t b = ChunkBegin(n, 64, c, chunks), e = ChunkBegin(n, 64, c + 1, chunks);
    T* w = out + ends[static_cast<size_t>(c)];
    T* const end = out + ends[static_cast<size_t>(c) + 1];
    // Branch-free: every value is written and kept only when its mask is set; the loop stops
    // once the chunk's last slot is filled, so no write reaches the next chunk's slots.
    for (int64_t i = b; i < e && w < end; ++i) {
      *w = value(i);
      w += mask[i] != 0;
    }
  });
}

}  // namespace

void GatherKernel(const KernelContext& ctx) { Take<false>(ctx); }

void GatherAlongKernel(const KernelContext& ctx) {
  const DLArray* x = ctx.inputs[0];
  const DLArray* out = ctx.outputs[0];
  const int64_t outer = out->shape[0], m = out->shape[1], inner = out->shape[2], n = x->shape[1];
  if (outer * m * inner == 0) return;
  BadIndex bad;
  VisitElementSize(x->dtype, [&](auto tag) {
    MoveAlong<typename decltype(tag)::type>(Data<const char>(x), Data<char>(ctx.outputs[0]),
                                            Data<const int64_t>(ctx.inputs[1]), m, outer, n, inner,
                                            &bad);
  });
  if (bad.seen) ThrowOutOfBounds(ctx.op_name, bad.value, n);
}

void ScatterKernel(const KernelContext& ctx) { Take<true>(ctx); }

void NonzeroKernel(const KernelContext& ctx) {
  int64_t* out = Data<int64_t>(ctx.outputs[0]);  // out[0]: the count, then the positions
  SelectFlagged(NumElements(ctx.inputs[0]), Data<const uint8_t>(ctx.inputs[0]), out + 1, out,
                [](int64_t i) { return i; });
}

// x[mask] in one pass over x and the mask (nonzero + gather write and read 8-byte positions).
void CompressKernel(const KernelContext& ctx) {
  VisitElementSize(ctx.inputs[0]->dtype, [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U* x = Data<const U>(ctx.inputs[0]);
    SelectFlagged(NumElements(ctx.inputs[0]), Data<const uint8_t>(ctx.inputs[1]),
                  Data<U>(ctx.outputs[0]), Data<int64_t>(ctx.outputs[1]),
                  [x](int64_t i) { return x[i]; });
  });
}

}  // namespace dlarray::cpu
