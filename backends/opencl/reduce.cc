/*!
 * \file reduce.cc
 * \brief reduce: out[o, j] = kind-reduction over r of x[o, r, j], the input a contiguous
 *        [outer, n, inner] array (n >= 1), for every real dtype; the kinds and their rules are
 *        those of dlarray/reduce_kinds.h (sum and prod in 64-bit wrapping integers or in double
 *        where the device has it, NaN propagating through min and max, the first index for
 *        argmin and argmax with the first NaN winning). One program per (dtype, kind).
 *
 * Long rows (inner == 1, n >= kRowMin): a work-group per row combines its work-items' results in
 * local memory. Otherwise a work-item per output walks its column (neighbouring work-items read
 * neighbouring columns). When the outputs give too little parallel work, the reduced axis is cut
 * into pieces (dimension 1); each piece writes its partial result to scratch and a second kernel
 * combines the pieces of each output.
 */
#include <algorithm>
#include <string>

#include "dlarray/reduce_kinds.h"
#include "kernels.h"
#include "launch.h"

namespace dlarray::opencl {
namespace {

constexpr uint64_t kRowMin = 256;

const ProgramSource kProgram{"reduce", R"CLC(
// The accumulator A (and an index ai, used by argmin / argmax) of each kind.
#if KIND <= 1
#if defined(T_INT) || T_KIND == 3
#define A ulong
#define TO_A(v) ((ulong)(long)(v))
#else
#define A ACC
#define TO_A(v) ((ACC)(v))
#endif
#if KIND == 0
#define ADD(a, ai, v, i) a += TO_A(v)
#define COMBINE(a, ai, b, bi) a += (b)
#else
#define ADD(a, ai, v, i) a *= TO_A(v)
#define COMBINE(a, ai, b, bi) a *= (b)
#endif
#define FIRST(a, ai, v, i) a = TO_A(v)
#if defined(O_INT)
#define RESULT(a, ai) ((O)(UO)(a))
#else
#define RESULT(a, ai) ((OC)(a))
#endif
#elif KIND <= 3
#define A CT
#define FIRST(a, ai, v, i) a = (v)
#if KIND == 2
#define ADD(a, ai, v, i) a = ((v) < a || (v) != (v)) ? (v) : a
#else
#define ADD(a, ai, v, i) a = (a < (v) || (v) != (v)) ? (v) : a
#endif
#define COMBINE(a, ai, b, bi) ADD(a, ai, b, bi)
#define RESULT(a, ai) (a)
#elif KIND <= 5
#define A int
#define FIRST(a, ai, v, i) a = ((v) != 0)
#if KIND == 4
#define ADD(a, ai, v, i) a = a || ((v) != 0)
#define COMBINE(a, ai, b, bi) a = a || (b)
#else
#define ADD(a, ai, v, i) a = a && ((v) != 0)
#define COMBINE(a, ai, b, bi) a = a && (b)
#endif
#define RESULT(a, ai) (a)
#else
#define A CT
#if KIND == 6
#define BETTER(b, a) ((b) < (a))
#else
#define BETTER(b, a) ((a) < (b))
#endif
#define FIRST(a, ai, v, i) \
  {                        \
    a = (v);               \
    ai = (i);              \
  }
// Elements in increasing index order: a later one wins only when strictly better; a NaN wins.
#define ADD(a, ai, v, i)                               \
  if (a == a && ((v) != (v) || BETTER((v), a))) {     \
    a = (v);                                           \
    ai = (i);                                          \
  }
// Partial results in any order: NaN first, then the better value, ties to the lower index.
#define COMBINE(a, ai, b, bi)                                                        \
  {                                                                                  \
    const bool na_ = a != a, nb_ = (b) != (b);                                       \
    const bool take_ = na_ != nb_ ? nb_                                              \
                       : na_      ? (bi) < ai                                        \
                                  : (BETTER((b), a) || (!BETTER(a, (b)) && (bi) < ai)); \
    if (take_) {                                                                     \
      a = (b);                                                                       \
      ai = (bi);                                                                     \
    }                                                                                \
  }
#define RESULT(a, ai) (ai)
#endif

// Where a piece's result goes: the output (one piece) or the scratch partials [piece][output].
#define PUT(idx, a, ai)                      \
  if (pieces == 1) {                         \
    STO(y, yo + (idx), RESULT(a, ai));       \
  } else {                                   \
    part[get_group_id(1) * outputs + (idx)] = (a); \
    part_i[get_group_id(1) * outputs + (idx)] = (ai); \
  }

#ifdef WG
// A work-group per (row, piece) of rows of n elements.
__kernel void reduce_rows(__global const T* x, ulong xo, __global O* y, ulong yo, ulong n,
                          ulong rpp, ulong pieces, ulong outputs, __global A* part,
                          __global long* part_i) {
  __local A la[WG];
  __local long li[WG];
  __local int lh[WG];
  const ulong row = get_group_id(0);
  const int lid = get_local_id(0);
  const ulong r0 = get_group_id(1) * rpp;
  const ulong r1 = min(n, r0 + rpp);
  x += xo + row * n;
  A a = 0;
  long ai = 0;
  int has = 0;
#ifdef DLARRAY_CPU
  // One thread runs the group: each work-item streams a contiguous run.
  const ulong per = (r1 - r0 + WG - 1) / WG;
  const ulong i0 = min(r0 + lid * per, r1), i1 = min(i0 + per, r1);
  for (ulong i = i0; i < i1; ++i) {
#else
  for (ulong i = r0 + lid; i < r1; i += WG) {
#endif
    const CT v = LD(x, i);
    if (has) {
      ADD(a, ai, v, (long)i);
    } else {
      FIRST(a, ai, v, (long)i);
      has = 1;
    }
  }
  la[lid] = a;
  li[lid] = ai;
  lh[lid] = has;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = WG / 2; s > 0; s >>= 1) {
    if (lid < s && lh[lid + s]) {
      if (lh[lid]) {
        A b = la[lid];
        long bi = li[lid];
        COMBINE(b, bi, la[lid + s], li[lid + s]);
        la[lid] = b;
        li[lid] = bi;
      } else {
        la[lid] = la[lid + s];
        li[lid] = li[lid + s];
        lh[lid] = 1;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
    const A b = la[0];
    const long bi = li[0];
    PUT(row, b, bi)
  }
}
#endif

// A work-item per output (o, j) and piece get_global_id(1).
__kernel void reduce_columns(__global const T* x, ulong xo, __global O* y, ulong yo, ulong n,
                             ulong inner, ulong rpp, ulong pieces, ulong outputs,
                             __global A* part, __global long* part_i) {
  const ulong idx = get_global_id(0);
  if (idx >= outputs) return;
  const ulong o = idx / inner, j = idx % inner;
  const ulong r0 = get_group_id(1) * rpp;
  const ulong r1 = min(n, r0 + rpp);
  x += xo + o * n * inner + j;
  A a = 0;
  long ai = 0;
  FIRST(a, ai, LD(x, r0 * inner), (long)r0);
  for (ulong r = r0 + 1; r < r1; ++r) {
    const CT v = LD(x, r * inner);
    ADD(a, ai, v, (long)r);
  }
  PUT(idx, a, ai)
}

__kernel void combine(__global const A* part, __global const long* part_i, ulong pieces,
                      ulong outputs, __global O* y, ulong yo) {
  const ulong idx = get_global_id(0);
  if (idx >= outputs) return;
  A a = part[idx];
  long ai = part_i[idx];
  for (ulong p = 1; p < pieces; ++p) {
    const A b = part[p * outputs + idx];
    const long bi = part_i[p * outputs + idx];
    COMBINE(a, ai, b, bi);
  }
  STO(y, yo + idx, RESULT(a, ai));
}
)CLC"};

}  // namespace

void ReduceKernel(const KernelContext& ctx) {
  const DLArray* in = ctx.inputs[0];
  const DLArray* out = ctx.outputs[0];
  if (in->dtype.code == kDLArrayComplex) return ReduceComplexKernel(ctx);  // reduce_complex.cc
  OpenclDevice& device = DeviceOf(ctx);
  const DeviceInfo& info = device.info(ctx.device_id);
  const uint64_t outer = in->shape[0], n = in->shape[1], inner = in->ndim == 3 ? in->shape[2] : 1;
  const uint64_t outputs = outer * inner;
  const bool rows = inner == 1 && n >= kRowMin;
  const size_t wg = info.is_cpu ? 16 : std::min<size_t>(256, info.max_work_group);
  // Pieces: enough parallel work for the device (work-groups of rows, or work-items of columns).
  const uint64_t units = rows ? outer : outputs;
  const uint64_t want = rows ? uint64_t{4} * info.compute_units
                             : (info.is_cpu ? uint64_t{64} * info.compute_units : 16384);
  uint64_t pieces = 1;
  if (units < want) {
    const uint64_t per_piece = rows ? 16 * wg : 256;
    pieces = std::clamp<uint64_t>(std::min(want / units, ItemsFor(n, per_piece)), 1, 65535);
  }
  const uint64_t rpp = ItemsFor(n, pieces);
  pieces = ItemsFor(n, rpp);
  const std::string options =
      BuildOptions(in->dtype, info,
                   "-DKIND=" + std::to_string(static_cast<int>(ctx.attrs[0])) +
                       (rows ? " -DWG=" + std::to_string(wg) : std::string())) +
      TypeOptions("O", out->dtype, info);
  // Partials: at most 8 bytes per accumulator (complex inputs are refused above).
  Scratch part(&device, ctx.device_id,
               std::max<uint64_t>(pieces > 1 ? pieces * outputs : 1, 1) * 8);
  Scratch part_i(&device, ctx.device_id,
                 std::max<uint64_t>(pieces > 1 ? pieces * outputs : 1, 1) * 8);
  {
    Launch launch(ctx, kProgram, rows ? "reduce_rows" : "reduce_columns", options);
    launch.array(in, "input").array(out, "output").scalar<cl_ulong>(n);
    if (!rows) launch.scalar<cl_ulong>(inner);
    launch.scalar<cl_ulong>(rpp).scalar<cl_ulong>(pieces).scalar<cl_ulong>(outputs);
    launch.buffer(part.get()).buffer(part_i.get());
    if (rows) {
      launch.run2(outer * wg, pieces, wg, 1);
    } else {
      const size_t local = info.is_cpu ? std::clamp<size_t>(outputs / 256, 1, 64) : 64;
      launch.run2(outputs, pieces, local, 1);
    }
  }
  if (pieces == 1) return;
  Launch launch(ctx, kProgram, "combine", options);
  launch.buffer(part.get()).buffer(part_i.get()).scalar<cl_ulong>(pieces).scalar<cl_ulong>(outputs);
  launch.array(out, "output");
  launch.run(outputs, info.is_cpu ? 1 : 64);
}

}  // namespace dlarray::opencl
