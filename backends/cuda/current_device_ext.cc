// Extension "dlarray.current_device.v1": code outside the plugin (AOT custom op libraries) makes a
// GPU current before launching on its stream, since CUDA launches go to the current device.
#include "current_device_ext.h"

#include <cuda_runtime_api.h>

#include "dlarray/ext/current_device.h"

namespace dlarray {
namespace cuda {
namespace {

const char* MakeCurrent(int32_t device_id) {
  int current = -1;
  if (cudaGetDevice(&current) == cudaSuccess && current == device_id) return nullptr;
  const cudaError_t err = cudaSetDevice(device_id);
  return err == cudaSuccess ? nullptr : cudaGetErrorName(err);
}

const DLArrayCurrentDeviceExtV1 kCurrentDevice = {sizeof(DLArrayCurrentDeviceExtV1), &MakeCurrent};

}  // namespace

const void* CurrentDeviceExtension() { return &kCurrentDevice; }

}  // namespace cuda
}  // namespace dlarray
