// scaled_reduce.cc: ScaledReduce on the CPU (see scaled_reduce.h): attributes and a workspace.
#include "scaled_reduce.h"

extern "C" int ScaledReduceInferShape(int* ndims, int64_t** shapes, DLArrayAotExtra* extra) {
  return scaled_reduce::InferShape(ndims, shapes, extra);
}

extern "C" int ScaledReduceInit(int* ndims, int64_t** shapes, const char** dtypes,
                                DLArrayAotExtra* extra) {
  return scaled_reduce::Init(ndims, shapes, dtypes, extra);
}

extern "C" int ScaledReduce(int nparam, void** params, int* /*ndims*/, int64_t** shapes,
                            const char** /*dtypes*/, void* /*stream*/, void* extra_ptr) {
  DLArrayAotExtra* extra = DLArrayAotExtraOf(extra_ptr);
  scaled_reduce::Attrs a;
  if (nparam != 2 || scaled_reduce::ReadAttrs(extra, &a) != 0) return 1;
  const int64_t rows = shapes[0][0], cols = shapes[0][1];
  const auto* x = static_cast<const float*>(params[0]);
  auto* out = static_cast<float*>(params[1]);
  auto* tmp = static_cast<float*>(extra->workspace);
  for (int64_t i = 0; i < rows * cols; ++i) tmp[i] = static_cast<float>(a.scale) * x[i];
  const int64_t outer = a.axis == 0 ? cols : rows, inner = a.axis == 0 ? rows : cols;
  for (int64_t o = 0; o < outer; ++o) {
    double sum = 0;
    for (int64_t k = 0; k < inner; ++k) sum += a.axis == 0 ? tmp[k * cols + o] : tmp[o * cols + k];
    out[o] = static_cast<float>(a.mean ? sum / static_cast<double>(inner) : sum);
  }
  return 0;
}
