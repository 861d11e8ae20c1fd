/*!
 * \file compare_by_const.cc
 * \brief compare_by_const: out (bool) = in <cmp> value, the value compared exactly, not rounded
 *        to the array's dtype first. With cl_khr_fp64 every element is compared in double, as
 *        the CPU backend does. Without it, the host rewrites `x <cmp> value` into an exact
 *        comparison in the element's compute type (float, or long/ulong for integers): a value
 *        between two representable ones turns `x < v` into `x <= below(v)` and so on, and a
 *        comparison whose result does not depend on x becomes a constant.
 */
#include <cfloat>
#include <cmath>
#include <cstring>
#include <string>

#include "compare_util.h"
#include "elementwise.h"
#include "kernels.h"
#include "scalar_arg.h"

namespace dlarray::opencl {
namespace {

const std::string kSource = std::string(kCompareMacros) + R"CLC(
// KT: the type of the comparison (double, or CT / long / ulong without cl_khr_fp64).
__kernel void compare_by_const(__global const T* xp, ulong xo, __global uchar* yp, ulong yo,
                               KT s, int fixed, uint nt, ulong n, ulong chunk) {
  xp += xo;
  yp += yo;
  ulong i = get_global_id(0) * chunk;
  if (i >= n) return;
  const ulong end = min(i + chunk, n);
  if (fixed >= 0) {
    for (; i < end; ++i) yp[i] = (uchar)fixed;
    return;
  }
  for (; i < end; ++i) yp[i] = DL_CMP((KT)LD(xp, i), s) ? 1 : 0;
}
)CLC";
const ProgramSource kProgram{"compare_by_const", kSource.c_str()};

// `x <cmp> value` as `x <cmp'> bound` or a constant (-1: none).
struct Rewritten {
  int cmp;
  double bound;
  int constant;
};

// lo < value < hi: the float neighbours of a value float does not hold.
Rewritten Between(int cmp, float lo, float hi) {
  switch (cmp) {
    case 0:
      return {cmp, 0, 0};
    case 1:
      return {cmp, 0, 1};
    case 2:
    case 3:  // x < v and x <= v: x <= lo
      return {3, lo, -1};
    default:  // x > v and x >= v: x >= hi
      return {5, hi, -1};
  }
}

Rewritten RewriteFloat(int cmp, double v) {
  if (std::isnan(v)) return {cmp, 0, cmp == 1 ? 1 : 0};
  const float f = static_cast<float>(v);
  if (static_cast<double>(f) == v) return {cmp, v, -1};
  const bool above = static_cast<double>(f) > v;
  const float lo = above ? std::nextafter(f, -INFINITY) : f;
  const float hi = above ? f : std::nextafter(f, INFINITY);
  return Between(cmp, lo, hi);
}

// Integers mn <= x < top (powers of two, exact in double).
Rewritten RewriteInt(int cmp, double v, double mn, double top) {
  if (std::isnan(v)) return {cmp, 0, cmp == 1 ? 1 : 0};
  const double fl = std::floor(v), ce = std::ceil(v);
  if (fl == v && v >= mn && v < top) return {cmp, v, -1};
  switch (cmp) {
    case 0:
      return {cmp, 0, 0};
    case 1:
      return {cmp, 0, 1};
    case 2:
    case 3:  // x < v and x <= v: x <= floor(v)
      if (fl < mn) return {cmp, 0, 0};
      if (fl >= top) return {cmp, 0, 1};
      return {3, fl, -1};
    default:  // x > v and x >= v: x >= ceil(v)
      if (ce >= top) return {cmp, 0, 0};
      if (ce < mn) return {cmp, 0, 1};
      return {5, ce, -1};
  }
}

}  // namespace

void CompareByConstKernel(const KernelContext& ctx) {
  const DLArray* in = ctx.inputs[0];
  const DLArrayDType t = in->dtype;
  RequireReal(ctx, t);
  const DeviceInfo& info = DeviceOf(ctx).info(ctx.device_id);
  const double value = ctx.attrs[0];
  const int cmp = static_cast<int>(ctx.attrs[1]);
  CompareOption(ctx.attrs[1]);  // checks the kind
  Rewritten r{cmp, value, -1};
  std::string kt = "double";
  const bool is_int = t.code == kDLArrayInt || t.code == kDLArrayUInt;
  if (!info.fp64) {
    if (is_int && t.code == kDLArrayUInt && t.bits == 64) {
      kt = "ulong";
      r = RewriteInt(cmp, value, 0.0, std::ldexp(1.0, 64));
    } else if (is_int) {
      kt = "long";
      const bool u = t.code == kDLArrayUInt;
      const double top = std::ldexp(1.0, u ? t.bits : t.bits - 1);
      r = RewriteInt(cmp, value, u ? 0.0 : -top, top);
    } else if (TypeKind(t) == 3) {
      kt = "long";
      r = RewriteInt(cmp, value, 0.0, 2.0);
    } else {
      kt = "float";
      r = RewriteFloat(cmp, value);
    }
  }
  const std::string options = BuildOptions(t, info, CompareOption(r.cmp) + " -DKT=" + kt);
  RunMap(ctx, kProgram, "compare_by_const", {in}, ctx.outputs[0], options, [&](Launch& launch) {
    if (kt == "double") {
      launch.scalar<cl_double>(r.bound);
    } else if (kt == "float") {
      launch.scalar<cl_float>(static_cast<cl_float>(r.bound));
    } else if (kt == "ulong") {
      launch.scalar<cl_ulong>(r.constant < 0 ? static_cast<cl_ulong>(r.bound) : 0);
    } else {
      launch.scalar<cl_long>(r.constant < 0 ? static_cast<cl_long>(r.bound) : 0);
    }
    launch.scalar<cl_int>(r.constant);
  });
}

}  // namespace dlarray::opencl
