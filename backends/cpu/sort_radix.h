/*!
 * \file sort_radix.h
 * \brief sort's key sort (values only, no positions, so no stability to keep: equal keys are equal
 * bits). A long row costs two passes over memory instead of one per key byte:
 *   1. the keys' prefixes (up to 16 bits, just below the top bits that all keys share) are
 *      counted, adjacent prefixes are joined into groups of at most kCacheKeys keys, and the keys
 *      are scattered to their groups, in the output's memory (a read-only counting pass, then one
 *      that reads the input and writes the keys);
 *   2. each group, now in the core's L2, is sorted there by LSD passes over the bits that vary
 *      inside it (digits of at most kMaxDigitBits) and converted into the output, in order.
 * A prefix holding more than kCacheKeys keys is a group of its own, distributed again by the
 * bits below it (keys of one value stop there: nothing varies). The threads share the chunks of
 * the passes over memory, then the groups.
 */
#ifndef DLARRAY_BACKENDS_CPU_SORT_RADIX_H_
#define DLARRAY_BACKENDS_CPU_SORT_RADIX_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "parallel.h"

namespace dlarray::cpu::sort_radix {

/*! \brief Keys a group may hold: they, a buffer as large and the histograms stay in L2. */
constexpr int64_t kCacheKeys = int64_t{1} << 15;
/*! \brief Most bits of one distribution pass (65536 counters of 4 bytes: 256 KiB per chunk). */
constexpr int kPrefixBits = 16;
/*! \brief A group spans at most this many prefixes, so that its keys vary in 8 + 16 bits at most
 * (two in-cache passes) after a distribution by the top 16 bits. */
constexpr int kMaxSpan = 256;
/*! \brief Widest digit of an in-cache pass (4096 counters: 16 KiB, in L1). */
constexpr int kMaxDigitBits = 12;
/*! \brief Rows up to this long are sorted by comparisons (cheaper than counting passes). */
constexpr int64_t kCompareSortMax = 64;

/*! \brief One thread's buffers for its in-cache sorts, kept across the groups and rows it sorts. */
template <typename K>
struct Workspace {
  std::vector<K> keys;
  std::vector<uint32_t> counts;
};

template <typename K>
int BitWidth(K v) {
  int bits = 0;
  for (; v != 0; v >>= 1) ++bits;
  return bits;
}

// Counts the digits of every pass in one read of a[0, n): digit p of key k is
// ((k - low) >> (p * width)) & mask.
template <int kPasses, typename K>
void CountDigits(const K* a, int64_t n, K low, int width, uint32_t* counts) {
  const uint32_t buckets = uint32_t{1} << width;
  const K mask = static_cast<K>(buckets - 1);
  for (int64_t i = 0; i < n; ++i) {
    const K v = static_cast<K>(a[i] - low);
    for (int p = 0; p < kPasses; ++p) ++counts[p * buckets + ((v >> (p * width)) & mask)];
  }
}

// CountDigits<passes> (passes in [1, kPasses]; the loop over the passes unrolled).
template <int kPasses, typename K>
void CountDigitsOf(int passes, const K* a, int64_t n, K low, int width, uint32_t* counts) {
  if constexpr (kPasses > 1) {
    if (passes < kPasses) return CountDigitsOf<kPasses - 1>(passes, a, n, low, width, counts);
  }
  CountDigits<kPasses>(a, n, low, width, counts);
}

// The most passes a key takes: 64 bits in digits of 6 bits or more.
constexpr int kMaxPasses = (64 + 5) / 6;

/*!
 * \brief Sorts the keys a[0, n), all in [low, high], and writes convert(key) of each, in order, to
 * out[0, n). a is overwritten (it is one of the two buffers of the passes, ws->keys the other).
 */
template <typename K, typename V, typename Convert>
void SortInCache(K* a, int64_t n, K low, K high, V* out, Convert convert, Workspace<K>* ws) {
  if (n <= kCompareSortMax) {
    std::sort(a, a + n);
    for (int64_t i = 0; i < n; ++i) out[i] = convert(a[i]);
    return;
  }
  const int bits = BitWidth(static_cast<K>(high - low));
  // Digits of about n / 4 buckets at most: each pass clears and sums its counters, which for a
  // short row would cost more than moving its keys.
  const int max_width = std::clamp(BitWidth(n) - 2, 6, kMaxDigitBits);
  const int passes = (bits + max_width - 1) / max_width;
  const int width = passes == 0 ? 0 : (bits + passes - 1) / passes;
  const int64_t buckets = int64_t{1} << width;
  ws->counts.assign(static_cast<size_t>(passes * buckets), 0);
  uint32_t* counts = ws->counts.data();
  if (passes > 0) CountDigitsOf<kMaxPasses>(passes, a, n, low, width, counts);
  // Passes whose digit is the same for every key change nothing.
  int active[kMaxPasses];
  int num_active = 0;
  for (int p = 0; p < passes; ++p) {
    const uint32_t* c = counts + p * buckets;
    if (*std::max_element(c, c + buckets) != static_cast<uint32_t>(n)) active[num_active++] = p;
  }
  if (num_active == 0) {
    for (int64_t i = 0; i < n; ++i) out[i] = convert(a[i]);
    return;
  }
  if (ws->keys.size() < static_cast<size_t>(n)) ws->keys.resize(static_cast<size_t>(n));
  K* src = a;
  K* dst = ws->keys.data();
  const K mask = static_cast<K>(buckets - 1);
  for (int j = 0; j < num_active; ++j) {
    const int shift = active[j] * width;
    uint32_t* next = counts + active[j] * buckets;
    uint32_t sum = 0;
    for (int64_t d = 0; d < buckets; ++d) {
      const uint32_t c = next[d];
      next[d] = sum;
      sum += c;
    }
    for (int64_t i = 0; i < n; ++i) {
      const K k = src[i];
      dst[next[static_cast<K>(k - low) >> shift & mask]++] = k;
    }
    std::swap(src, dst);
  }
  // The output is written in order (not scattered by the last pass): whole cache lines, converted
  // in vectors.
  for (int64_t i = 0; i < n; ++i) out[i] = convert(src[i]);
}

// The loader of keys already in memory (one type, so that SortLong's recursion ends).
template <typename K>
struct KeysAt {
  const K* keys;
  K operator()(int64_t i) const { return keys[i]; }
};

// A run of adjacent prefixes whose keys are sorted together: dst[begin, begin + count).
struct Group {
  int64_t begin;
  int64_t count;
  int first_prefix;
  int last_prefix;  // the last that holds keys
};

// Joins adjacent prefixes (totals[p] keys each) into groups; group_of[p] is p's group.
inline std::vector<Group> MakeGroups(const std::vector<int64_t>& totals,
                                     std::vector<uint16_t>* group_of) {
  std::vector<Group> groups;
  int64_t begin = 0;
  for (int p = 0; p < static_cast<int>(totals.size()); ++p) {
    const int64_t t = totals[static_cast<size_t>(p)];
    if (t > 0 && (groups.empty() || groups.back().count + t > kCacheKeys ||
                  p - groups.back().first_prefix >= kMaxSpan)) {
      groups.push_back({begin, 0, p, p});
    }
    if (t > 0) {
      groups.back().count += t;
      groups.back().last_prefix = p;
    }
    begin += t;
    (*group_of)[static_cast<size_t>(p)] =
        static_cast<uint16_t>(groups.empty() ? 0 : groups.size() - 1);
  }
  return groups;
}

// One distribution pass: the keys' prefixes (`bits` bits above `shift`) counted per chunk.
struct Distribution {
  int shift = 0;
  int64_t prefixes = 1;
  int64_t chunks = 1;
  std::vector<uint32_t> counts;  // chunks x prefixes
  std::vector<uint16_t> group_of;
  std::vector<Group> groups;
};

// Counts the prefixes of the n keys per chunk and joins them into groups. False (nothing
// counted) where a key differs from `base` at bit `top` or above.
template <typename K, typename Load>
bool CountPrefixes(Load load, int64_t n, K base, int top, int bits, int threads, Distribution* d) {
  d->shift = top - bits;
  d->prefixes = int64_t{1} << bits;
  // Chunks of at least 2^18 keys (the histograms are 256 KiB each), at most 2^31 (uint32 counts).
  d->chunks = threads > 1 ? std::min<int64_t>(threads * kChunksPerThread, n >> 18) : 1;
  d->chunks = std::max(d->chunks, (n >> 31) + 1);
  d->counts.assign(static_cast<size_t>(d->chunks * d->prefixes), 0);
  std::vector<K> differ(static_cast<size_t>(d->chunks), 0);
  const uint32_t mask = static_cast<uint32_t>(d->prefixes - 1);
  const int shift = d->shift;
  ParallelTasks(d->chunks, threads, [&](int64_t c, int) {
    uint32_t* h = d->counts.data() + c * d->prefixes;
    K bits_that_differ = 0;
    const int64_t e = ChunkBegin(n, kElementAlign, c + 1, d->chunks);
    for (int64_t i = ChunkBegin(n, kElementAlign, c, d->chunks); i < e; ++i) {
      const K k = load(i);
      ++h[static_cast<uint32_t>(k >> shift) & mask];
      bits_that_differ |= static_cast<K>(k ^ base);
    }
    differ[static_cast<size_t>(c)] = bits_that_differ;
  });
  constexpr int kKeyBits = 8 * sizeof(K);
  for (const K x : differ)
    if (top < kKeyBits && (x >> top) != 0) return false;
  std::vector<int64_t> totals(static_cast<size_t>(d->prefixes), 0);
  for (int64_t c = 0; c < d->chunks; ++c)
    for (int64_t p = 0; p < d->prefixes; ++p)
      totals[static_cast<size_t>(p)] += d->counts[static_cast<size_t>(c * d->prefixes + p)];
  d->group_of.resize(static_cast<size_t>(d->prefixes));
  d->groups = MakeGroups(totals, &d->group_of);
  return true;
}

// The highest bit at which the keys at 256 evenly spaced places differ from load(0), plus one: the
// keys likely agree above it (CountPrefixes checks), and the distribution takes the bits below.
template <typename K, typename Load>
int SampledTop(Load load, int64_t n) {
  const K base = load(0);
  K bits_that_differ = 0;
  const int64_t step = std::max<int64_t>(1, n / 256);
  for (int64_t i = 0; i < n; i += step) bits_that_differ |= static_cast<K>(load(i) ^ base);
  return BitWidth(bits_that_differ);
}

// Scatters the keys to their groups in dst, each chunk's after the chunks' before it.
template <typename K, typename Load>
void Distribute(Load load, int64_t n, const Distribution& d, K* dst, int threads) {
  const int64_t num_groups = static_cast<int64_t>(d.groups.size());
  std::vector<int64_t> next(static_cast<size_t>(d.chunks * num_groups), 0);
  for (int64_t c = 0; c < d.chunks; ++c)
    for (int64_t p = 0; p < d.prefixes; ++p)
      next[static_cast<size_t>(c * num_groups + d.group_of[static_cast<size_t>(p)])] +=
          d.counts[static_cast<size_t>(c * d.prefixes + p)];
  for (int64_t g = 0; g < num_groups; ++g) {
    int64_t at = d.groups[static_cast<size_t>(g)].begin;
    for (int64_t c = 0; c < d.chunks; ++c) {
      int64_t& slot = next[static_cast<size_t>(c * num_groups + g)];
      const int64_t k = slot;
      slot = at;
      at += k;
    }
  }
  const uint32_t mask = static_cast<uint32_t>(d.prefixes - 1);
  const int shift = d.shift;
  ParallelTasks(d.chunks, threads, [&](int64_t c, int) {
    int64_t* at = next.data() + c * num_groups;
    const uint16_t* group_of = d.group_of.data();
    const int64_t e = ChunkBegin(n, kElementAlign, c + 1, d.chunks);
    for (int64_t i = ChunkBegin(n, kElementAlign, c, d.chunks); i < e; ++i) {
      const K k = load(i);
      dst[at[group_of[static_cast<uint32_t>(k >> shift) & mask]]++] = k;
    }
  });
}

/*! \brief Groups up to this many keys too large for the cache are distributed again by one thread
 * (many such groups share the threads); larger ones by all threads, one after the other. */
constexpr int64_t kOneThreadKeys = int64_t{1} << 20;

/*!
 * \brief Sorts the n keys load(0) ... load(n - 1), which agree above bit `high_bit`, into
 * out[0, n) (as convert(key)), on up to `threads` threads with workspaces ws[0, threads). dst is
 * scratch of n keys.
 */
template <typename K, typename Load, typename V, typename Convert>
void SortLong(Load load, int64_t n, int high_bit, K* dst, V* out, Convert convert, int threads,
              Workspace<K>* ws) {
  constexpr int kKeyBits = 8 * sizeof(K);
  // Prefixes enough for ~n / kCacheKeys groups of uneven data (floats: 2^12 prefixes split an
  // exponent in 8): 2^16 for 10^7 keys, 2^12 for 10^5 (fewer counters to clear and join). They are
  // taken below the bits that every key shares (int32 in [0, 10^7) shares its top 8): else a prefix
  // would hold 2^16 keys of such data.
  const int want_bits = std::clamp(BitWidth(n / kCacheKeys) + 10, 8, kPrefixBits);
  int top = std::min(high_bit, SampledTop<K>(load, n));
  Distribution d;
  if (!CountPrefixes<K>(load, n, load(0), top, std::min(top, want_bits), threads, &d)) {
    top = high_bit;  // a key outside the sample's range: count the whole width again
    CountPrefixes<K>(load, n, load(0), top, std::min(top, want_bits), threads, &d);
  }
  const int shift = d.shift;
  Distribute(load, n, d, dst, threads);
  // A group too large for the cache is one prefix: its keys vary below `shift` only, or not at
  // all where shift is 0.
  auto too_large = [&](const Group& g) { return g.count > kCacheKeys && shift > 0; };
  const int64_t num_groups = static_cast<int64_t>(d.groups.size());
  ParallelTasks(num_groups, threads, [&](int64_t g, int slot) {
    const Group& group = d.groups[static_cast<size_t>(g)];
    K* keys = dst + group.begin;
    if (too_large(group)) {
      if (group.count > kOneThreadKeys && threads > 1) return;  // below, with every thread
      std::unique_ptr<K[]> scratch(new K[static_cast<size_t>(group.count)]);
      SortLong(KeysAt<K>{keys}, group.count, shift, scratch.get(), out + group.begin, convert, 1,
               &ws[slot]);
      return;
    }
    // Its keys lie between its first and last prefixes (the bits above them are the same in all)
    const K above = top >= kKeyBits ? K{0} : static_cast<K>(keys[0] >> top << top);
    const K low = static_cast<K>(above | static_cast<K>(group.first_prefix) << shift);
    const K high = static_cast<K>(above | static_cast<K>(group.last_prefix) << shift |
                                  static_cast<K>((K{1} << shift) - 1));
    SortInCache(keys, group.count, low, high, out + group.begin, convert, &ws[slot]);
  });
  if (threads <= 1) return;
  for (const Group& group : d.groups) {
    if (!too_large(group) || group.count <= kOneThreadKeys) continue;
    std::unique_ptr<K[]> scratch(new K[static_cast<size_t>(group.count)]);
    SortLong(KeysAt<K>{dst + group.begin}, group.count, shift, scratch.get(), out + group.begin,
             convert, threads, ws);
  }
}

/*!
 * \brief Sorts the n keys load(0) ... load(n - 1) into out[0, n), as convert(key), on up to
 * `threads` threads with workspaces ws[0, threads). out is the distribution's scratch too (keys and
 * values have one size): each group's keys land where its values go, and are read into the cache
 * before those are written; out must not overlap the input.
 */
template <typename K, typename Load, typename V, typename Convert>
void Sort(Load load, int64_t n, V* out, Convert convert, int threads, Workspace<K>* ws) {
  static_assert(sizeof(K) == sizeof(V), "keys are sorted in the output's memory");
  K* keys = reinterpret_cast<K*>(out);
  if (n > kCacheKeys) {
    SortLong(load, n, static_cast<int>(8 * sizeof(K)), keys, out, convert, threads, ws);
    return;
  }
  if (n == 0) return;
  K low = load(0), high = low;
  for (int64_t i = 0; i < n; ++i) {
    keys[i] = load(i);
    low = std::min(low, keys[i]);
    high = std::max(high, keys[i]);
  }
  SortInCache(keys, n, low, high, out, convert, ws);
}

}  // namespace dlarray::cpu::sort_radix

#endif  // DLARRAY_BACKENDS_CPU_SORT_RADIX_H_
