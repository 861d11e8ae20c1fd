// A backend that finds no hardware.
#include "test_plugin_util.h"

static dlarray::Device* CreateDevice() {
  return new HostMemoryDevice(0, "simulated: no test hardware present", kTestDeviceType + 3);
}

DLARRAY_DEFINE_PLUGIN("zero_devices", kTestDeviceType + 3, &CreateDevice, nullptr)
