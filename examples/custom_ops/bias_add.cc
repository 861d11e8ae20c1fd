// bias_add.cc: the MLP's bias-add as AOT ops on the CPU (bias_add.cu is the GPU twin).
//   BiasAdd(x (n, k), b (k,)) -> x + b on every row;   BiasAddGrad(dy (n, k)) -> column sums (k,)
#include <cstdint>
#include <cstring>

#include "dlarray/aot.h"

namespace {

int Fail(void* extra, const char* message) {
  DLArrayAotSetError(DLArrayAotExtraOf(extra), message);
  return 1;
}

bool AllFloat32(int nparam, const char** dtypes) {
  for (int i = 0; i < nparam; ++i) {
    if (std::strcmp(dtypes[i], "float32") != 0) return false;
  }
  return true;
}

}  // namespace

extern "C" int BiasAdd(int nparam, void** params, int* ndims, int64_t** shapes, const char** dtypes,
                       void* /*stream*/, void* extra) {
  if (nparam != 3 || ndims[0] != 2 || ndims[1] != 1 || shapes[1][0] != shapes[0][1] ||
      !AllFloat32(nparam, dtypes)) {
    return Fail(extra, "BiasAdd takes float32 x (n, k) and b (k,)");
  }
  const int64_t n = shapes[0][0], k = shapes[0][1];
  const auto* x = static_cast<const float*>(params[0]);
  const auto* b = static_cast<const float*>(params[1]);
  auto* y = static_cast<float*>(params[2]);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < k; ++j) y[i * k + j] = x[i * k + j] + b[j];
  }
  return 0;
}

extern "C" int BiasAddGradInferShape(int* ndims, int64_t** shapes, DLArrayAotExtra* extra) {
  if (ndims[0] != 2) return Fail(extra, "BiasAddGrad takes a 2-D gradient");
  ndims[1] = 1;
  shapes[1][0] = shapes[0][1];
  return 0;
}

extern "C" int BiasAddGrad(int nparam, void** params, int* ndims, int64_t** shapes,
                           const char** dtypes, void* /*stream*/, void* extra) {
  if (nparam != 2 || ndims[0] != 2 || !AllFloat32(nparam, dtypes)) {
    return Fail(extra, "BiasAddGrad takes a float32 (n, k) gradient");
  }
  const int64_t n = shapes[0][0], k = shapes[0][1];
  const auto* dy = static_cast<const float*>(params[0]);
  auto* db = static_cast<float*>(params[1]);
  for (int64_t j = 0; j < k; ++j) db[j] = 0.f;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < k; ++j) db[j] += dy[i * k + j];
  }
  return 0;
}
