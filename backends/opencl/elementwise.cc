/*!
 * \file elementwise.cc
 * \brief RunMap and RunElementwise: the chunking of elementwise kernels.
 */
#include "elementwise.h"

#include <algorithm>

#include "launch.h"
#include "scalar_arg.h"

namespace dlarray::opencl {

void RunMap(const KernelContext& ctx, const ProgramSource& program, const char* kernel,
            const std::vector<const DLArray*>& inputs, const DLArray* out,
            const std::string& options, const std::function<void(Launch&)>& scalars) {
  OpenclDevice& device = DeviceOf(ctx);
  const DeviceInfo& info = device.info(ctx.device_id);
  const size_t n = static_cast<size_t>(NumElements(out));
  if (n == 0) return;
  const size_t vw = static_cast<size_t>(VectorWidth(info));
  size_t chunk = vw;
  size_t local = std::min<size_t>(256, info.max_work_group);
  if (info.is_cpu) {
    // Runs of at least 16K elements (long contiguous runs stream best), and up to 16 groups of 8
    // per core, so that a core held up by another process does not leave the others waiting.
    const size_t items = std::clamp<size_t>(n / 16384, 1, size_t{128} * info.compute_units);
    chunk = ItemsFor(ItemsFor(n, items), vw) * vw;
    local = 8;
  }
  Launch launch(ctx, program, kernel, options);
  static const char* const kNames[] = {"input 0", "input 1", "input 2"};
  for (size_t i = 0; i < inputs.size(); ++i) launch.array(inputs[i], kNames[i]);
  launch.array(out, "output");
  if (scalars) scalars(launch);
  launch.scalar<cl_uint>(NonTemporal(info, n * ElementBytes(out->dtype)) ? 1 : 0);
  launch.scalar<cl_ulong>(n).scalar<cl_ulong>(chunk);
  launch.run(ItemsFor(n, chunk), local);
}

void RunElementwise(const KernelContext& ctx, const ProgramSource& program, const char* kernel,
                    const std::vector<const DLArray*>& inputs, const DLArray* out,
                    const double* scalar, ElementMode mode, const std::string& extra) {
  const DeviceInfo& info = DeviceOf(ctx).info(ctx.device_id);
  const size_t elem = ElementBytes(out->dtype);
  const bool storage = mode == ElementMode::kStorage;
  const std::string options =
      storage ? StorageOptions(elem, info, extra) : BuildOptions(out->dtype, info, extra);
  const DLArrayDType t = out->dtype;
  RunMap(ctx, program, kernel, inputs, out, options, [&](Launch& launch) {
    if (scalar != nullptr && storage) {
      SetIntBits(launch, static_cast<int>(elem * 8), StoredBits(t, *scalar));
    } else if (scalar != nullptr) {
      SetComputeScalar(launch, t, *scalar);
    }
  });
}

}  // namespace dlarray::opencl
