// A working backend for a second device type (20) with two devices in host memory, and kernels
// for copy and relu only: lets the tests route between device types without a GPU.
#include <algorithm>

#include "test_plugin_util.h"

static dlarray::Device* CreateDevice() { return new HostMemoryDevice(2, ""); }

static void Relu(const dlarray::KernelContext& c) {
  const float* x = static_cast<const float*>(c.inputs[0]->data);
  float* y = static_cast<float*>(c.outputs[0]->data);
  for (int64_t i = 0, n = dlarray::NumElements(c.outputs[0]); i < n; ++i)
    y[i] = std::max(x[i], 0.0f);
}

static void Copy(const dlarray::KernelContext& c) {
  std::memcpy(c.outputs[0]->data, c.inputs[0]->data,
              static_cast<size_t>(dlarray::NumElements(c.outputs[0])) * sizeof(float));
}

static void Register(dlarray::Registry* r) {
  r->register_kernel("relu", kTestDeviceType, &Relu);
  r->register_kernel("copy", kTestDeviceType, &Copy);
}

DLARRAY_DEFINE_PLUGIN("fake_device", kTestDeviceType, &CreateDevice, &Register)
