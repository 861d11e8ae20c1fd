/*!
 * \file reduce_sum_axis_zero.cc
 * \brief reduce_sum_axis_zero: out = in.sum(axis=0), accumulated in double (compensated float
 *        sums on devices without cl_khr_fp64; wrapping 64-bit sums for integers; float16 and
 *        bfloat16 through float32, see widen.h), in a fixed order: the same result on every run.
 *
 * The input is a (rows, cols) matrix. Narrow inputs (cols < 64) are first folded: read as rows of
 * L = lcm(cols, VW) elements, so that every work-item still loads whole vectors; column c's sum is
 * then the sum of the folded columns c, c + cols, ... and of the rows left over. Rows are split
 * into blocks when the columns alone give too few work-items; each block writes its column sums
 * (ACC) to scratch and a second kernel adds the blocks in order.
 */
#include <algorithm>
#include <numeric>
#include <string>

#include "kernels.h"
#include "launch.h"
#include "widen.h"

namespace dlarray::opencl {
namespace {

const ProgramSource kProgram{"reduce_sum_axis_zero", R"CLC(
// Integers add in wrapping 64-bit unsigned sums (as the CPU backend), floats in double where the
// device has it, else in compensated float sums.
#ifdef T_INT
#undef ACC
#define ACC ulong
#define DL_PLAIN_SUM
#elif defined(DLARRAY_FP64)
#define DL_PLAIN_SUM
#endif
#ifdef DL_PLAIN_SUM
#define ADD(sum, comp, v) sum += (v)
#else
// Kahan's compensated sum: comp holds the low-order bits lost so far.
#define ADD(sum, comp, v)          \
  {                                \
    const ACCV y_ = (v) - comp;    \
    const ACCV t_ = sum + y_;      \
    comp = (t_ - sum) - y_;        \
    sum = t_;                      \
  }
#endif
#define ADD1(sum, comp, v) ADD(sum, comp, v)

// Sums of NVEC vectors of columns from c0 down rows [r0, r1) (NVEC a constant: the sums stay in
// registers).
#define VECTOR_SUMS(NVEC, STORE_V)                                                   \
  {                                                                                 \
    ACCV sum[NVEC];                                                                 \
    ACCV comp[NVEC];                                                                \
    _Pragma("unroll") for (int v = 0; v < NVEC; ++v) sum[v] = comp[v] = (ACCV)0;    \
    for (ulong r = r0; r < r1; ++r) {                                               \
      __global const T* row = x + r * cols + c0;                                    \
      _Pragma("unroll") for (int v = 0; v < NVEC; ++v) {                            \
        ADD(sum[v], comp[v], CONVERT_ACCV(LOADV(v, row)));                          \
      }                                                                             \
    }                                                                               \
    _Pragma("unroll") for (int v = 0; v < NVEC; ++v) { STORE_V }                    \
  }

// Sums rows [b * rpb, (b + 1) * rpb) of columns [c0, c0 + NV * VW) of a (rows, cols) matrix:
// NV vectors at a time where the columns allow, then single vectors, then single columns.
#define COLUMN_SUMS(STORE_V, STORE_S)                                                          \
  ulong c0 = get_global_id(0) * (NV * VW);                                                    \
  const ulong b = get_global_id(1);                                                           \
  const ulong r0 = b * rpb;                                                                   \
  if (c0 >= cols || r0 >= rows) return;                                                       \
  const ulong r1 = min(r0 + rpb, rows);                                                       \
  const ulong cend = min(c0 + NV * VW, cols);                                                 \
  x += xo;                                                                                    \
  if (c0 + NV * VW <= cols) {                                                                 \
    VECTOR_SUMS(NV, STORE_V)                                                                  \
    return;                                                                                   \
  }                                                                                           \
  for (; c0 + VW <= cend; c0 += VW) VECTOR_SUMS(1, STORE_V)                                   \
  for (ulong c = c0; c < cend; ++c) {                                                         \
    ACC sum = 0;                                                                              \
    ACC comp = 0;                                                                             \
    for (ulong r = r0; r < r1; ++r) {                                                         \
      ACC_SCALAR_ADD(sum, comp, CONVERT_ACC(x[r * cols + c]));                                \
    }                                                                                         \
    STORE_S                                                                                   \
  }

#ifdef DL_PLAIN_SUM
#define ACC_SCALAR_ADD(sum, comp, v) sum += (v)
#else
#define ACC_SCALAR_ADD(sum, comp, v) \
  {                                  \
    const ACC y_ = (v) - comp;       \
    const ACC t_ = sum + y_;         \
    comp = (t_ - sum) - y_;          \
    sum = t_;                        \
  }
#endif
#define STORE_ACC_V DL_CAT(vstore, VW)(sum[v], 0, part + b * cols + c0 + v * VW);
#define STORE_ACC_S part[b * cols + c] = sum;
#define STORE_T_V STOREV(DL_CAT(convert_, TV)(sum[v]), 0, y + yo + c0 + v * VW);
#define STORE_T_S y[yo + c] = CONVERT_T(sum);

// One block of rows: the sums go straight to the output.
__kernel void column_sums(__global const T* x, ulong xo, __global T* y, ulong yo, ulong rows,
                          ulong cols, ulong rpb) {
  COLUMN_SUMS(STORE_T_V, STORE_T_S)
}

// Several blocks: their sums go to part[block][col].
__kernel void column_partials(__global const T* x, ulong xo, __global ACC* part, ulong rows,
                              ulong cols, ulong rpb) {
  COLUMN_SUMS(STORE_ACC_V, STORE_ACC_S)
}

// out[c] = sum over blocks b and folded columns k = c, c + C, ... < L of part[b][k], plus the
// rows from tail_row on of the original (R, C) input.
__kernel void finish_sums(__global const ACC* part, ulong blocks, ulong L,
                          __global const T* x, ulong xo, ulong tail_row, ulong R, ulong C,
                          __global T* y, ulong yo) {
  const ulong c = get_global_id(0);
  if (c >= C) return;
  ACC sum = 0;
  ACC comp = 0;
  for (ulong b = 0; b < blocks; ++b) {
    for (ulong k = c; k < L; k += C) ACC_SCALAR_ADD(sum, comp, part[b * L + k]);
  }
  x += xo;
  for (ulong r = tail_row; r < R; ++r) ACC_SCALAR_ADD(sum, comp, CONVERT_ACC(x[r * C + c]));
  y[yo + c] = CONVERT_T(sum);
}
)CLC"};

}  // namespace

void ReduceSumAxisZeroKernel(const KernelContext& ctx) {
  if (IsHalfType(ctx)) {
    RunInFloat32(ctx, &ReduceSumAxisZeroKernel);
    return;
  }
  const DLArray* in = ctx.inputs[0];
  const DLArray* out = ctx.outputs[0];
  OpenclDevice& device = DeviceOf(ctx);
  const DeviceInfo& info = device.info(ctx.device_id);
  const uint64_t R = static_cast<uint64_t>(in->shape[0]);
  const uint64_t C = static_cast<uint64_t>(NumElements(in)) / R;
  const uint64_t vw = static_cast<uint64_t>(VectorWidth(info));
  // Vectors per work-item: 4 on CPUs (sums in registers; a work-item reads 256 B of each row),
  // one on GPUs (neighbouring work-items read neighbouring memory).
  const uint64_t nv = info.is_cpu ? 4 : 1;
  // The matrix the column kernels read: (rows, cols), folded when the input is narrow.
  uint64_t cols = C;
  uint64_t rows = R;
  if (C < 64) {
    cols = std::lcm(C, vw);
    rows = R * C / cols;
  }
  const uint64_t tail_row = rows * cols / C;  // first input row the column kernels leave out
  const uint64_t col_items = ItemsFor(cols, vw * nv);
  const uint64_t want = info.is_cpu ? uint64_t{16} * info.compute_units : 16384;
  uint64_t blocks = 1;
  if (col_items < want && rows > 0) {
    blocks = std::clamp<uint64_t>(want / col_items, 1, ItemsFor(rows, 256));
  }
  const uint64_t rpb = rows > 0 ? ItemsFor(rows, blocks) : 1;
  blocks = rows > 0 ? ItemsFor(rows, rpb) : 0;
  // CPUs: groups of a few hundred work-items at most (PoCL runs a group on one thread, and a
  // million groups of one cost seconds of scheduling); GPUs: 64 neighbouring columns.
  const size_t local0 = info.is_cpu ? std::clamp<size_t>(col_items / 256, 1, 256) : 64;
  const size_t local1 = info.is_cpu ? 4 : 1;
  const std::string options = BuildOptions(out->dtype, info, "-DNV=" + std::to_string(nv));
  if (blocks == 1 && cols == C) {
    Launch launch(ctx, kProgram, "column_sums", options);
    launch.array(in, "input").array(out, "output");
    launch.scalar<cl_ulong>(rows).scalar<cl_ulong>(cols).scalar<cl_ulong>(rpb);
    launch.run2(col_items, 1, local0, 1);
    return;
  }
  const bool is_int = out->dtype.code == kDLArrayInt || out->dtype.code == kDLArrayUInt;
  const size_t acc_bytes = info.fp64 || is_int ? 8 : 4;
  Scratch part(&device, ctx.device_id, std::max<uint64_t>(blocks * cols, 1) * acc_bytes);
  if (blocks > 0) {
    Launch launch(ctx, kProgram, "column_partials", options);
    launch.array(in, "input").buffer(part.get());
    launch.scalar<cl_ulong>(rows).scalar<cl_ulong>(cols).scalar<cl_ulong>(rpb);
    launch.run2(col_items, blocks, local0, local1);
  }
  Launch launch(ctx, kProgram, "finish_sums", options);
  launch.buffer(part.get()).scalar<cl_ulong>(blocks).scalar<cl_ulong>(cols);
  launch.array(in, "input").scalar<cl_ulong>(tail_row).scalar<cl_ulong>(R).scalar<cl_ulong>(C);
  launch.array(out, "output");
  launch.run(C, info.is_cpu ? 1 : 64);
}

}  // namespace dlarray::opencl
