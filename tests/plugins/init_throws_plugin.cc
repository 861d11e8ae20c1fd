// A plugin whose device creation throws.
#include "test_plugin_util.h"

static dlarray::Device* CreateDevice() {
  throw dlarray::BackendError("simulated failure while opening the test device");
}

DLARRAY_DEFINE_PLUGIN("init_throws", kTestDeviceType + 2, &CreateDevice, nullptr)
