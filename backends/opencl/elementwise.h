/*!
 * \file elementwise.h
 * \brief The shared elementwise kernel shapes (OpenCL C macros) and their host launcher.
 *
 * Each work-item handles a contiguous chunk of elements, VW at a time with vector loads, then a
 * scalar tail. On CPUs the chunks are long (a few work-items per core: PoCL runs a work-group on
 * one thread, and long contiguous runs stream best); on GPUs a chunk is one vector per work-item,
 * so neighbouring work-items touch neighbouring memory.
 */
#ifndef DLARRAY_BACKENDS_OPENCL_ELEMENTWISE_H_
#define DLARRAY_BACKENDS_OPENCL_ELEMENTWISE_H_

#include <functional>
#include <string>
#include <vector>

#include "dlarray/kernel.h"
#include "launch.h"
#include "program_cache.h"

namespace dlarray::opencl {

/*!
 * \brief OpenCL C: DL_MAP0(name, OPV, OPS) (no input, a scalar s), DL_MAP1 (x), DL_MAP1S (x and
 *        a scalar s of the compute type CT), DL_MAP2 (a, b). OPV is the expression on TV vectors
 *        (used only where DL_NATIVE: T is its own compute type), OPS on CT scalars (loaded with LD,
 *        stored with ST),
 *        written over the names x (or a, b) and s. Every kernel takes (inputs as buffer + element
 *        offset..., output buffer + offset, [T s], uint nt, ulong n, ulong chunk); nt asks for
 *        non-temporal stores (large outputs on CPUs).
 */
inline constexpr const char* kElementwiseMacros = R"CLC(
#if DL_NATIVE
#define DL_MAP_VECTORS(LOADS, OPV)                                             \
  if (DL_NT_OK(yp)) {                                                          \
    for (; i + VW <= end; i += VW) { LOADS(V) DL_STORE_NT(OPV, yp + i); }      \
  } else {                                                                     \
    for (; i + VW <= end; i += VW) { LOADS(V) STOREV(OPV, 0, yp + i); }        \
  }
#else
#define DL_MAP_VECTORS(LOADS, OPV)
#endif
#define DL_MAP_BODY(LOADS, OPV, OPS)                                           \
  ulong i = get_global_id(0) * chunk;                                          \
  if (i >= n) return;                                                          \
  const ulong end = min(i + chunk, n);                                         \
  DL_MAP_VECTORS(LOADS, OPV)                                                   \
  for (; i < end; ++i) { LOADS(S) ST(yp, i, OPS); }

// DL_JOIN, not DL_CAT: TV expands to DL_CAT(...), which would not expand inside DL_CAT.
#define DL_JOIN_(a, b) a##b
#define DL_JOIN(a, b) DL_JOIN_(a, b)
#define DL_LOAD0(K)
#define DL_LOAD1(K) const DL_JOIN(DL_TYPE_, K) x = DL_JOIN(DL_LOAD_, K)(xp);
#define DL_LOAD2(K) const DL_JOIN(DL_TYPE_, K) a = DL_JOIN(DL_LOAD_, K)(ap); \
                    const DL_JOIN(DL_TYPE_, K) b = DL_JOIN(DL_LOAD_, K)(bp);
#define DL_TYPE_V TV
#define DL_TYPE_S CT
#define DL_LOAD_V(p) LOADV(0, (p) + i)
#define DL_LOAD_S(p) LD(p, i)

#define DL_MAP0(name, OPV, OPS)                                                              \
  __kernel void name(__global T* yp, ulong yo, CT s, uint nt, ulong n, ulong chunk) {        \
    yp += yo;                                                                                \
    DL_MAP_BODY(DL_LOAD0, OPV, OPS)                                                          \
  }
#define DL_MAP1(name, OPV, OPS)                                                              \
  __kernel void name(__global const T* xp, ulong xo, __global T* yp, ulong yo, uint nt,      \
                     ulong n, ulong chunk) {                                                 \
    xp += xo;                                                                                \
    yp += yo;                                                                                \
    DL_MAP_BODY(DL_LOAD1, OPV, OPS)                                                          \
  }
#define DL_MAP1S(name, OPV, OPS)                                                             \
  __kernel void name(__global const T* xp, ulong xo, __global T* yp, ulong yo, CT s, uint nt,\
                     ulong n, ulong chunk) {                                                 \
    xp += xo;                                                                                \
    yp += yo;                                                                                \
    DL_MAP_BODY(DL_LOAD1, OPV, OPS)                                                          \
  }
#define DL_MAP2(name, OPV, OPS)                                                              \
  __kernel void name(__global const T* ap, ulong ao, __global const T* bp, ulong bo,         \
                     __global T* yp, ulong yo, uint nt, ulong n, ulong chunk) {              \
    ap += ao;                                                                                \
    bp += bo;                                                                                \
    yp += yo;                                                                                \
    DL_MAP_BODY(DL_LOAD2, OPV, OPS)                                                          \
  }
)CLC";

/*! \brief Build option for divisions: correctly rounded float division (as IEEE and the CPU
 *         backend; OpenCL otherwise allows 2.5 ulp), where the device offers it. */
inline std::string CorrectDivision(const DeviceInfo& info) {
  return info.fp32_correct_divide ? "-cl-fp32-correctly-rounded-divide-sqrt" : "";
}

/*! \brief What an elementwise kernel's elements are. */
enum class ElementMode {
  kTyped,    //!< T is the output's dtype (with its compute type), a scalar is passed as CT
  kStorage,  //!< T is the unsigned type of the element size (moves only), a scalar as its bits
};

/*!
 * \brief The launch of every map-like kernel (elementwise.cc chunks the elements): the kernel
 *        built with `options`, arguments inputs..., output, what `scalars` sets, then
 *        (uint nt, ulong n, ulong chunk).
 */
void RunMap(const KernelContext& ctx, const ProgramSource& program, const char* kernel,
            const std::vector<const DLArray*>& inputs, const DLArray* out,
            const std::string& options, const std::function<void(Launch&)>& scalars);

/*!
 * \brief Runs elementwise kernel `kernel` of `program` (made with the macros above) over the
 *        output's elements: inputs (0 to 2 arrays), then the output, then the scalar when
 *        `scalar` is given (see scalar_arg.h), with `extra` build options.
 */
void RunElementwise(const KernelContext& ctx, const ProgramSource& program, const char* kernel,
                    const std::vector<const DLArray*>& inputs, const DLArray* out,
                    const double* scalar, ElementMode mode = ElementMode::kTyped,
                    const std::string& extra = "");

}  // namespace dlarray::opencl

#endif  // DLARRAY_BACKENDS_OPENCL_ELEMENTWISE_H_
