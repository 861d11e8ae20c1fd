// The dependency missing_dep_plugin.so links but cannot find at run time.
extern "C" __attribute__((visibility("default"))) int dlarray_test_missing_dep_value() { return 7; }
