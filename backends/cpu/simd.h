/*!
 * \file simd.h
 * \brief A native-width float vector (GCC vector extensions) and the loads, stores and horizontal
 *        reductions the kernels share. The width follows the instruction set the file is built for.
 */
#ifndef DLARRAY_BACKENDS_CPU_SIMD_H_
#define DLARRAY_BACKENDS_CPU_SIMD_H_

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace dlarray::cpu {

#if defined(__AVX512F__)
constexpr int kVecWidth = 16;
#elif defined(__AVX__)
constexpr int kVecWidth = 8;
#else
constexpr int kVecWidth = 4;
#endif

/*! \brief kVecWidth floats; arithmetic and comparisons work lane-wise, scalars broadcast. */
typedef float VecF __attribute__((vector_size(kVecWidth * sizeof(float))));
/*! \brief kVecWidth int32 lanes (comparison results, exponent bits). */
typedef int32_t VecI __attribute__((vector_size(kVecWidth * sizeof(int32_t))));
/*! \brief kVecWidth uint32 lanes (bit patterns shifted without signed overflow). */
typedef uint32_t VecU __attribute__((vector_size(kVecWidth * sizeof(uint32_t))));

/*! \brief Reinterprets the bits of a value as another type of the same size. */
template <typename To, typename From>
inline To BitCast(const From& from) {
  static_assert(sizeof(To) == sizeof(From), "BitCast needs equal sizes");
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}

/*! \brief value in every lane of T (T = float or VecF). */
template <typename T>
inline T Splat(float value) {
  return value - T{};  // x - 0 is exact (also for -0), so this compiles to a plain broadcast
}

/*! \brief The int type with T's lane layout (int32_t for float, VecI for VecF). */
template <typename T>
struct IntOf {
  using type = VecI;
};
template <>
struct IntOf<float> {
  using type = int32_t;
};

/*! \brief The unsigned type with T's lane layout (uint32_t for float, VecU for VecF). */
template <typename T>
struct UIntOf {
  using type = VecU;
};
template <>
struct UIntOf<float> {
  using type = uint32_t;
};

inline VecF LoadU(const float* p) {
  VecF v;
  std::memcpy(&v, p, sizeof(VecF));
  return v;
}

inline void StoreU(float* p, VecF v) { std::memcpy(p, &v, sizeof(VecF)); }

/*! \brief Non-temporal store: p must be aligned to sizeof(VecF); needs a StreamFence() after. */
inline void StoreStream(float* p, VecF v) {
#if defined(__AVX512F__)
  _mm512_stream_ps(p, reinterpret_cast<__m512&>(v));
#elif defined(__AVX__)
  _mm256_stream_ps(p, reinterpret_cast<__m256&>(v));
#elif defined(__SSE2__)
  _mm_stream_ps(p, reinterpret_cast<__m128&>(v));
#else
  StoreU(p, v);
#endif
}

/*! \brief Orders earlier non-temporal stores before later stores (and other threads' reads). */
inline void StreamFence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

// Lane reductions as a tree over halves (per row, not per element).
inline float HorizontalSum(VecF v) {
  float t[kVecWidth];
  std::memcpy(t, &v, sizeof(VecF));
  for (int w = kVecWidth / 2; w >= 1; w /= 2) {
    for (int i = 0; i < w; ++i) t[i] += t[i + w];
  }
  return t[0];
}

inline float HorizontalMax(VecF v) {
  float t[kVecWidth];
  std::memcpy(t, &v, sizeof(VecF));
  for (int w = kVecWidth / 2; w >= 1; w /= 2) {
    for (int i = 0; i < w; ++i) t[i] = t[i + w] > t[i] ? t[i + w] : t[i];
  }
  return t[0];
}

/*!
 * \brief Long sums add float lanes within blocks of this many elements and the block totals in
 *        double: the error stays near pairwise summation's instead of growing with n / lanes.
 */
constexpr int64_t kSumBlock = 1024;

/*! \brief Largest of x[0..n), n >= 1 (NaN lanes are skipped unless all are NaN). */
inline float MaxOf(const float* x, int64_t n) {
  auto max = [](VecF a, VecF b) { return b > a ? b : a; };
  int64_t i = 0;
  float m = x[0];
  if (n >= 4 * kVecWidth) {
    // Four running maxima: one would make every step wait for the previous compare.
    VecF m0 = LoadU(x), m1 = LoadU(x + kVecWidth), m2 = LoadU(x + 2 * kVecWidth),
         m3 = LoadU(x + 3 * kVecWidth);
    for (i = 4 * kVecWidth; i + 4 * kVecWidth <= n; i += 4 * kVecWidth) {
      m0 = max(m0, LoadU(x + i));
      m1 = max(m1, LoadU(x + i + kVecWidth));
      m2 = max(m2, LoadU(x + i + 2 * kVecWidth));
      m3 = max(m3, LoadU(x + i + 3 * kVecWidth));
    }
    m = HorizontalMax(max(max(m0, m1), max(m2, m3)));
  }
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

/*! \brief True when p is aligned for StoreStream. */
/*! \brief Whether any lane of m is not zero (a compare's mask: whether it held anywhere). */
inline bool AnyLane(VecI m) {
#if defined(__AVX512F__)
  return _mm512_test_epi32_mask(BitCast<__m512i>(m), BitCast<__m512i>(m)) != 0;
#elif defined(__AVX__)
  return !_mm256_testz_si256(BitCast<__m256i>(m), BitCast<__m256i>(m));
#else
  return _mm_movemask_epi8(BitCast<__m128i>(m)) != 0;
#endif
}

inline bool IsVecAligned(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) % sizeof(VecF)) == 0;
}

}  // namespace dlarray::cpu

#endif  // DLARRAY_BACKENDS_CPU_SIMD_H_
