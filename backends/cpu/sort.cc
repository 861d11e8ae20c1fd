/*!
 * \file sort.cc
 * \brief argsort: a stable order of each row; sort: the sorted rows themselves. Every dtype maps to
 * an unsigned key of the same order (floats: sign-magnitude flipped, -0.0 as 0.0, every NaN the
 * largest key, so NaN sorts last as in NumPy; descending inverts the key, which keeps equal
 * elements in their order and puts NaN first, as sorting the reversed row and reversing back does).
 * The keys are sorted with their positions by an LSD radix sort (stable by construction), skipping
 * the byte passes where every key has the same digit. One long row is split over the threads
 * (per-chunk histograms, one scatter per pass); many rows take a thread each. sort moves the keys
 * alone (half the bytes of argsort's pairs, and no gather after), with a key that can be turned
 * back into the value: -0.0 stays -0.0 (sorted just before 0.0), a NaN keeps its payload but not
 * its sign (every NaN sorts last). Keys of 4 and 8 bytes take sort_radix.h (one distribution over
 * memory, then cache-sized groups), 1 and 2 bytes the LSD passes here.
 */
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "cpu_kernels.h"
#include "dtype.h"
#include "parallel.h"
#include "sort_radix.h"

namespace dlarray::cpu {
namespace {

template <typename T>
constexpr bool kIsHalf = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// The key type and how many of its low bytes can differ.
template <typename T>
using KeyOf = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
template <typename T>
constexpr int kKeyBytes = kIsHalf<T> || std::is_floating_point_v<T> ? sizeof(KeyOf<T>) : sizeof(T);

template <typename F, typename K>
K FloatKey(F f) {
  if (std::isnan(f)) return ~K{0};
  if (f == 0) f = 0;  // -0.0 and 0.0 are equal
  K bits;
  std::memcpy(&bits, &f, sizeof bits);
  constexpr K kSign = K{1} << (8 * sizeof(K) - 1);
  return (bits & kSign) != 0 ? ~bits : bits | kSign;
}

template <typename T>
KeyOf<T> SortKey(T v) {
  using K = KeyOf<T>;
  if constexpr (kIsHalf<T>) {
    return FloatKey<float, K>(Load(v));
  } else if constexpr (std::is_floating_point_v<T>) {
    return FloatKey<T, K>(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? 1 : 0;
  } else if constexpr (std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<K>(static_cast<U>(static_cast<U>(v) ^ (U{1} << (8 * sizeof(T) - 1))));
  } else {
    return static_cast<K>(v);
  }
}

// A key and its position; positions are 32-bit where the row allows (half the bytes moved).
template <typename K, typename P>
struct Item {
  K key;
  P pos;
};
template <typename K, typename P>
K ItemKey(const Item<K, P>& item) {
  return item.key;
}
template <typename K, typename = std::enable_if_t<std::is_unsigned_v<K>>>
K ItemKey(K key) {  // sort's items are the keys alone
  return key;
}

// sort's key: the element's own bits as an unsigned integer of its size, in the order of the
// values (floats, the half types included: sign-magnitude flipped, a NaN's sign dropped; signed
// integers: the sign bit flipped), so that it turns back into the value exactly.
template <typename T>
using BitsOf =
    std::conditional_t<sizeof(T) == 1, uint8_t,
                       std::conditional_t<sizeof(T) == 2, uint16_t,
                                          std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
template <typename T>
constexpr bool kIsFloat = kIsHalf<T> || std::is_floating_point_v<T>;

// Both directions are branch-free: the sign of random data would mispredict every other element
// (a misprediction costs more than the whole radix pass an element takes).
template <typename T>
BitsOf<T> ToValueKey(T v) {
  using B = BitsOf<T>;
  constexpr int kTop = 8 * sizeof(B) - 1;
  constexpr B kSign = static_cast<B>(B{1} << kTop);
  B bits;
  std::memcpy(&bits, &v, sizeof bits);
  if constexpr (kIsFloat<T>) {
    const bool is_nan = std::isnan(static_cast<double>(Load(v)));
    bits = static_cast<B>(bits & ~(static_cast<B>(is_nan) << kTop));
    const B negative = static_cast<B>(B{0} - static_cast<B>(bits >> kTop));  // all ones or 0
    return static_cast<B>(bits ^ (negative | kSign));
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<B>(bits ^ kSign);
  } else {
    return bits;
  }
}
template <typename T>
T FromValueKey(BitsOf<T> key) {
  using B = BitsOf<T>;
  constexpr int kTop = 8 * sizeof(B) - 1;
  constexpr B kSign = static_cast<B>(B{1} << kTop);
  B bits = key;
  if constexpr (kIsFloat<T>) {
    const B negative = static_cast<B>(static_cast<B>(key >> kTop) - B{1});  // all ones or 0
    bits = static_cast<B>(key ^ (negative | kSign));
  } else if constexpr (std::is_signed_v<T>) {
    bits = static_cast<B>(key ^ kSign);
  }
  T v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

// Stable LSD radix sort of a[0, n) by key, over `threads` chunks; b is scratch of n items.
// Returns whichever of the two buffers holds the sorted items.
template <typename I>
I* RadixSort(I* a, I* b, int64_t n, int key_bytes, int threads) {
  const int64_t chunks = threads > 1 ? threads * kChunksPerThread : 1;
  std::vector<std::array<int64_t, 256>> hist(static_cast<size_t>(chunks));
  for (int pass = 0; pass < key_bytes; ++pass) {
    const int shift = 8 * pass;
    ParallelTasks(chunks, threads, [&](int64_t c, int) {
      std::array<int64_t, 256>& h = hist[static_cast<size_t>(c)];
      h.fill(0);
      const int64_t e = ChunkBegin(n, 1, c + 1, chunks);
      for (int64_t i = ChunkBegin(n, 1, c, chunks); i < e; ++i) ++h[(ItemKey(a[i]) >> shift) & 255];
    });
    int64_t total_of_one_digit = 0;  // a pass where one digit holds every key changes nothing
    for (int d = 0; d < 256; ++d) {
      int64_t sum = 0;
      for (const auto& h : hist) sum += h[d];
      total_of_one_digit = std::max(total_of_one_digit, sum);
    }
    if (total_of_one_digit == n) continue;
    int64_t next = 0;  // each (digit, chunk) starts after all smaller digits and earlier chunks
    for (int d = 0; d < 256; ++d) {
      for (auto& h : hist) {
        const int64_t k = h[d];
        h[d] = next;
        next += k;
      }
    }
    ParallelTasks(chunks, threads, [&](int64_t c, int) {
      std::array<int64_t, 256>& h = hist[static_cast<size_t>(c)];
      const int64_t e = ChunkBegin(n, 1, c + 1, chunks);
      for (int64_t i = ChunkBegin(n, 1, c, chunks); i < e; ++i)
        b[h[(ItemKey(a[i]) >> shift) & 255]++] = a[i];
    });
    std::swap(a, b);
  }
  return a;
}

template <typename T, typename P>
void SortRow(const T* x, int64_t* out, int64_t n, bool descending, int threads,
             std::vector<Item<KeyOf<T>, P>>* scratch) {
  using K = KeyOf<T>;
  using I = Item<K, P>;
  scratch->resize(static_cast<size_t>(2 * n));
  I* a = scratch->data();
  I* b = a + n;
  ParallelFor(n, n, kElementAlign, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const K k = SortKey(x[i]);
      a[i] = {descending ? static_cast<K>(~k) : k, static_cast<P>(i)};
    }
  });
  if (n <= 64) {  // insertion sort: stable, and cheaper than 256-bucket passes for short rows
    for (int64_t i = 1; i < n; ++i) {
      const I v = a[i];
      int64_t j = i;
      for (; j > 0 && a[j - 1].key > v.key; --j) a[j] = a[j - 1];
      a[j] = v;
    }
  } else {
    a = RadixSort(a, b, n, kKeyBytes<T>, threads);
  }
  ParallelFor(n, n, kElementAlign, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) out[i] = static_cast<int64_t>(a[i].pos);
  });
}

// 1- and 2-byte keys: RadixSort's parallel LSD passes over 2n keys of scratch (ws->keys).
template <typename K, typename Load, typename V, typename Convert>
void SortShortKeys(Load load, int64_t n, V* out, Convert convert, int threads,
                   sort_radix::Workspace<K>* ws) {
  ws->keys.resize(static_cast<size_t>(2 * n));
  K* a = ws->keys.data();
  ParallelFor(n, n, kElementAlign, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) a[i] = load(i);
  });
  if (n <= sort_radix::kCompareSortMax) {
    std::sort(a, a + n);
  } else {
    a = RadixSort(a, a + n, n, static_cast<int>(sizeof(K)), threads);
  }
  ParallelFor(n, n, kElementAlign, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) out[i] = convert(a[i]);
  });
}

// One row of sort. Keys of 4 and 8 bytes take sort_radix's two passes over memory; 1- and 2-byte
// keys need at most two LSD passes anyway.
template <typename T>
void SortValuesRow(const T* x, T* out, int64_t n, bool descending, int threads,
                   sort_radix::Workspace<BitsOf<T>>* ws) {
  using K = BitsOf<T>;
  const K flip = descending ? static_cast<K>(~K{0}) : K{0};
  auto load = [x, flip](int64_t i) { return static_cast<K>(ToValueKey(x[i]) ^ flip); };
  auto convert = [flip](K key) { return FromValueKey<T>(static_cast<K>(key ^ flip)); };
  if constexpr (sizeof(K) >= 4) {
    sort_radix::Sort(load, n, out, convert, threads, ws);
  } else {
    SortShortKeys(load, n, out, convert, threads, ws);
  }
}

template <typename T, typename P>
void SortRows(const T* x, int64_t* out, int64_t rows, int64_t n, bool descending) {
  const int threads = ThreadsFor(rows * n * 8);
  if (rows == 1) {
    std::vector<Item<KeyOf<T>, P>> scratch;
    SortRow(x, out, n, descending, threads, &scratch);
    return;
  }
  std::vector<std::vector<Item<KeyOf<T>, P>>> scratch(static_cast<size_t>(std::max(threads, 1)));
  ParallelTasks(rows, threads, [&](int64_t r, int slot) {
    SortRow(x + r * n, out + r * n, n, descending, 1, &scratch[static_cast<size_t>(slot)]);
  });
}

}  // namespace

void ArgsortKernel(const KernelContext& ctx) {
  const DLArray* in = ctx.inputs[0];
  const int64_t rows = in->shape[0], n = in->shape[1];
  if (rows * n == 0) return;
  const bool descending = ctx.attrs[0] != 0.0;
  int64_t* out = Data<int64_t>(ctx.outputs[0]);
  Dispatch<kAllTypes>(in->dtype, ctx.op_name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = Data<const T>(in);
    if (n <= int64_t{0xffffffff}) {
      SortRows<T, uint32_t>(x, out, rows, n, descending);
    } else {
      SortRows<T, int64_t>(x, out, rows, n, descending);
    }
  });
}

void SortKernel(const KernelContext& ctx) {
  const DLArray* in = ctx.inputs[0];
  const int64_t rows = in->shape[0], n = in->shape[1];
  if (rows * n == 0) return;
  const bool descending = ctx.attrs[0] != 0.0;
  Dispatch<kAllTypes>(in->dtype, ctx.op_name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = Data<const T>(in);
    T* out = Data<T>(ctx.outputs[0]);
    std::unique_ptr<T[]> copy;  // sort_radix distributes keys in out's memory: in place, a copy
    if (x < out + rows * n && out < x + rows * n) {
      copy.reset(new T[static_cast<size_t>(rows * n)]);
      std::copy(x, x + rows * n, copy.get());
      x = copy.get();
    }
    const int threads = ThreadsFor(rows * n * 8);
    std::vector<sort_radix::Workspace<BitsOf<T>>> ws(static_cast<size_t>(std::max(threads, 1)));
    if (rows == 1) {
      SortValuesRow(x, out, n, descending, threads, ws.data());
      return;
    }
    ParallelTasks(rows, threads, [&](int64_t r, int slot) {
      SortValuesRow(x + r * n, out + r * n, n, descending, 1, &ws[static_cast<size_t>(slot)]);
    });
  });
}

}  // namespace dlarray::cpu
