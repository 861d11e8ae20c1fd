// scaled_reduce.h: what the CPU and CUDA ScaledReduce share: attributes, shape inference,
// workspace size. ScaledReduce(x) over a 2-D float32 x:
//   tmp = scale * x                        (kept in the workspace, as MindSpore's example does)
//   out = sum (mode "sum") or mean (mode "mean") of tmp over `axis` (0 or 1), `keep_dims` or not.
// Attributes: axis (int), keep_dims (bool), scale (float, default 1), mode (str, default "sum").
#ifndef EXAMPLES_CUSTOM_OPS_SCALED_REDUCE_H_
#define EXAMPLES_CUSTOM_OPS_SCALED_REDUCE_H_

#include <cstdint>
#include <cstring>

#include "dlarray/aot.h"

namespace scaled_reduce {

struct Attrs {
  int64_t axis;
  bool keep_dims;
  double scale;
  bool mean;
};

inline int Fail(DLArrayAotExtra* extra, const char* message) {
  DLArrayAotSetError(extra, message);
  return 1;
}

// Reads and checks the attributes; returns non-zero (with a message) when they are wrong.
inline int ReadAttrs(DLArrayAotExtra* extra, Attrs* a) {
  if (extra == nullptr) return 1;
  if (DLArrayAotFindAttr(extra, "axis") == nullptr)
    return Fail(extra, "attribute 'axis' is missing");
  a->axis = DLArrayAotAttrInt(extra, "axis", -1);
  if (a->axis != 0 && a->axis != 1) return Fail(extra, "axis must be 0 or 1");
  a->keep_dims = DLArrayAotAttrInt(extra, "keep_dims", 0) != 0;
  a->scale = DLArrayAotAttrFloat(extra, "scale", 1.0);
  const char* mode = DLArrayAotAttrString(extra, "mode", "sum");
  if (std::strcmp(mode, "sum") != 0 && std::strcmp(mode, "mean") != 0) {
    return Fail(extra, "mode must be \"sum\" or \"mean\"");
  }
  a->mean = std::strcmp(mode, "mean") == 0;
  return 0;
}

// Output shape (entry 1 of ndims/shapes) from the input's (entry 0).
inline int InferShape(int* ndims, int64_t** shapes, DLArrayAotExtra* extra) {
  Attrs a;
  if (ReadAttrs(extra, &a) != 0) return 1;
  if (ndims[0] != 2) return Fail(extra, "ScaledReduce takes a 2-D input");
  const int64_t kept = shapes[0][1 - a.axis];
  if (a.keep_dims) {
    ndims[1] = 2;
    shapes[1][a.axis] = 1;
    shapes[1][1 - a.axis] = kept;
  } else {
    ndims[1] = 1;
    shapes[1][0] = kept;
  }
  return 0;
}

// The workspace holds scale * x: one float per input element.
inline int Init(int* ndims, int64_t** shapes, const char** dtypes, DLArrayAotExtra* extra) {
  Attrs a;
  if (ReadAttrs(extra, &a) != 0) return 1;
  if (ndims[0] != 2 || std::strcmp(dtypes[0], "float32") != 0) {
    return Fail(extra, "ScaledReduce takes a 2-D float32 input");
  }
  extra->workspace_size = static_cast<uint64_t>(shapes[0][0] * shapes[0][1]) * sizeof(float);
  return 0;
}

}  // namespace scaled_reduce

#endif  // EXAMPLES_CUSTOM_OPS_SCALED_REDUCE_H_
