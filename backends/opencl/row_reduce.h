/*!
 * \file row_reduce.h
 * \brief What softmax and softmax_cross_entropy share: OpenCL C helpers for reductions along a
 *        row (horizontal vector sums, work-group reductions) and the choice between a row per
 *        work-item and a work-group per row.
 */
#ifndef DLARRAY_BACKENDS_OPENCL_ROW_REDUCE_H_
#define DLARRAY_BACKENDS_OPENCL_ROW_REDUCE_H_

#include <cstddef>
#include <cstdint>

#include "opencl_device.h"

namespace dlarray::opencl {

/*!
 * \brief OpenCL C: HSUM(v) / HMAX(v) over the VW lanes of a vector; ROW_RANGE(C, begin, step)
 *        gives a work-item's vectors of a row in the work-group-per-row kernels (contiguous
 *        chunks on CPUs, interleaved on GPUs); group_max / group_sum reduce over a work-group
 *        (local size WG, a power of two) through local memory.
 */
inline constexpr const char* kRowReduceHelpers = R"CLC(
#define DL_MAX(a, b) ((a) > (b) ? (a) : (b))
#define HSUM2(v) ((v).s0 + (v).s1)
#define HSUM4(v) HSUM2((v).lo + (v).hi)
#define HSUM8(v) HSUM4((v).lo + (v).hi)
#define HSUM16(v) HSUM8((v).lo + (v).hi)
#define HMAX2(v) DL_MAX((v).s0, (v).s1)
#define HMAX4(v) HMAX2(DL_MAX((v).lo, (v).hi))
#define HMAX8(v) HMAX4(DL_MAX((v).lo, (v).hi))
#define HMAX16(v) HMAX8(DL_MAX((v).lo, (v).hi))
#define HSUM(v) DL_CAT(HSUM, VW)(v)
#define HMAX(v) DL_CAT(HMAX, VW)(v)

#ifdef WG
// The vectors [v0, v1) of a row that work-item lid handles, by steps of vstep vectors: a
// contiguous run on CPUs (one thread runs the group; long runs stream best), every WG-th vector
// on GPUs (neighbouring work-items read neighbouring memory).
#ifdef DLARRAY_CPU
#define ROW_RANGE(nvec, lid, v0, v1, vstep)                    \
  const ulong per_item_ = ((nvec) + WG - 1) / WG;              \
  const ulong v0 = min((ulong)(lid) * per_item_, (ulong)(nvec)); \
  const ulong v1 = min(v0 + per_item_, (ulong)(nvec));         \
  const ulong vstep = 1;
#else
#define ROW_RANGE(nvec, lid, v0, v1, vstep) \
  const ulong v0 = (lid);                   \
  const ulong v1 = (nvec);                  \
  const ulong vstep = WG;
#endif

T group_max(T v, __local T* tmp) {
  const int lid = get_local_id(0);
  tmp[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = WG / 2; s > 0; s >>= 1) {
    if (lid < s) tmp[lid] = DL_MAX(tmp[lid], tmp[lid + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const T r = tmp[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}

ACC group_sum(ACC v, __local ACC* tmp) {
  const int lid = get_local_id(0);
  tmp[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = WG / 2; s > 0; s >>= 1) {
    if (lid < s) tmp[lid] += tmp[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const ACC r = tmp[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}
#endif
)CLC";

/*! \brief How a row-wise op runs: rows_per_item rows per work-item, or a group of `group`
 *         work-items per row (group > 0). */
struct RowPlan {
  uint64_t rows_per_item = 1;  //!< row-per-work-item kernels
  size_t group = 0;            //!< work-group-per-row kernels: the group size, else 0
  size_t local = 1;            //!< row-per-work-item kernels: the work-group size
};

/*! \brief The plan for rows x cols on a device. */
RowPlan PlanRows(const DeviceInfo& info, uint64_t rows, uint64_t cols);

}  // namespace dlarray::opencl

#endif  // DLARRAY_BACKENDS_OPENCL_ROW_REDUCE_H_
