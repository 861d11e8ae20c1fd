// An empty kernel launch: the yardstick for the host cost of one op call in cuda_bench.
#include <cuda_runtime.h>

namespace {

__global__ void EmptyKernel() {}

}  // namespace

void LaunchEmptyKernel(cudaStream_t stream) { EmptyKernel<<<1, 32, 0, stream>>>(); }
