// The FFT primitives through cuFFT, opened at the first transform (cufft_library.h): fft_c2c,
// fft_r2c, fft_c2r along axis 1 of a compact (outer, n, inner) layout, and their _nd forms over
// axes 1..k (k = 2, 3) of (outer, n_1, ..., n_k, inner) (runtime/src/fft_ops.cc says the forms).
// Both are one cuFFT plan of rank k (1 for the 1-D forms): it covers the inner signals of one
// outer index (stride inner, distance 1), or every outer index at once when inner is 1 (stride 1,
// distance the signal's size); an outer index is one execution. So rfftn/fftn over the trailing
// axes of an array, the common case, is one cuFFT call, as torch.fft's. Plans are cached per
// (device, type, rank, lengths, batch, stride), at most kMaxPlans: making one costs far more than
// a transform. cuFFT has no scale factor and fixed signs for the real transforms, so:
//   - scale: one pass over the output after the transform (skipped for a scale of 1);
//   - fft_r2c with forward=0 (ihfft) is the conjugate of the forward R2C: the same pass conjugates;
//   - fft_c2r destroys its input in cuFFT, so it runs on a copy, and that copy is where the
//     scale and, for forward=1 (hfft: the C2R of the conjugate), the conjugation are applied.
#include <cuda_runtime.h>

#include <array>
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
constexpr int kMaxRank = 3;
using Lengths = std::array<int64_t, kMaxRank>;  // n_1..n_rank, 0 past the rank
// device, type, rank, lengths, batch, stride
using PlanKey = std::tuple<int, int, int, Lengths, int64_t, int64_t>;
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

std::string LengthsText(const Lengths& n, int rank) {
  std::string text;
  for (int d = 0; d < rank; ++d) text += (d ? " x " : "") + std::to_string(n[d]);
  return text;
}

// The plan (made on first use) for `batch` signals of lengths n[0..rank), `stride` apart element
// to element and 1 apart signal to signal when stride > 1 (the inner signals of one outer index),
// packed one after another when stride is 1. The caller holds g_plans_mutex.
cufftHandle GetPlan(const CufftLibrary& lib, int device, int rank, const Lengths& n, int64_t batch,
                    int64_t stride, cufftType type) {
  const PlanKey key{device, static_cast<int>(type), rank, n, batch, stride};
  auto it = g_plans.find(key);
  if (it != g_plans.end()) {
    it->second.last_use = ++g_plan_clock;
    return it->second.handle;
  }
  if (g_plans.size() >= kMaxPlans) EvictOldest(lib, device);
  cufftHandle handle;
  CUFFT_CALL(lib.Create(&handle));
  // The lengths of the signals as stored: n for real and complex-to-complex sides, the last one
  // n / 2 + 1 for the half spectrum of a real transform.
  const bool real_in = type == CUFFT_R2C || type == CUFFT_D2Z;
  const bool real_out = type == CUFFT_C2R || type == CUFFT_Z2D;
  long long length[kMaxRank], in_embed[kMaxRank], out_embed[kMaxRank];  // NOLINT(runtime/int)
  long long in_size = 1, out_size = 1;                                  // NOLINT(runtime/int)
  for (int d = 0; d < rank; ++d) {
    const bool last = d == rank - 1;
    length[d] = n[d];
    in_embed[d] = last && real_out ? n[d] / 2 + 1 : n[d];
    out_embed[d] = last && real_in ? n[d] / 2 + 1 : n[d];
    in_size *= in_embed[d];
    out_size *= out_embed[d];
  }
  const long long in_dist = stride > 1 ? 1 : in_size;    // NOLINT(runtime/int)
  const long long out_dist = stride > 1 ? 1 : out_size;  // NOLINT(runtime/int)
  size_t work_bytes = 0;
  const cufftResult st = lib.MakePlanMany64(handle, rank, length, in_embed, stride, in_dist,
                                            out_embed, stride, out_dist, type, batch, &work_bytes);
  if (st != CUFFT_SUCCESS) {
    (void)lib.Destroy(handle);
    throw BackendError("cuFFT could not plan " + std::to_string(batch) + " transforms of size " +
                       LengthsText(n, rank) + " (stride " + std::to_string(stride) +
                       "): " + CufftStatusName(st));
  }
  g_plans.emplace(key, Plan{handle, ++g_plan_clock});
  return handle;
}

// One execution of the plan on signals starting at in / out.
template <typename T>
void Execute(const CufftLibrary& lib, cufftHandle plan, Form form, bool forward, void* in,
             void* out) {
  constexpr bool kDouble = sizeof(T) == 8;
  switch (form) {
    case Form::kC2C: {
      const int sign = forward ? CUFFT_FORWARD : CUFFT_INVERSE;
      if constexpr (kDouble) {
        CUFFT_CALL(lib.ExecZ2Z(plan, static_cast<cufftDoubleComplex*>(in),
                               static_cast<cufftDoubleComplex*>(out), sign));
      } else {
        CUFFT_CALL(lib.ExecC2C(plan, static_cast<cufftComplex*>(in),
                               static_cast<cufftComplex*>(out), sign));
      }
      break;
    }
    case Form::kR2C:
      if constexpr (kDouble) {
        CUFFT_CALL(lib.ExecD2Z(plan, static_cast<cufftDoubleReal*>(in),
                               static_cast<cufftDoubleComplex*>(out)));
      } else {
        CUFFT_CALL(lib.ExecR2C(plan, static_cast<cufftReal*>(in), static_cast<cufftComplex*>(out)));
      }
      break;
    case Form::kC2R:
      if constexpr (kDouble) {
        CUFFT_CALL(lib.ExecZ2D(plan, static_cast<cufftDoubleComplex*>(in),
                               static_cast<cufftDoubleReal*>(out)));
      } else {
        CUFFT_CALL(lib.ExecC2R(plan, static_cast<cufftComplex*>(in), static_cast<cufftReal*>(out)));
      }
      break;
  }
}

int64_t RoundUp16(int64_t bytes) { return (bytes + 15) / 16 * 16; }
size_t StageBytes(int64_t in_block, int64_t out_block) {
  return static_cast<size_t>(RoundUp16(in_block) + out_block);
}

// The product of dims [begin, end) of a.
int64_t Product(const DLArray* a, int begin, int end) {
  int64_t p = 1;
  for (int d = begin; d < end; ++d) p *= a->shape[d];
  return p;
}

template <typename T>
void Transform(const KernelContext& ctx, Form form) {
  const DLArray* in = ctx.inputs[0];
  DLArray* out = ctx.outputs[0];
  const int axes = in->ndim - 2;  // 1 for the 1-D forms, 2 or 3 for the _nd forms
  const DLArray* full = form == Form::kC2R ? out : in;  // the operand of the full lengths
  // The plan's lengths: the axes', but for those of length 1 before the last (an identity, and
  // no change to the layout), which cuFFT's multi-dimensional plans need not be trusted with.
  Lengths n{};
  int rank = 0;
  for (int d = 0; d < axes; ++d) {
    if (full->shape[d + 1] != 1 || d == axes - 1) n[rank++] = full->shape[d + 1];
  }
  const int64_t outer = in->shape[0], inner = in->shape[axes + 1];
  if (outer == 0 || inner == 0) return;
  const bool forward = ctx.attrs[0] != 0.0;
  const double scale = ctx.attrs[1];
  constexpr bool kDouble = sizeof(T) == 8;
  const cufftType type = form == Form::kC2C   ? (kDouble ? CUFFT_Z2Z : CUFFT_C2C)
                         : form == Form::kR2C ? (kDouble ? CUFFT_D2Z : CUFFT_R2C)
                                              : (kDouble ? CUFFT_Z2D : CUFFT_C2R);
  const LaunchEnv env = Prepare(ctx);
  const CufftLibrary& lib = CufftLibrary::Require();
  // Bytes per element of each side, and of one outer index's block.
  const int64_t in_item = (form == Form::kR2C ? 1 : 2) * static_cast<int64_t>(sizeof(T));
  const int64_t out_item = (form == Form::kC2R ? 1 : 2) * static_cast<int64_t>(sizeof(T));
  const int64_t in_block = Product(in, 1, in->ndim) * in_item;
  const int64_t out_block = Product(out, 1, out->ndim) * out_item;
  char* src = const_cast<char*>(Data<const char>(in));  // cuFFT's signature; only C2R writes it
  char* dst = Data<char>(out);
  const uint64_t in_scalars = static_cast<uint64_t>(outer * in_block / sizeof(T));
  void* copy = nullptr;
  void* stage = nullptr;     // staging for misaligned blocks (below)
  if (form == Form::kC2R) {  // cuFFT overwrites a C2R input: transform a scaled copy
    copy = env.device->allocate(env.id, in_scalars * sizeof(T));
    ScaleConj<T>(env, src, copy, in_scalars, scale, forward);
    src = static_cast<char*>(copy);
  }
  try {
    std::lock_guard<std::mutex> lock(g_plans_mutex);
    // inner 1: every row in one execution; else one execution per outer index.
    const cufftHandle plan = inner == 1 ? GetPlan(lib, env.id, rank, n, outer, 1, type)
                                        : GetPlan(lib, env.id, rank, n, inner, inner, type);
    CUFFT_CALL(lib.SetStream(plan, env.stream));
    const int64_t executions = inner == 1 ? 1 : outer;
    // cuFFT refuses signals that do not start on a whole complex element (CUFFT_INVALID_VALUE):
    // with an odd block of reals every other outer index would, so those blocks go through two
    // aligned staging buffers.
    const bool aligned = executions == 1 || (in_block % 16 == 0 && out_block % 16 == 0);
    for (int64_t o = 0; o < executions; ++o) {
      if (aligned) {
        Execute<T>(lib, plan, form, forward, src + o * in_block, dst + o * out_block);
        continue;
      }
      if (stage == nullptr) stage = env.device->allocate(env.id, StageBytes(in_block, out_block));
      char* stage_in = static_cast<char*>(stage);
      char* stage_out = stage_in + RoundUp16(in_block);
      CUDA_CALL(cudaMemcpyAsync(stage_in, src + o * in_block, in_block, cudaMemcpyDeviceToDevice,
                                env.stream));
      Execute<T>(lib, plan, form, forward, stage_in, stage_out);
      CUDA_CALL(cudaMemcpyAsync(dst + o * out_block, stage_out, out_block, cudaMemcpyDeviceToDevice,
                                env.stream));
    }
  } catch (...) {
    if (copy != nullptr) env.device->free(env.id, copy, in_scalars * sizeof(T));
    if (stage != nullptr) env.device->free(env.id, stage, StageBytes(in_block, out_block));
    throw;
  }
  if (stage != nullptr) env.device->free(env.id, stage, StageBytes(in_block, out_block));
  if (copy != nullptr) {
    env.device->free(env.id, copy, in_scalars * sizeof(T));  // stream-ordered: safe to reuse
  } else {
    const uint64_t out_scalars = static_cast<uint64_t>(outer * out_block / sizeof(T));
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
