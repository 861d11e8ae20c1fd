/*!
 * \file sort.cc
 * \brief argsort: a stable order of each row, by a bitonic sort of (key, position) pairs. The
 *        key is a 64-bit unsigned integer of the element's order (floats sign-magnitude flipped,
 *        -0.0 as 0.0, NaN the largest, so NaN sorts last; descending inverts the key, putting
 *        NaN first as sorting the reversed row and reversing back does). Comparing the position
 *        after the key makes the unstable bitonic network stable. Rows are padded to a power of
 *        two with pairs that sort after every real one.
 */
#include <string>

#include "kernels.h"
#include "launch.h"

namespace dlarray::opencl {
namespace {

const ProgramSource kProgram{"sort", R"CLC(
ulong dl_key(__global const T* x, ulong i) {
#if defined(T_FLOAT)
  CT v = LD(x, i);
  if (isnan(v)) return ~0UL;
  if (v == 0) v = 0;  // -0.0 == 0.0
#if defined(KEY64)
  const ulong b = as_ulong(v);
  return (b >> 63) != 0 ? ~b : b | 0x8000000000000000UL;
#else
  const uint b = as_uint(v);
  return (ulong)((b >> 31) != 0 ? ~b : b | 0x80000000U);
#endif
#else
  const T v = x[i];
  if ((T)(-1) < (T)0) return (ulong)(long)v ^ 0x8000000000000000UL;
  return (ulong)v;
#endif
}

__kernel void sort_init(__global const T* x, ulong xo, ulong n, ulong p, uint descending,
                        __global ulong* key, __global long* pos) {
  const ulong i = get_global_id(0);
  const ulong r = get_global_id(1);
  if (i >= p) return;
  const ulong at = r * p + i;
  if (i < n) {
    const ulong k = dl_key(x + xo + r * n, i);
    key[at] = descending ? ~k : k;
  } else {
    key[at] = ~0UL;  // padding: after every real pair (its position is larger too)
  }
  pos[at] = (long)i;
}

// One compare-exchange step (block size k, distance j) of the bitonic network over each row.
__kernel void sort_step(__global ulong* key, __global long* pos, ulong p, ulong k, ulong j) {
  const ulong i = get_global_id(0);
  const ulong r = get_global_id(1);
  const ulong l = i ^ j;
  if (i >= p || l <= i) return;
  const ulong a = r * p + i;
  const ulong b = r * p + l;
  const ulong ka = key[a];
  const ulong kb = key[b];
  const long pa = pos[a];
  const long pb = pos[b];
  const bool a_after = ka > kb || (ka == kb && pa > pb);
  const bool up = (i & k) == 0;
  if (a_after == up) {
    key[a] = kb;
    key[b] = ka;
    pos[a] = pb;
    pos[b] = pa;
  }
}

__kernel void sort_finish(__global const long* pos, ulong n, ulong p, __global long* out,
                          ulong oo) {
  const ulong i = get_global_id(0);
  const ulong r = get_global_id(1);
  if (i < n) out[oo + r * n + i] = pos[r * p + i];
}
)CLC"};

}  // namespace

void ArgsortKernel(const KernelContext& ctx) {
  const DLArray* x = ctx.inputs[0];
  const uint64_t rows = static_cast<uint64_t>(x->shape[0]);
  const uint64_t n = static_cast<uint64_t>(x->shape[1]);
  if (rows * n == 0) return;
  RequireReal(ctx, x->dtype);
  uint64_t p = 1;
  while (p < n) p <<= 1;
  OpenclDevice& device = DeviceOf(ctx);
  const DeviceInfo& info = device.info(ctx.device_id);
  const Scratch keys(&device, ctx.device_id, rows * p * sizeof(cl_ulong));
  const Scratch pos(&device, ctx.device_id, rows * p * sizeof(cl_long));
  const std::string options = BuildOptions(x->dtype, info, x->dtype.bits == 64 ? "-DKEY64" : "");
  const size_t local = p < 64 ? p : 64;
  {
    Launch launch(ctx, kProgram, "sort_init", options);
    launch.array(x, "x").scalar<cl_ulong>(n).scalar<cl_ulong>(p);
    launch.scalar<cl_uint>(ctx.attrs[0] != 0.0 ? 1 : 0).buffer(keys.get()).buffer(pos.get());
    launch.run2(p, rows, local, 1);
  }
  for (uint64_t k = 2; k <= p; k <<= 1) {
    for (uint64_t j = k >> 1; j > 0; j >>= 1) {
      Launch launch(ctx, kProgram, "sort_step", options);
      launch.buffer(keys.get()).buffer(pos.get()).scalar<cl_ulong>(p);
      launch.scalar<cl_ulong>(k).scalar<cl_ulong>(j);
      launch.run2(p, rows, local, 1);
    }
  }
  Launch launch(ctx, kProgram, "sort_finish", options);
  launch.buffer(pos.get()).scalar<cl_ulong>(n).scalar<cl_ulong>(p);
  launch.array(ctx.outputs[0], "output");
  launch.run2(p, rows, local, 1);
}

}  // namespace dlarray::opencl
