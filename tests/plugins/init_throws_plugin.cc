// A plugin whose device creation throws.
#include "test_plugin_util.h"

static dlarray::Device* CreateDevice() {
  throw dlarray::BackendError("simulated failure while opening the test device");
}

DLARRAY_PLUGIN_ENTRY {
  static const DLArrayPluginDescriptor d{DLARRAY_PLUGIN_ABI_VERSION, "init_throws",
                                         kTestDeviceType + 2, &CreateDevice, nullptr};
  return &d;
}
