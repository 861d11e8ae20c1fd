// The FFT primitives (fft_c2c, fft_r2c, fft_c2r over the rows of a compact (batch, n) layout;
// runtime/src/fft_ops.cc says the forms) through cuFFT, opened at the first transform
// (cufft_library.h). Plans are cached per (device, n, batch, type): making one costs far more
// than a transform. cuFFT has no scale factor and fixed signs for the real transforms, so:
//   - scale: one pass over the output after the transform (skipped for a scale of 1);
//   - fft_r2c with forward=0 (ihfft) is the conjugate of the forward R2C: the same pass conjugates;
//   - fft_c2r destroys its input in cuFFT, so it runs on a copy, and that copy is where the
//     scale and, for forward=1 (hfft: the C2R of the conjugate), the conjugation are applied.
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "cufft_library.h"
#include "fft.h"
#include "kernel_util.cuh"

namespace dlarray {
namespace cuda {
namespace {

enum class Form { kC2C, kR2C, kC2R };

#define CUFFT_CALL(expr)                                                                         \
  do {                                                                                           \
    const cufftResult dlarray_cufft_st_ = (expr);                                                \
    if (dlarray_cufft_st_ != CUFFT_SUCCESS) {                                                    \
      throw BackendError(std::string(#expr) + " failed: " + CufftStatusName(dlarray_cufft_st_) + \
                         " (" + __FILE__ + ":" + std::to_string(__LINE__) + ")");                \
    }                                                                                            \
  } while (0)

// out[i] = in[i] * scale, the odd (imaginary) positions negated when conj; out may be in.
template <typename T>
__global__ void ScaleConjKernel(const T* in, T* out, uint64_t count, T scale, bool conj) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    out[i] = in[i] * ((conj && (i & 1)) ? -scale : scale);
  }
}

template <typename T>
void ScaleConj(const LaunchEnv& env, const void* in, void* out, uint64_t count, double scale,
               bool conj) {
  if (count == 0 || (scale == 1.0 && !conj && in == out)) return;
  constexpr int kThreads = 256;
  const int blocks = GridSize(static_cast<int64_t>(count), kThreads, FullWaveBlocks(env, kThreads));
  ScaleConjKernel<T><<<blocks, kThreads, 0, env.stream>>>(
      static_cast<const T*>(in), static_cast<T*>(out), count, static_cast<T>(scale), conj);
  CHECK_LAUNCH("ScaleConjKernel");
}

// The plan cache: at most kMaxPlans plans, the least recently used destroyed first (after its
// device finishes what may still use it).
constexpr size_t kMaxPlans = 32;
using PlanKey = std::tuple<int, int64_t, int64_t, int>;  // device, n, batch, cufftType
struct Plan {
  cufftHandle handle;
  uint64_t last_use;
};
std::mutex g_plans_mutex;
std::map<PlanKey, Plan> g_plans;
uint64_t g_plan_clock = 0;

void EvictOldest(const CufftLibrary& lib, int current_device) {
  auto oldest = g_plans.begin();
  for (auto it = g_plans.begin(); it != g_plans.end(); ++it) {
    if (it->second.last_use < oldest->second.last_use) oldest = it;
  }
  const int device = std::get<0>(oldest->first);
  SetDevice(device);
  (void)cudaDeviceSynchronize();
  (void)lib.Destroy(oldest->second.handle);
  g_plans.erase(oldest);
  SetDevice(current_device);
}

// The plan (made on first use); the caller holds g_plans_mutex.
cufftHandle GetPlan(const CufftLibrary& lib, int device, int64_t n, int64_t batch, cufftType type) {
  const PlanKey key{device, n, batch, static_cast<int>(type)};
  auto it = g_plans.find(key);
  if (it != g_plans.end()) {
    it->second.last_use = ++g_plan_clock;
    return it->second.handle;
  }
  if (g_plans.size() >= kMaxPlans) EvictOldest(lib, device);
  cufftHandle handle;
  CUFFT_CALL(lib.Create(&handle));
  long long length = n;  // NOLINT(runtime/int): cuFFT's type
  size_t work_bytes = 0;
  const cufftResult st = lib.MakePlanMany64(handle, 1, &length, nullptr, 1, 0, nullptr, 1, 0, type,
                                            batch, &work_bytes);
  if (st != CUFFT_SUCCESS) {
    (void)lib.Destroy(handle);
    throw BackendError("cuFFT could not plan a transform of length " + std::to_string(n) + " x " +
                       std::to_string(batch) + ": " + CufftStatusName(st));
  }
  g_plans.emplace(key, Plan{handle, ++g_plan_clock});
  return handle;
}

template <typename T>
void Transform(const KernelContext& ctx, Form form) {
  const DLArray* in = ctx.inputs[0];
  DLArray* out = ctx.outputs[0];
  const int64_t rows = in->shape[0];
  const int64_t n = form == Form::kC2R ? out->shape[1] : in->shape[1];
  if (rows == 0) return;
  const bool forward = ctx.attrs[0] != 0.0;
  const double scale = ctx.attrs[1];
  constexpr bool kDouble = sizeof(T) == 8;
  const LaunchEnv env = Prepare(ctx);
  const CufftLibrary& lib = CufftLibrary::Require();
  const void* src = Data<const char>(in);
  void* dst = Data<char>(out);
  const uint64_t in_scalars = static_cast<uint64_t>(rows * in->shape[1]) * 2;  // C2R's input
  void* copy = nullptr;
  if (form == Form::kC2R) {  // cuFFT overwrites a C2R input: transform a scaled copy
    copy = env.device->allocate(env.id, in_scalars * sizeof(T));
    ScaleConj<T>(env, src, copy, in_scalars, scale, forward);
  }
  try {
    std::lock_guard<std::mutex> lock(g_plans_mutex);
    switch (form) {
      case Form::kC2C: {
        const cufftHandle plan = GetPlan(lib, env.id, n, rows, kDouble ? CUFFT_Z2Z : CUFFT_C2C);
        CUFFT_CALL(lib.SetStream(plan, env.stream));
        const int sign = forward ? CUFFT_FORWARD : CUFFT_INVERSE;
        if constexpr (kDouble) {
          CUFFT_CALL(lib.ExecZ2Z(plan, static_cast<cufftDoubleComplex*>(const_cast<void*>(src)),
                                 static_cast<cufftDoubleComplex*>(dst), sign));
        } else {
          CUFFT_CALL(lib.ExecC2C(plan, static_cast<cufftComplex*>(const_cast<void*>(src)),
                                 static_cast<cufftComplex*>(dst), sign));
        }
        break;
      }
      case Form::kR2C: {
        const cufftHandle plan = GetPlan(lib, env.id, n, rows, kDouble ? CUFFT_D2Z : CUFFT_R2C);
        CUFFT_CALL(lib.SetStream(plan, env.stream));
        if constexpr (kDouble) {
          CUFFT_CALL(lib.ExecD2Z(plan, static_cast<cufftDoubleReal*>(const_cast<void*>(src)),
                                 static_cast<cufftDoubleComplex*>(dst)));
        } else {
          CUFFT_CALL(lib.ExecR2C(plan, static_cast<cufftReal*>(const_cast<void*>(src)),
                                 static_cast<cufftComplex*>(dst)));
        }
        break;
      }
      case Form::kC2R: {
        const cufftHandle plan = GetPlan(lib, env.id, n, rows, kDouble ? CUFFT_Z2D : CUFFT_C2R);
        CUFFT_CALL(lib.SetStream(plan, env.stream));
        if constexpr (kDouble) {
          CUFFT_CALL(lib.ExecZ2D(plan, static_cast<cufftDoubleComplex*>(copy),
                                 static_cast<cufftDoubleReal*>(dst)));
        } else {
          CUFFT_CALL(
              lib.ExecC2R(plan, static_cast<cufftComplex*>(copy), static_cast<cufftReal*>(dst)));
        }
        break;
      }
    }
  } catch (...) {
    if (copy != nullptr) env.device->free(env.id, copy, in_scalars * sizeof(T));
    throw;
  }
  if (copy != nullptr) {
    env.device->free(env.id, copy, in_scalars * sizeof(T));  // stream-ordered: safe to reuse
  } else {
    const uint64_t out_scalars = static_cast<uint64_t>(rows * out->shape[1]) * 2;
    ScaleConj<T>(env, dst, dst, out_scalars, scale, form == Form::kR2C && !forward);
  }
}

void Run(const KernelContext& ctx, Form form) {
  const DLArrayDType t = form == Form::kC2R ? ctx.outputs[0]->dtype : ctx.inputs[0]->dtype;
  const bool is_double = t.code == kDLArrayComplex ? t.bits == 128 : t.bits == 64;
  if (is_double) {
    Transform<double>(ctx, form);
  } else {
    Transform<float>(ctx, form);
  }
}

}  // namespace

void FftC2CKernel(const KernelContext& ctx) { Run(ctx, Form::kC2C); }
void FftR2CKernel(const KernelContext& ctx) { Run(ctx, Form::kR2C); }
void FftC2RKernel(const KernelContext& ctx) { Run(ctx, Form::kC2R); }

}  // namespace cuda
}  // namespace dlarray
