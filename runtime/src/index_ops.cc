// The shape and dtype rules of the indexing primitives. Python (dlarray._indexing_api) brings
// every call to these canonical forms, so that a backend implements each primitive once:
//   gather   x (outer, n, inner), indices (m,) int64   -> out (outer, m, inner), x's dtype
//   scatter  values (outer, m, inner), indices (m,)    -> out (outer, n, inner), written in place
//   gather_along  x (outer, n, inner), indices (outer, m, inner) int64 -> out (outer, m, inner):
//            an index per element (take_along_axis; optional: without it, gather of flat positions)
//   nonzero  mask (any shape) bool                     -> out (size + 1,) int64: out[0] = count,
//                                                         then the flat positions, ascending
//   compress x (n,), mask (n,) bool                  -> out (n,) x's dtype: out[:count] = the
//                                                         elements where mask is True, in order;
//                                                         count (1,) int64 (optional: without
//                                                         it, nonzero + gather)
//   argsort  x (rows, n), descending                   -> out (rows, n) int64, a stable order
//   sort     x (rows, n), descending                   -> out (rows, n) x's dtype, the sorted rows
//                                                         (optional: without it, argsort + gather)
#include "index_ops.h"

#include <string>

#include "dlarray/errors.h"
#include "dlarray/kernel.h"
#include "dlarray/runtime.h"

namespace dlarray {
namespace {

constexpr DLArrayDType kInt64{kDLArrayInt, 64, 1};

bool Is(DLArrayDType a, DLArrayDType b) { return a.code == b.code && a.bits == b.bits; }

void RequireDType(const DLArrayOpCall& c, const DLArray* a, DLArrayDType t, const char* what) {
  if (!Is(a->dtype, t)) {
    throw DTypeError(std::string(c.op_name) + ": " + what + " must be " + DTypeToString(t) +
                     ", got " + DTypeToString(a->dtype));
  }
}

void RequireNdim(const DLArrayOpCall& c, const DLArray* a, int ndim, const char* what) {
  if (a->ndim != ndim) {
    throw ShapeError(std::string(c.op_name) + ": " + what + " must be " + std::to_string(ndim) +
                     "-D, got shape " + ShapeToString(a));
  }
}

// gather and scatter: `data` (outer, n, inner) is indexed along axis 1 by `indices`, (m,) or, with
// `along` (gather_along), one index per picked element; `picked` is (outer, m, inner).
void ValidateTake(const DLArrayOpCall& c, const DLArray* data, const DLArray* picked,
                  const DLArray* indices, bool along = false) {
  RequireDType(c, indices, kInt64, "indices");
  RequireNdim(c, indices, along ? 3 : 1, "indices");
  RequireNdim(c, data, 3, "the indexed array");
  RequireNdim(c, picked, 3, "the picked array");
  if (!Is(data->dtype, picked->dtype)) {
    throw DTypeError(std::string(c.op_name) + ": the arrays' dtypes differ (" +
                     DTypeToString(data->dtype) + " and " + DTypeToString(picked->dtype) + ")");
  }
  const int64_t m = indices->shape[along ? 1 : 0];
  const bool fits =
      !along || (indices->shape[0] == picked->shape[0] && indices->shape[2] == picked->shape[2]);
  if (!fits || picked->shape[0] != data->shape[0] || picked->shape[2] != data->shape[2] ||
      picked->shape[1] != m) {
    throw ShapeError(std::string(c.op_name) + ": shapes " + ShapeToString(data) + " (indexed), " +
                     ShapeToString(indices) + " (indices) and " + ShapeToString(picked) +
                     (along ? " (picked) do not fit: indices and picked must be (outer, m, inner)"
                            : " (picked) do not fit: picked must be (outer, len(indices), inner)"));
  }
  if (data->shape[1] == 0 && m > 0 && data->shape[0] * data->shape[2] > 0) {
    throw ShapeError(std::string(c.op_name) + ": index is out of bounds for size 0");
  }
}

}  // namespace

void ValidateGather(const DLArrayOpCall& c) {
  ValidateTake(c, c.inputs[0], c.outputs[0], c.inputs[1]);
}

void ValidateGatherAlong(const DLArrayOpCall& c) {
  ValidateTake(c, c.inputs[0], c.outputs[0], c.inputs[1], true);
}

void ValidateScatter(const DLArrayOpCall& c) {
  ValidateTake(c, c.outputs[0], c.inputs[0], c.inputs[1]);
}

void ValidateNonzero(const DLArrayOpCall& c) {
  RequireDType(c, c.inputs[0], DLArrayDType{kDLArrayBool, 8, 1}, "mask");
  RequireDType(c, c.outputs[0], kInt64, "out");
  if (c.outputs[0]->ndim != 1 || c.outputs[0]->shape[0] != NumElements(c.inputs[0]) + 1) {
    throw ShapeError(std::string(c.op_name) + ": out must have shape (mask.size + 1,) = (" +
                     std::to_string(NumElements(c.inputs[0]) + 1) + ",), got " +
                     ShapeToString(c.outputs[0]));
  }
}

void ValidateCompress(const DLArrayOpCall& c) {
  const DLArray *x = c.inputs[0], *mask = c.inputs[1], *out = c.outputs[0];
  RequireDType(c, mask, DLArrayDType{kDLArrayBool, 8, 1}, "mask");
  RequireDType(c, out, x->dtype, "out");
  RequireDType(c, c.outputs[1], kInt64, "count");
  RequireNdim(c, x, 1, "x");
  if (mask->ndim != 1 || out->ndim != 1 || mask->shape[0] != x->shape[0] ||
      out->shape[0] != x->shape[0] || c.outputs[1]->ndim != 1 || c.outputs[1]->shape[0] != 1) {
    throw ShapeError(std::string(c.op_name) + ": x, mask and out must have one shape (n,) and " +
                     "count (1,); got x " + ShapeToString(x) + ", mask " + ShapeToString(mask) +
                     ", out " + ShapeToString(out) + ", count " + ShapeToString(c.outputs[1]));
  }
}

void ValidateArgsort(const DLArrayOpCall& c) {
  const DLArray* x = c.inputs[0];
  if (x->dtype.code == kDLArrayComplex) {
    throw DTypeError(std::string(c.op_name) + ": complex numbers have no order (x is " +
                     DTypeToString(x->dtype) + ")");
  }
  // argsort writes positions, sort the values themselves.
  RequireDType(c, c.outputs[0], std::string(c.op_name) == "sort" ? x->dtype : kInt64, "out");
  RequireNdim(c, x, 2, "x");
  RequireNdim(c, c.outputs[0], 2, "out");
  if (x->shape[0] != c.outputs[0]->shape[0] || x->shape[1] != c.outputs[0]->shape[1]) {
    throw ShapeError(std::string(c.op_name) + ": out must have x's shape " + ShapeToString(x) +
                     ", got " + ShapeToString(c.outputs[0]));
  }
  if (c.attrs[0] != 0.0 && c.attrs[0] != 1.0) {
    throw Error(ErrorKind::kValue, std::string(c.op_name) + ": descending must be 0 or 1");
  }
}

void InferGather(const DLArrayShapeCall& c) {
  if (c.input_ndims[0] != 3 || c.input_ndims[1] != 1) {
    throw ShapeError(std::string(c.op_name) + ": x must be 3-D and indices 1-D");
  }
  c.output_ndims[0] = 3;
  c.output_shapes[0][0] = c.input_shapes[0][0];
  c.output_shapes[0][1] = c.input_shapes[1][0];
  c.output_shapes[0][2] = c.input_shapes[0][2];
  c.output_dtypes[0] = c.input_dtypes[0];
}

void InferGatherAlong(const DLArrayShapeCall& c) {
  if (c.input_ndims[0] != 3 || c.input_ndims[1] != 3) {
    throw ShapeError(std::string(c.op_name) + ": x and indices must be 3-D");
  }
  c.output_ndims[0] = 3;
  for (int d = 0; d < 3; ++d) c.output_shapes[0][d] = c.input_shapes[1][d];
  c.output_dtypes[0] = c.input_dtypes[0];
}

void InferNonzero(const DLArrayShapeCall& c) {
  int64_t size = 1;
  for (int d = 0; d < c.input_ndims[0]; ++d) size *= c.input_shapes[0][d];
  c.output_ndims[0] = 1;
  c.output_shapes[0][0] = size + 1;
  c.output_dtypes[0] = kInt64;
}

void InferCompress(const DLArrayShapeCall& c) {
  if (c.input_ndims[0] != 1) throw ShapeError(std::string(c.op_name) + ": x must be 1-D");
  c.output_ndims[0] = c.output_ndims[1] = 1;
  c.output_shapes[0][0] = c.input_shapes[0][0];
  c.output_shapes[1][0] = 1;
  c.output_dtypes[0] = c.input_dtypes[0];
  c.output_dtypes[1] = kInt64;
}

void InferArgsort(const DLArrayShapeCall& c) {
  c.output_ndims[0] = c.input_ndims[0];
  for (int d = 0; d < c.input_ndims[0]; ++d) c.output_shapes[0][d] = c.input_shapes[0][d];
  c.output_dtypes[0] = std::string(c.op_name) == "sort" ? c.input_dtypes[0] : kInt64;
}

}  // namespace dlarray
