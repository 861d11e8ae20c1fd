/*!
 * \file pow_f32.cc
 * \brief float32 pow on whole vectors: x ** y = 2^(y log2 x) in double lanes, with small tables
 *        in the place of a division and of long series.
 *
 * Why our own: glibc's vector powf ran no faster than its scalar one (8 ms per 2^20 floats on an
 * AVX-512 EPYC), and libmvec's double log2 and exp2 behind a float pow took 8x NumPy's time.
 *
 * Why tables: the machine this was tuned on (Zen 5 EPYC, AVX-512) runs about one 512-bit double
 * operation per cycle, so the cost is the count of operations per 8 lanes. An earlier form
 * (log2 m = 2 / ln 2 atanh((m - 1) / (m + 1)) by a series to s^13, exp2 by a series to f^9, each
 * lane's special case tested one by one) took 1.9 ns per element against NumPy's 0.7; this one
 * takes 0.7: a 16-entry table of 1 / c for log2 (no division, a series to r^7), a 16-entry table
 * of 2^(j/16) for exp2 (a series to f^4), AVX-512's scalef for the power of two (which also
 * saturates to infinity and zero, so t needs no clamp there), and one bit mask of the lanes that
 * need the C library (usually none).
 *
 * log2 x: with b the bits of x and t = b - kOffset, k = t >> 23 is the exponent that takes x into
 * z = x / 2^k in [0.70, 1.40) and i (4 bits of t below the exponent) the bin of z; r = z / c_i - 1
 * (|r| < 0.031; one fused multiply-add with invc_i = 1 / c_i, both in double) and log2 x = k +
 * log2 c_i + log2(1 + r), the last by its Taylor series to r^7 (relative error below 3e-12).
 * The bin that holds 1 has c = 1: log2 x is then the series alone, accurate relative to itself.
 *
 * exp2 t: t = n / 16 + f with n the nearest integer to 16 t and |f| <= 1/32; 2^t = 2^(n >> 4)
 * 2^((n & 15) / 16) e^(f ln 2), the middle factor from the table, the last by its Taylor series
 * to f^4 (relative error below 5e-11). t itself is y log2 x with an error below 4e-10 for
 * |t| <= 150 (every finite float result), so the double result is within about 3e-10 of x ** y,
 * and rounding it to float gives the correctly rounded value but within that of a tie: within
 * 1 ulp, as NumPy's powf.
 */
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "dtype.h"
#include "parallel.h"
#include "simd.h"
#include "vector_math.h"

namespace dlarray::cpu {
namespace {

// Half a vector of float lanes, and the same lanes as double and int64 (a whole vector each).
constexpr int kLanes = kVecWidth / 2;
typedef float PF __attribute__((vector_size(kLanes * sizeof(float))));
typedef int32_t PI __attribute__((vector_size(kLanes * sizeof(int32_t))));
typedef double PD __attribute__((vector_size(kLanes * sizeof(double))));
typedef int64_t PL __attribute__((vector_size(kLanes * sizeof(int64_t))));
// The unsigned twins, for bit arithmetic that may wrap (wrapping signed lanes is undefined).
typedef uint32_t PU __attribute__((vector_size(kLanes * sizeof(uint32_t))));
typedef uint64_t PUL __attribute__((vector_size(kLanes * sizeof(uint64_t))));

constexpr int kBins = 16;
constexpr int32_t kOffset = 0x3f330000;  // the bits of 0.69922: z's range starts here
constexpr int kBinShift = 19;            // 23 mantissa bits - 4 bits of bin

struct PowTables {
  double invc[kBins];   // 1 / c_i, c_i the middle of bin i (1 for the bin that holds 1)
  double log2c[kBins];  // log2 c_i, as -log2(invc_i): exact for the invc that is used
  double exp2[kBins];   // 2^(j / 16)
};

PowTables MakeTables() {
  PowTables t;
  for (int i = 0; i < kBins; ++i) {
    const float lo = BitCast<float>(kOffset + (i << kBinShift));
    const float hi = BitCast<float>(kOffset + ((i + 1) << kBinShift));
    const double c = (lo <= 1.0f && 1.0f < hi) ? 1.0 : 0.5 * (double{lo} + double{hi});
    t.invc[i] = 1.0 / c;
    t.log2c[i] = -std::log2(t.invc[i]);
    t.exp2[i] = std::exp2(i / static_cast<double>(kBins));
  }
  return t;
}

const PowTables& Tables() {
  static const PowTables tables = MakeTables();
  return tables;
}

// The lane conversions, table lookups and the lanes of a mask as bits, per instruction set: the
// masked (maskz) forms of the AVX-512 conversions, as GCC 12's plain ones warn of an
// uninitialised operand.
#if defined(__AVX512F__)
struct Table {  // 16 doubles in two registers: one vpermt2pd per lookup
  __m512d lo, hi;
};
inline Table LoadTable(const double* p) { return {_mm512_loadu_pd(p), _mm512_loadu_pd(p + 8)}; }
// vpermt2pd reads the low 4 bits of each index: no mask needed.
inline PD Lookup(const Table& t, PL i) {
  return BitCast<PD>(_mm512_permutex2var_pd(t.lo, BitCast<__m512i>(i), t.hi));
}
inline PD Widen(PF x) { return BitCast<PD>(_mm512_maskz_cvtps_pd(0xff, BitCast<__m256>(x))); }
inline PD Widen(PI x) { return BitCast<PD>(_mm512_maskz_cvtepi32_pd(0xff, BitCast<__m256i>(x))); }
inline PL WidenIndex(PI x) {
  return BitCast<PL>(_mm512_maskz_cvtepi32_epi64(0xff, BitCast<__m256i>(x)));
}
inline PF Narrow(PD x) { return BitCast<PF>(_mm512_maskz_cvtpd_ps(0xff, BitCast<__m512d>(x))); }
inline uint32_t LaneBits(PI m) { return _mm256_movemask_ps(BitCast<__m256>(m)); }
#else
struct Table {
  const double* p;
};
inline Table LoadTable(const double* p) { return {p}; }
inline PD Lookup(const Table& t, PL i) {
  i &= kBins - 1;
#if defined(__AVX2__)
  return BitCast<PD>(_mm256_i64gather_pd(t.p, BitCast<__m256i>(i), sizeof(double)));
#else
  PD r;
  for (int k = 0; k < kLanes; ++k) r[k] = t.p[i[k]];
  return r;
#endif
}
inline PD Widen(PF x) { return __builtin_convertvector(x, PD); }
inline PD Widen(PI x) { return __builtin_convertvector(x, PD); }
inline PL WidenIndex(PI x) { return __builtin_convertvector(x, PL); }
inline PF Narrow(PD x) { return __builtin_convertvector(x, PF); }
inline uint32_t LaneBits(PI m) {
  uint32_t bits = 0;
  for (int k = 0; k < kLanes; ++k) bits |= static_cast<uint32_t>(m[k] != 0) << k;
  return bits;
}
#endif

struct PowRegs {
  Table invc, log2c, exp2;
};

constexpr double kShift = 6755399441055744.0;  // 1.5 * 2^52: u + kShift rounds u to an integer

// v 2^(n >> 4), n = the integer of big's low bits (= nd): scalef where there is one (it takes
// floor(nd / 16) and saturates to infinity or zero); else the exponent field built from n, for
// |n| <= 16 * 200 (the caller clamps t).
inline PD ScaleByPow2(PD v, PD big, PD nd) {
#if defined(__AVX512F__)
  (void)big;
  const __m512d e = BitCast<__m512d>(nd * (1.0 / kBins));
  return BitCast<PD>(_mm512_maskz_scalef_pd(0xff, BitCast<__m512d>(v), e));
#else
  (void)nd;
  const PL n = BitCast<PL>(big);  // kShift's low 48 bits are 0: these are n's (mod 2^48)
  return v * BitCast<PD>(BitCast<PUL>((n >> 4) + 1023) << 52);
#endif
}

// x ** y for x a normal positive float and y finite (other lanes give some finite value or NaN,
// which the caller replaces).
inline PF PowPlain(const PowRegs& tables, PF x, PF y) {
  const PU bits = BitCast<PU>(x);
  // In unsigned lanes: a negative or special x (replaced by the caller) wraps here.
  const PI t = BitCast<PI>(bits - static_cast<uint32_t>(kOffset));
  const PL bin = WidenIndex(t >> kBinShift);  // bits above the 4 are ignored by Lookup
  const PF z = BitCast<PF>(bits - BitCast<PU>(t & static_cast<int32_t>(0xff800000)));
  const PD r = Widen(z) * Lookup(tables.invc, bin) - 1.0;
  constexpr double kL = 1.4426950408889634;  // 1 / ln 2: log2(1 + r) = kL (r - r^2/2 + ...)
  PD p = kL / 7 + PD{};
  p = p * r - kL / 6;
  p = p * r + kL / 5;
  p = p * r - kL / 4;
  p = p * r + kL / 3;
  p = p * r - kL / 2;
  p = p * r + kL;
  const PD log2x = (Widen(t >> 23) + Lookup(tables.log2c, bin)) + r * p;
  PD ty = Widen(y) * log2x;
#if !defined(__AVX512F__)
  ty = ty < -200.0 ? -200.0 + PD{} : ty;  // past a float's range either way
  ty = ty > 200.0 ? 200.0 + PD{} : ty;
#endif
  const PD big = ty * kBins + kShift;
  const PD nd = big - kShift;
  const PD f = ty - nd * (1.0 / kBins);
  // e^(f ln 2) to (f ln 2)^4 / 4!: the coefficients ln2^k / k!.
  constexpr double c1 = 0.6931471805599453, c2 = c1 * c1 / 2, c3 = c2 * c1 / 3, c4 = c3 * c1 / 4;
  PD q = c4 + PD{};
  q = q * f + c3;
  q = q * f + c2;
  q = q * f + c1;
  q = q * f + 1.0;
  return Narrow(ScaleByPow2(q * Lookup(tables.exp2, BitCast<PL>(big)), big, nd));
}

inline PF LoadP(const float* p) {
  PF v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// out[0, kLanes) = x ** y: the vector form, then the C library's double pow for the lanes it does
// not serve (x <= 0 or subnormal, x or y not finite: signs, zeros, infinities and NaN by C's
// rules, as NumPy's). Double, not powf: glibc's powf is within 0.82 ulp, not correctly rounded
// (a subnormal x ** -1 came out 1 ulp off), and the double result rounded once is. The lanes
// are a bit mask walked set bit by set bit: a test per lane cost 2x.
inline void PowLanes(const PowRegs& tables, const float* x, const float* y, float* out) {
  constexpr float kMax = std::numeric_limits<float>::max();
  constexpr float kMin = std::numeric_limits<float>::min();
  const PF a = LoadP(x), b = LoadP(y);
  const PI plain = (a >= kMin) & (a <= kMax) & (b >= -kMax) & (b <= kMax);  // false for NaN
  const PF r = PowPlain(tables, a, b);
  float res[kLanes];  // out is written last: it may be x or y (x **= y)
  std::memcpy(res, &r, sizeof r);
  for (uint32_t m = LaneBits(~plain); m != 0; m &= m - 1) {
    const int k = __builtin_ctz(m);
    res[k] = static_cast<float>(std::pow(double{x[k]}, double{y[k]}));
  }
  std::memcpy(out, res, sizeof res);
}

void PowRange(const float* x, const float* y, float* out, int64_t b, int64_t e) {
  const PowTables& t = Tables();
  const PowRegs tables{LoadTable(t.invc), LoadTable(t.log2c), LoadTable(t.exp2)};
  int64_t i = b;
  for (; i + kLanes <= e; i += kLanes) PowLanes(tables, x + i, y + i, out + i);
  if (i < e) {  // the tail through one vector padded with ones
    float a[kLanes], c[kLanes], r[kLanes];
    for (int k = 0; k < kLanes; ++k) {
      a[k] = i + k < e ? x[i + k] : 1.0f;
      c[k] = i + k < e ? y[i + k] : 1.0f;
    }
    PowLanes(tables, a, c, r);
    std::memcpy(out + i, r, (e - i) * sizeof(float));
  }
}

}  // namespace

void RunPowF32(const KernelContext& ctx) {
  DLArray* out = ctx.outputs[0];
  const int64_t n = NumElements(out);
  const float* x = Data<const float>(ctx.inputs[0]);
  const float* y = Data<const float>(ctx.inputs[1]);
  float* o = Data<float>(out);
  Tables();  // made once, before the threads read it
  ParallelFor(n, n * 16, kElementAlign, [&](int64_t b, int64_t e) { PowRange(x, y, o, b, e); });
}

}  // namespace dlarray::cpu
