/*!
 * \file vector_math.cc
 * \brief libmvec behind the table's math rows (vector_math.h).
 *
 * Why libmvec: a call to the C library's sinf per element is 10-40x slower than NumPy, whose
 * umath loops run vectorised (SVML or its own SIMD code) on float32 and float64; libmvec is the
 * vectorised libm that ships with glibc (1-4 ulp, special values through the scalar functions),
 * so no math code of our own or a new dependency is needed. It is opened with dlopen, not linked:
 * glibc before 2.35 has only sin, cos, exp, log and pow in it, and a plugin linked against the
 * newer symbols would not load on the older systems the wheel supports; a function missing there
 * simply stays scalar.
 *
 * The vector ABI names a function by ISA and lane count: _ZGV<isa>N<lanes><v per argument>_<name>,
 * isa 'b' (SSE4), 'd' (AVX2), 'e' (AVX-512). Each plugin variant (baseline, avx2, avx512) asks for
 * the widest its own -march allows, so the calls take and return the registers it has.
 */
#include "vector_math.h"

#include <dlfcn.h>
#include <immintrin.h>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>

#include "dlarray/elementwise_math.h"
#include "dtype.h"
#include "parallel.h"
#include "simd.h"

namespace dlarray::cpu {
namespace {

#if defined(__AVX512F__)
using VF = __m512;
using VD = __m512d;
constexpr char kIsa = 'e';
constexpr int kLanesF = 16, kLanesD = 8;
inline VF LoadF(const float* p) { return _mm512_loadu_ps(p); }
inline void StoreF(float* p, VF v) { _mm512_storeu_ps(p, v); }
inline VD LoadD(const double* p) { return _mm512_loadu_pd(p); }
inline void StoreD(double* p, VD v) { _mm512_storeu_pd(p, v); }
inline VD MulD(VD a, VD b) { return _mm512_mul_pd(a, b); }
#elif defined(__AVX2__)
using VF = __m256;
using VD = __m256d;
constexpr char kIsa = 'd';
constexpr int kLanesF = 8, kLanesD = 4;
inline VF LoadF(const float* p) { return _mm256_loadu_ps(p); }
inline void StoreF(float* p, VF v) { _mm256_storeu_ps(p, v); }
inline VD LoadD(const double* p) { return _mm256_loadu_pd(p); }
inline void StoreD(double* p, VD v) { _mm256_storeu_pd(p, v); }
inline VD MulD(VD a, VD b) { return _mm256_mul_pd(a, b); }
#else
using VF = __m128;
using VD = __m128d;
constexpr char kIsa = 'b';
constexpr int kLanesF = 4, kLanesD = 2;
inline VF LoadF(const float* p) { return _mm_loadu_ps(p); }
inline void StoreF(float* p, VF v) { _mm_storeu_ps(p, v); }
inline VD LoadD(const double* p) { return _mm_loadu_pd(p); }
inline void StoreD(double* p, VD v) { _mm_storeu_pd(p, v); }
inline VD MulD(VD a, VD b) { return _mm_mul_pd(a, b); }
#endif

// The table's rows that libmvec has, by the C name of their double function.
struct Row {
  const char* op;     // the table's name
  const char* cname;  // libm's name (float: with an f)
  int arity;
};
constexpr Row kRows[] = {
    {"sin", "sin", 1},     {"cos", "cos", 1},     {"tan", "tan", 1},     {"asin", "asin", 1},
    {"acos", "acos", 1},   {"atan", "atan", 1},   {"sinh", "sinh", 1},   {"cosh", "cosh", 1},
    {"asinh", "asinh", 1}, {"acosh", "acosh", 1}, {"atanh", "atanh", 1}, {"expm1", "expm1", 1},
    {"log1p", "log1p", 1}, {"log2", "log2", 1},   {"log10", "log10", 1}, {"atan2", "atan2", 2},
    {"hypot", "hypot", 2}, {"tanh", "tanh", 1},
};
// Not pow: glibc 2.36's vector powf and pow ran no faster than the scalar ones (8 ms per 2^20
// floats on an AVX-512 EPYC, as powf's 6.5 ms). float32 pow runs as pow_f32.cc's RunPowF32 (our
// own vector form) instead; float64 pow stays on the scalar loop.
constexpr int kNumRows = sizeof(kRows) / sizeof(kRows[0]);

struct Functions {
  void* f[kNumRows] = {};  // float
  void* d[kNumRows] = {};  // double
  int found = 0;
  std::string status;
};

void* Find(void* lib, int lanes, int arity, const std::string& name) {
  const std::string symbol = std::string("_ZGV") + kIsa + "N" + std::to_string(lanes) +
                             (arity == 1 ? "v" : "vv") + "_" + name;
  return dlsym(lib, symbol.c_str());
}

const Functions& Load() {
  static Functions fns;
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = std::getenv("DLARRAY_VECTOR_MATH");
    if (env && std::strcmp(env, "0") == 0) {
      fns.status = "off (DLARRAY_VECTOR_MATH=0)";
      return;
    }
    // Kept open for the life of the process (the pointers are used until exit).
    void* lib = dlopen("libmvec.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      fns.status = std::string("not found (") + dlerror() + ")";
      return;
    }
    for (int i = 0; i < kNumRows; ++i) {
      fns.f[i] = Find(lib, kLanesF, kRows[i].arity, std::string(kRows[i].cname) + "f");
      fns.d[i] = Find(lib, kLanesD, kRows[i].arity, kRows[i].cname);
      fns.found += (fns.f[i] != nullptr) + (fns.d[i] != nullptr);
    }
    fns.status = "libmvec.so.1, " + std::to_string(fns.found) + " functions, " +
                 std::to_string(kLanesF) + " float lanes";
  });
  return fns;
}

// y = fn(x...) over [b, e): whole vectors, then the tail through one padded vector (its spare
// lanes hold 1, inside every function's domain).
template <typename T, typename V, int kLanes, int kArity, V (*LoadV)(const T*),
          void (*StoreV)(T*, V)>
void Run(void* fn, const T* x0, const T* x1, T* y, int64_t b, int64_t e) {
  using F1 = V (*)(V);
  using F2 = V (*)(V, V);
  auto call = [fn](const T* a, const T* c) {
    if constexpr (kArity == 1) {
      return reinterpret_cast<F1>(fn)(LoadV(a));
    } else {
      return reinterpret_cast<F2>(fn)(LoadV(a), LoadV(c));
    }
  };
  int64_t i = b;
  for (; i + kLanes <= e; i += kLanes) StoreV(y + i, call(x0 + i, kArity == 2 ? x1 + i : x0));
  if (i < e) {
    T a[kLanes], c[kLanes], r[kLanes];
    for (int k = 0; k < kLanes; ++k) {
      a[k] = i + k < e ? x0[i + k] : T(1);
      c[k] = kArity == 2 && i + k < e ? x1[i + k] : T(1);
    }
    StoreV(r, call(a, c));
    std::memcpy(y + i, r, (e - i) * sizeof(T));
  }
}

template <typename T, typename V, int kLanes, V (*LoadV)(const T*), void (*StoreV)(T*, V)>
void RunAll(void* fn, int arity, const KernelContext& ctx) {
  DLArray* out = ctx.outputs[0];
  const int64_t n = NumElements(out);
  const T* x0 = Data<const T>(ctx.inputs[0]);
  const T* x1 = arity == 2 ? Data<const T>(ctx.inputs[1]) : nullptr;
  T* y = Data<T>(out);
  // A transcendental function costs tens of cycles per element: worth threads well before a
  // copy of the same size is.
  ParallelFor(n, n * 16, kElementAlign, [&](int64_t b, int64_t e) {
    if (arity == 1) {
      Run<T, V, kLanes, 1, LoadV, StoreV>(fn, x0, x1, y, b, e);
    } else {
      Run<T, V, kLanes, 2, LoadV, StoreV>(fn, x0, x1, y, b, e);
    }
  });
}

#if defined(__AVX512F__) || defined(__FMA__)
// float64 remainder on whole vectors (AVX2 and AVX-512: exactness needs a fused multiply-add).
typedef double DV __attribute__((vector_size(kLanesD * sizeof(double))));
typedef int64_t LV __attribute__((vector_size(kLanesD * sizeof(int64_t))));

// c - a * b, rounded once.
inline DV NegMulAdd(DV a, DV b, DV c) {
#if defined(__AVX512F__)
  const __m512d r = _mm512_fnmadd_pd(BitCast<__m512d>(a), BitCast<__m512d>(b), BitCast<__m512d>(c));
#else
  const __m256d r = _mm256_fnmadd_pd(BitCast<__m256d>(a), BitCast<__m256d>(b), BitCast<__m256d>(c));
#endif
  return BitCast<DV>(r);
}

/*!
 * \brief Remainder(a, b) of each lane, bit for bit the scalar one, as table_math.h's float32 form:
 *        q = trunc(|a| / |b|) is the true quotient n or n + 1 while below 2^52, |a| - q |b| is
 *        then a double (fmod, or fmod - |b|) and one fused multiply-add gives it exactly; |b| is
 *        added back (exactly) where it went below 0. Other lanes (quotient 2^52 or more, b = 0,
 *        infinities, NaN) through the scalar Remainder.
 */
inline DV RemainderF64(DV a, DV b) {
  constexpr int64_t kSign = std::numeric_limits<int64_t>::min();
  constexpr double kTwo52 = 4503599627370496.0;
  const LV sign_a = BitCast<LV>(a) & kSign, sign_b = BitCast<LV>(b) & kSign;
  const DV abs_a = BitCast<DV>(BitCast<LV>(a) ^ sign_a),
           abs_b = BitCast<DV>(BitCast<LV>(b) ^ sign_b);
  const DV ratio = abs_a / abs_b;
  const LV served = (ratio < kTwo52) & (abs_b < std::numeric_limits<double>::infinity());
  // trunc(ratio) below 2^52: + 2^52 - 2^52 rounds to the nearest integer, one less if above.
  const DV bounded = served ? ratio : DV{};
  DV q = (bounded + kTwo52) - kTwo52;
  q = q > bounded ? q - 1.0 : q;
  DV r = NegMulAdd(q, abs_b, abs_a);
  r = r < 0.0 ? r + abs_b : r;
  const DV fmod = BitCast<DV>(BitCast<LV>(r) | sign_a);
  const LV moved = (r != 0.0) & ((sign_a ^ sign_b) != 0);
  DV out = moved ? fmod + b : fmod;
  out = r == 0.0 ? BitCast<DV>(sign_b) : out;
  for (int k = 0; k < kLanesD; ++k) {
    if (!served[k]) out[k] = Remainder(a[k], b[k]);
  }
  return out;
}

void RunRemainderF64(const KernelContext& ctx) {
  DLArray* out = ctx.outputs[0];
  const int64_t n = NumElements(out);
  const double* x = Data<const double>(ctx.inputs[0]);
  const double* y = Data<const double>(ctx.inputs[1]);
  double* z = Data<double>(out);
  ParallelFor(n, n * 4, kElementAlign, [&](int64_t b, int64_t e) {
    int64_t i = b;
    for (; i + kLanesD <= e; i += kLanesD) {
      DV u, v;
      std::memcpy(&u, x + i, sizeof u);
      std::memcpy(&v, y + i, sizeof v);
      const DV w = RemainderF64(u, v);
      std::memcpy(z + i, &w, sizeof w);  // after both loads: z may be x or y (in place)
    }
    for (; i < e; ++i) z[i] = Remainder(x[i], y[i]);
  });
}
#endif

}  // namespace

bool RunVectorMath(const KernelContext& ctx) {
  const DLArrayDType t = ctx.outputs[0]->dtype;
  if (t.code != kDLArrayFloat || (t.bits != 32 && t.bits != 64) || t.lanes != 1) return false;
  if (t.bits == 32 && std::strcmp(ctx.op_name, "pow") == 0) {
    RunPowF32(ctx);  // our own vector form: no libmvec needed
    return true;
  }
#if defined(__AVX512F__) || defined(__FMA__)
  if (t.bits == 64 && std::strcmp(ctx.op_name, "remainder") == 0) {
    RunRemainderF64(ctx);  // our own vector form (float32 has table_math.h's)
    return true;
  }
#endif
  int row = 0;
  while (row < kNumRows && std::strcmp(kRows[row].op, ctx.op_name) != 0) ++row;
  if (row == kNumRows) return false;
  const Functions& fns = Load();
  void* fn = t.bits == 32 ? fns.f[row] : fns.d[row];
  if (!fn) return false;
  if (t.bits == 32) {
    RunAll<float, VF, kLanesF, LoadF, StoreF>(fn, kRows[row].arity, ctx);
  } else {
    RunAll<double, VD, kLanesD, LoadD, StoreD>(fn, kRows[row].arity, ctx);
  }
  return true;
}

const char* VectorMathStatus() { return Load().status.c_str(); }

}  // namespace dlarray::cpu
