// astype: out = in converted to out's dtype, as NumPy's astype does (half types round to nearest
// even, floats to integers truncate, anything to bool is != 0; out-of-range floats and NaN, which
// NumPy leaves undefined, saturate and give 0).
#include "elementwise.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

struct Identity {
  template <typename C>
  __device__ C operator()(C x) const {
    return x;
  }
};

}  // namespace

void AstypeKernel(const KernelContext& ctx) {
  const DLArray* in = ctx.inputs[0];
  DLArray* out = ctx.outputs[0];
  const LaunchEnv env = Prepare(ctx);
  const int64_t n = NumElements(out);
  if (in->dtype == out->dtype) {
    const void* src = Data<const char>(in);
    void* dst = Data<char>(out);
    if (src == dst) return;
    CUDA_CALL(cudaMemcpyAsync(dst, src, static_cast<size_t>(n) * ((out->dtype.bits + 7) / 8),
                              cudaMemcpyDeviceToDevice, env.stream));
    return;
  }
  Dispatch<kStorageTypes>(in->dtype, ctx.op_name, [&](auto from) {
    using TI = typename decltype(from)::type;
    Dispatch<kStorageTypes>(out->dtype, ctx.op_name, [&](auto to) {
      using TO = typename decltype(to)::type;
      LaunchMap(env, Data<TO>(out), n, Identity{}, Data<const TI>(in));
    });
  });
}

}  // namespace cuda
}  // namespace dlarray
