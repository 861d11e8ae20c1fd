// probe_ops.cc: AOT ops (CPU) that tests use to look at what dlarray.custom passes and how it
// handles failures. Compiled by the tests through dlarray.custom's auto-compilation.
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "dlarray/aot.h"

namespace {

int64_t Numel(int ndim, const int64_t* shape) {
  int64_t n = 1;
  for (int d = 0; d < ndim; ++d) n *= shape[d];
  return n;
}

}  // namespace

// SumDiff(a, b) -> (a + b, a - b): two outputs, float32 or float64 (all alike).
extern "C" int SumDiff(int nparam, void** params, int* ndims, int64_t** shapes, const char** dtypes,
                       void* /*stream*/, void* extra) {
  if (nparam != 4) return 1;
  const int64_t n = Numel(ndims[0], shapes[0]);
  if (std::strcmp(dtypes[0], "float64") == 0) {
    const auto* a = static_cast<const double*>(params[0]);
    const auto* b = static_cast<const double*>(params[1]);
    for (int64_t i = 0; i < n; ++i) {
      static_cast<double*>(params[2])[i] = a[i] + b[i];
      static_cast<double*>(params[3])[i] = a[i] - b[i];
    }
    return 0;
  }
  if (std::strcmp(dtypes[0], "float32") != 0) {
    DLArrayAotSetError(DLArrayAotExtraOf(extra), "SumDiff takes float32 or float64");
    return 2;
  }
  const auto* a = static_cast<const float*>(params[0]);
  const auto* b = static_cast<const float*>(params[1]);
  for (int64_t i = 0; i < n; ++i) {
    static_cast<float*>(params[2])[i] = a[i] + b[i];
    static_cast<float*>(params[3])[i] = a[i] - b[i];
  }
  return 0;
}

// Probe(x) -> float64 (32,): what the call saw. [0] nparam, [1] ndim of x, [2..4] its first
// extents, [5] numel, [6] 1 when dtypes[0] is "float32", [7] stream != NULL, [8] magic ok,
// [9] version, [10] device_type, [11] num_inputs, [12] num_outputs, [13] num_attrs, [14] int
// attr "i", [15] float attr "f", [16] length of str attr "s", [17] its first char, [18] length of
// ints "li", [19..21] its first entries, [22] length of floats "lf", [23..25] its first entries,
// [26] 1 when op_name ends with ":Probe", [27] workspace_size, [28] x[0] (float32).
extern "C" int Probe(int nparam, void** params, int* ndims, int64_t** shapes, const char** dtypes,
                     void* stream, void* extra_ptr) {
  double* out = static_cast<double*>(params[nparam - 1]);
  for (int i = 0; i < 32; ++i) out[i] = -1;
  DLArrayAotExtra* e = DLArrayAotExtraOf(extra_ptr);
  out[0] = nparam;
  out[1] = ndims[0];
  for (int d = 0; d < 3 && d < ndims[0]; ++d) out[2 + d] = static_cast<double>(shapes[0][d]);
  out[5] = static_cast<double>(Numel(ndims[0], shapes[0]));
  out[6] = std::strcmp(dtypes[0], "float32") == 0;
  out[7] = stream != nullptr;
  out[8] = e != nullptr;
  if (e == nullptr) return 0;
  out[9] = e->version;
  out[10] = e->device_type;
  out[11] = e->num_inputs;
  out[12] = e->num_outputs;
  out[13] = e->num_attrs;
  out[14] = static_cast<double>(DLArrayAotAttrInt(e, "i", -7));
  out[15] = DLArrayAotAttrFloat(e, "f", -7.0);
  const char* s = DLArrayAotAttrString(e, "s", nullptr);
  if (s != nullptr) {
    out[16] = static_cast<double>(std::strlen(s));
    out[17] = s[0];
  }
  if (const DLArrayAotAttr* li = DLArrayAotFindAttr(e, "li")) {
    out[18] = li->kind == kDLArrayAotInts ? static_cast<double>(li->length) : -2;
    for (int k = 0; k < 3 && k < li->length; ++k) out[19 + k] = static_cast<double>(li->ints[k]);
  }
  if (const DLArrayAotAttr* lf = DLArrayAotFindAttr(e, "lf")) {
    out[22] = lf->kind == kDLArrayAotFloats ? static_cast<double>(lf->length) : -2;
    for (int k = 0; k < 3 && k < lf->length; ++k) out[23 + k] = lf->floats[k];
  }
  const size_t len = std::strlen(e->op_name);
  out[26] = len >= 6 && std::strcmp(e->op_name + len - 6, ":Probe") == 0;
  out[27] = static_cast<double>(e->workspace_size);
  if (nparam == 2 && out[6] == 1 && out[5] > 0) out[28] = static_cast<const float*>(params[0])[0];
  return 0;
}

// Fail(x) -> x: returns 7 with a message.
extern "C" int Fail(int, void**, int*, int64_t**, const char**, void*, void* extra) {
  DLArrayAotSetError(DLArrayAotExtraOf(extra), "the probe failed on purpose");
  return 7;
}

// Throw(x) -> x: lets a C++ exception escape.
extern "C" int Throw(int, void**, int*, int64_t**, const char**, void*, void*) {
  throw std::runtime_error("thrown by the probe");
}

// Counted(x) -> float64 (2,): [0] how many times CountedInit ran, [1] the workspace's first
// byte, which CountedInit's workspace keeps between calls (Counted increments it).
namespace {
int g_init_calls = 0;
}  // namespace

extern "C" int CountedInit(int* ndims, int64_t** shapes, const char**, DLArrayAotExtra* extra) {
  ++g_init_calls;
  extra->workspace_size = static_cast<uint64_t>(Numel(ndims[0], shapes[0])) + 16;
  return 0;
}

extern "C" int Counted(int, void** params, int*, int64_t**, const char**, void*, void* extra_ptr) {
  DLArrayAotExtra* e = DLArrayAotExtraOf(extra_ptr);
  auto* ws = static_cast<unsigned char*>(e->workspace);
  ws[0] = static_cast<unsigned char>(ws[0] + 1);
  static_cast<double*>(params[1])[0] = g_init_calls;
  static_cast<double*>(params[1])[1] = ws[0];
  return 0;
}

// BadInit: its Init fails with a message.
extern "C" int BadInitInit(int*, int64_t**, const char**, DLArrayAotExtra* extra) {
  DLArrayAotSetError(extra, "no workspace for you");
  return 3;
}

extern "C" int BadInit(int, void**, int*, int64_t**, const char**, void*, void*) { return 0; }

// Twice(x) -> 2x with its shape and dtype from TwiceInferShape / TwiceInferType (float32 in,
// float64 out).
extern "C" int TwiceInferShape(int* ndims, int64_t** shapes, DLArrayAotExtra*) {
  ndims[1] = ndims[0];
  for (int d = 0; d < ndims[0]; ++d) shapes[1][d] = shapes[0][d];
  return 0;
}

extern "C" int TwiceInferType(const char** dtypes, DLArrayAotExtra* extra) {
  if (std::strcmp(dtypes[0], "float32") != 0) {
    DLArrayAotSetError(extra, "Twice takes float32");
    return 1;
  }
  dtypes[1] = "float64";
  return 0;
}

extern "C" int Twice(int, void** params, int* ndims, int64_t** shapes, const char**, void*, void*) {
  const int64_t n = Numel(ndims[0], shapes[0]);
  for (int64_t i = 0; i < n; ++i) {
    static_cast<double*>(params[1])[i] = 2.0 * static_cast<const float*>(params[0])[i];
  }
  return 0;
}
