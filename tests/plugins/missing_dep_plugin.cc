// A plugin whose shared-library dependency cannot be found when it is opened.
#include "dlarray/plugin.h"

extern "C" int dlarray_test_missing_dep_value();

static dlarray::Device* CreateDevice() {
  throw dlarray::BackendError("unreachable: " + std::to_string(dlarray_test_missing_dep_value()));
}

DLARRAY_DEFINE_PLUGIN("missing_dep", 21, &CreateDevice, nullptr)
