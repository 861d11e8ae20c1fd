/*!
 * \file matrix_multiply.cc
 * \brief matrix_multiply: c = op(a) @ op(b) (row-major, op = transpose or not), as a packed,
 *        register-tiled GEMM.
 *
 * Both operands are first packed into panels whatever their transpose flags: A into
 * [ceil(M / TM)][K][TM] and B into [ceil(N / TN)][K][TN], zero-padded at the edges. The GEMM
 * kernel then has one shape: a work-item computes a TM x TN tile of C with TM x 2 vector
 * accumulators, reading both panels front to back (a broadcast of A, two vector loads of B and
 * 2 TM fused multiply-adds per step of k). Work-items of a group share B's panel, which stays in
 * cache while they run one after another on a CPU core. On PoCL this is several times faster than
 * CLBlast without tuning (see NOTES.md).
 */
#include <string>

#include "kernels.h"
#include "launch.h"
#include "widen.h"

namespace dlarray::opencl {
namespace {

const ProgramSource kProgram{"matrix_multiply", R"CLC(
#ifdef FP_FAST_FMAF
#define MAD(a, b, c) fma(a, b, c)
#else
#define MAD(a, b, c) mad(a, b, c)
#endif
#define TN (2 * VW)

// dst[p][k][i] = src[(p * P + i) * ld + k] for i < P (0 past `extent`): the panel's index runs
// along the source's rows. One work-item: panel p, k in [k0, k0 + KB).
__kernel void pack_rows(__global const T* src, ulong so, __global T* dst, ulong extent, ulong K,
                        ulong ld, int P) {
  const ulong p = get_global_id(1);
  const ulong k0 = get_global_id(0) * 16;
  if (k0 >= K) return;
  const ulong k1 = min(k0 + 16, K);
  src += so;
  __global T* out = dst + p * K * P;
  for (int i = 0; i < P; ++i) {
    const ulong row = p * P + i;
    if (row < extent) {
      __global const T* s = src + row * ld;
      for (ulong k = k0; k < k1; ++k) out[k * P + i] = s[k];
    } else {
      for (ulong k = k0; k < k1; ++k) out[k * P + i] = 0;
    }
  }
}

// dst[p][k][i] = src[k * ld + p * P + i] for i < P (0 past `extent`): the panel's index runs
// along the source's columns. One work-item: panel p, k in [k0, k0 + 16).
__kernel void pack_cols(__global const T* src, ulong so, __global T* dst, ulong extent, ulong K,
                        ulong ld, int P) {
  const ulong p = get_global_id(1);
  const ulong k0 = get_global_id(0) * 16;
  if (k0 >= K) return;
  const ulong k1 = min(k0 + 16, K);
  src += so;
  __global T* out = dst + p * K * P;
  const ulong c0 = p * P;
  const int full = c0 + P <= extent ? P : (int)(extent - c0);
  for (ulong k = k0; k < k1; ++k) {
    __global const T* s = src + k * ld + c0;
    for (int i = 0; i < full; ++i) out[k * P + i] = s[i];
    for (int i = full; i < P; ++i) out[k * P + i] = 0;
  }
}

#define ACC_DECL(i) TV c##i##0 = (TV)0, c##i##1 = (TV)0;
#define ACC_STEP(i)                      \
  {                                      \
    const TV av = (TV)(ap[i]);           \
    c##i##0 = MAD(av, b0, c##i##0);      \
    c##i##1 = MAD(av, b1, c##i##1);      \
  }
#define ACC_STORE(i)                                                 \
  if (m0 + i < M) {                                                  \
    __global T* cr = c + (m0 + i) * N + n0;                          \
    if (full) {                                                      \
      STOREV(c##i##0, 0, cr);                                        \
      STOREV(c##i##1, 1, cr);                                        \
    } else {                                                         \
      T t[TN];                                                       \
      STOREV(c##i##0, 0, t);                                         \
      STOREV(c##i##1, 1, t);                                         \
      for (int j = 0; j < TN && n0 + j < N; ++j) cr[j] = t[j];       \
    }                                                                \
  }
#if TM == 4
#define FOR_ROWS(X) X(0) X(1) X(2) X(3)
#elif TM == 6
#define FOR_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
#elif TM == 8
#define FOR_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#endif

// C tile (tm, tn): rows [tm * TM, +TM), columns [tn * TN, +TN).
__kernel void gemm(__global const T* pa, __global const T* pb, __global T* c, ulong co, ulong M,
                   ulong N, ulong K) {
  const ulong tm = get_global_id(0);
  const ulong tn = get_global_id(1);
  const ulong m0 = tm * TM;
  const ulong n0 = tn * TN;
  if (m0 >= M || n0 >= N) return;
  __global const T* ap = pa + tm * K * TM;
  __global const T* bp = pb + tn * K * TN;
  c += co;
  FOR_ROWS(ACC_DECL)
  for (ulong k = 0; k < K; ++k) {
    const TV b0 = LOADV(0, bp);
    const TV b1 = LOADV(1, bp);
    FOR_ROWS(ACC_STEP)
    ap += TM;
    bp += TN;
  }
  const bool full = n0 + TN <= N;
  FOR_ROWS(ACC_STORE)
}
)CLC"};

}  // namespace

void MatrixMultiplyKernel(const KernelContext& ctx) {
  if (IsHalfType(ctx)) {
    RunInFloat32(ctx, &MatrixMultiplyKernel);
    return;
  }
  const DLArray* a = ctx.inputs[0];
  const DLArray* b = ctx.inputs[1];
  const DLArray* c = ctx.outputs[0];
  const bool ta = ctx.attrs[0] != 0.0;
  const bool tb = ctx.attrs[1] != 0.0;
  const uint64_t M = static_cast<uint64_t>(c->shape[0]);
  const uint64_t N = static_cast<uint64_t>(c->shape[1]);
  const uint64_t K = static_cast<uint64_t>(ta ? a->shape[0] : a->shape[1]);
  OpenclDevice& device = DeviceOf(ctx);
  const DeviceInfo& info = device.info(ctx.device_id);
  const uint64_t tm = info.is_cpu ? 6 : 4;
  const uint64_t tn = 2 * static_cast<uint64_t>(VectorWidth(info));
  const uint64_t panels_m = ItemsFor(M, tm);
  const uint64_t panels_n = ItemsFor(N, tn);
  const size_t elem = ElementBytes(c->dtype);
  const std::string options = BuildOptions(c->dtype, info, "-DTM=" + std::to_string(tm));
  Scratch pa(&device, ctx.device_id, panels_m * tm * K * elem);
  Scratch pb(&device, ctx.device_id, panels_n * tn * K * elem);
  const size_t pack_local = info.is_cpu ? 1 : 64;
  {
    // A is (M, K) -> rows index the panel; A^T is stored (K, M) -> columns do.
    Launch pack(ctx, kProgram, ta ? "pack_cols" : "pack_rows", options);
    pack.array(a, "a").buffer(pa.get()).scalar<cl_ulong>(M).scalar<cl_ulong>(K);
    pack.scalar<cl_ulong>(ta ? M : K).scalar<cl_int>(static_cast<cl_int>(tm));
    pack.run2(ItemsFor(K, 16), panels_m, pack_local, 1);
  }
  {
    // B is (K, N) -> columns index the panel; B^T is stored (N, K) -> rows do.
    Launch pack(ctx, kProgram, tb ? "pack_rows" : "pack_cols", options);
    pack.array(b, "b").buffer(pb.get()).scalar<cl_ulong>(N).scalar<cl_ulong>(K);
    pack.scalar<cl_ulong>(tb ? K : N).scalar<cl_int>(static_cast<cl_int>(tn));
    pack.run2(ItemsFor(K, 16), panels_n, pack_local, 1);
  }
  Launch gemm(ctx, kProgram, "gemm", options);
  gemm.buffer(pa.get()).buffer(pb.get()).array(c, "c");
  gemm.scalar<cl_ulong>(M).scalar<cl_ulong>(N).scalar<cl_ulong>(K);
  const size_t local0 = info.is_cpu ? 16 : 16;
  const size_t local1 = info.is_cpu ? 1 : 4;
  gemm.run2(panels_m, panels_n, local0, local1);
}

}  // namespace dlarray::opencl
