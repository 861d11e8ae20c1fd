/*!
 * \file row_reduce.cc
 * \brief PlanRows: a row per work-item, or a work-group per row.
 */
#include "row_reduce.h"

#include <algorithm>

namespace dlarray::opencl {

RowPlan PlanRows(const DeviceInfo& info, uint64_t rows, uint64_t cols) {
  RowPlan plan;
  if (info.is_cpu) {
    // Enough rows to keep every core busy: whole rows per work-item, a few work-items per core.
    const uint64_t items = uint64_t{16} * info.compute_units;
    if (rows >= uint64_t{4} * info.compute_units || cols < 1024) {
      plan.rows_per_item = std::max<uint64_t>(1, rows / items);
      plan.local = 1;
      return plan;
    }
    plan.group = 16;
    return plan;
  }
  if (cols < 128) {
    plan.local = std::min<size_t>(64, info.max_work_group);
    return plan;
  }
  size_t g = 256;
  while (g > info.max_work_group) g /= 2;
  plan.group = g;
  return plan;
}

}  // namespace dlarray::opencl
