// custom_add.cc: the CPU twin of custom_add.cu, c = a + b for float32 arrays of any shape.
//   g++ -shared -fPIC -O3 -o custom_add_cpu.so custom_add.cc
#include <cstdint>
#include <cstring>

#include "dlarray/aot.h"

namespace {

int Fail(void* extra, const char* message) {
  DLArrayAotSetError(DLArrayAotExtraOf(extra), message);
  return 1;
}

}  // namespace

extern "C" int CustomAdd(int nparam, void** params, int* ndims, int64_t** shapes,
                         const char** dtypes, void* /*stream*/, void* extra) {
  if (nparam != 3) return Fail(extra, "CustomAdd takes 2 inputs and 1 output");
  int64_t n = 1;
  for (int d = 0; d < ndims[2]; ++d) n *= shapes[2][d];
  for (int i = 0; i < 3; ++i) {
    if (std::strcmp(dtypes[i], "float32") != 0) return Fail(extra, "CustomAdd takes float32");
    int64_t m = 1;
    for (int d = 0; d < ndims[i]; ++d) m *= shapes[i][d];
    if (m != n) return Fail(extra, "CustomAdd: the arrays differ in size");
  }
  const auto* a = static_cast<const float*>(params[0]);
  const auto* b = static_cast<const float*>(params[1]);
  auto* c = static_cast<float*>(params[2]);
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
  return 0;
}
