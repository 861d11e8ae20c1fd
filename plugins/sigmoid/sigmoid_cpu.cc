// The CPU kernels: chunks on the CPU plugin's thread pool (dlarray::ParallelFor; threads of our
// own, e.g. OpenMP's, would compete with the pool every core op runs on: 89-112x slower than
// NumPy right after a matmul on 2 cores), and a loop the compiler vectorizes, with exp computed as
// 2^t from a polynomial (libm's expf does not vectorize).
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "dlarray/parallel.h"
#include "sigmoid_kernels.h"

namespace sigmoid {
namespace {

// Chunks start on 64-byte boundaries of floats.
constexpr int64_t kAlign = 16;

// 2^t for t in [-126, 128] (128 gives inf): 2^floor(t) from the exponent bits times 2^frac by a
// degree-5 polynomial (relative error below 1e-7). Written without calls or branches (floor by
// integer conversion), so that the loop vectorizes on any x86-64 (SSE2) and wider where the
// compiler may.
__attribute__((always_inline)) inline float Exp2(float t) {
  int32_t whole = static_cast<int32_t>(t);  // rounds toward zero
  whole -= static_cast<float>(whole) > t ? 1 : 0;
  const float f = t - static_cast<float>(whole);
  float p = 1.8762336e-3f;
  p = p * f + 8.9925891e-3f;
  p = p * f + 5.5823594e-2f;
  p = p * f + 2.4015453e-1f;
  p = p * f + 6.9315296e-1f;
  p = p * f + 9.9999994e-1f;
  const int32_t bits = (whole + 127) * (1 << 23);
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

// 1 / (1 + e^-x). The clamp keeps 2^t normal or infinite (so, as in NumPy's float32, x below
// about -88.7 gives 0) and maps NaN to -126 (std::min keeps NaN, std::max drops it), so the integer
// conversion is always defined; NaN input gives NaN. Selects of values only, which GCC turns into
// blends (with -fno-trapping-math, see CMakeLists.txt) so that the loop vectorizes.
__attribute__((always_inline)) inline float Sigmoid(float x) {
  const float t = std::max(-126.0f, std::min(-x * 1.44269504f, 128.0f));
  const float s = 1.0f / (1.0f + Exp2(t));
  return __builtin_isnan(x) ? x : s;
}

// The loops, compiled for AVX-512, AVX2 and baseline x86-64; the loader picks one for this CPU.
#if defined(__x86_64__) && defined(__GNUC__)
#define DLARRAY_SIGMOID_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define DLARRAY_SIGMOID_CLONES
#endif

DLARRAY_SIGMOID_CLONES
void SigmoidRange(const float* __restrict x, float* __restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = Sigmoid(x[i]);
}

DLARRAY_SIGMOID_CLONES
void GradientRange(const float* __restrict y, const float* __restrict dy, float* __restrict dx,
                   int64_t n) {
  for (int64_t i = 0; i < n; ++i) dx[i] = dy[i] * y[i] * (1.0f - y[i]);
}

}  // namespace

void SigmoidCpu(const dlarray::KernelContext& ctx) {
  const float* x = dlarray::Data<const float>(ctx.inputs[0]);
  float* y = dlarray::Data<float>(ctx.outputs[0]);
  const int64_t n = dlarray::NumElements(ctx.outputs[0]);
  dlarray::ParallelFor(ctx, n, n, kAlign,
                       [&](int64_t b, int64_t e) { SigmoidRange(x + b, y + b, e - b); });
}

void SigmoidGradientCpu(const dlarray::KernelContext& ctx) {
  const float* y = dlarray::Data<const float>(ctx.inputs[0]);
  const float* dy = dlarray::Data<const float>(ctx.inputs[1]);
  float* dx = dlarray::Data<float>(ctx.outputs[0]);
  const int64_t n = dlarray::NumElements(ctx.outputs[0]);
  dlarray::ParallelFor(ctx, n, n, kAlign,
                       [&](int64_t b, int64_t e) { GradientRange(y + b, dy + b, dx + b, e - b); });
}

}  // namespace sigmoid
