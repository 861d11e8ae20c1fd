/* The data-movement primitives: strided copy, astype, broadcast_to, array_set (fill), where, and
 * the two comparisons with a runtime operator (compare, compare_by_const). */
#include <string.h>

#include "prim.h"

#define DT(a) cprim_dtype_index((a)->dtype)

/* The element offset (in elements) of flat row-major index i of a's shape, with the given strides
 * (NULL: compact). */
static int64_t Offset(const DLArray* shape_of, const int64_t* strides, int64_t i) {
  int64_t offset = 0, compact = 1;
  int d;
  for (d = shape_of->ndim - 1; d >= 0; --d) {
    const int64_t extent = shape_of->shape[d];
    const int64_t stride = strides != NULL ? strides[d] : compact;
    offset += (i % extent) * stride;
    i /= extent;
    compact *= extent;
  }
  return offset;
}

/* out = x, either side a strided view (negative strides too: the core moved data so that every
 * element lies at data + byte_offset + offset * itemsize). */
int cprim_copy(const DLArrayKernelCall* call, void* data) {
  const DLArray* in = call->inputs[0];
  const DLArray* out = call->outputs[0];
  const int64_t n = cprim_numel(out), item = cprim_item(out);
  const char* x = cprim_ptr(in);
  char* y = cprim_ptr(out);
  int64_t i;
  (void)data;
  if (in->strides == NULL && out->strides == NULL) {
    memmove(y, x, (size_t)(n * item));
    return 0;
  }
  for (i = 0; i < n; ++i)
    memmove(y + Offset(out, out->strides, i) * item, x + Offset(out, in->strides, i) * item,
            (size_t)item);
  return 0;
}

/* out = x converted to out's dtype, NumPy's casts (prim.h's Value). */
int cprim_astype(const DLArrayKernelCall* call, void* data) {
  const int from = DT(call->inputs[0]), to = DT(call->outputs[0]);
  const char* x = cprim_ptr(call->inputs[0]);
  char* y = cprim_ptr(call->outputs[0]);
  const int64_t n = cprim_numel(call->outputs[0]);
  int64_t i;
  (void)data;
  for (i = 0; i < n; ++i) cprim_store(y, i, to, cprim_load(x, i, from));
  return 0;
}

/* out = x broadcast to out's shape: a dimension of extent 1 (or a missing leading one) repeats. */
int cprim_broadcast_to(const DLArrayKernelCall* call, void* data) {
  const DLArray* in = call->inputs[0];
  const DLArray* out = call->outputs[0];
  const int64_t n = cprim_numel(out), item = cprim_item(out);
  int64_t strides[DLARRAY_MAX_NDIM], compact = 1, i;
  int d;
  (void)data;
  for (d = 0; d < out->ndim; ++d) strides[d] = 0;
  for (d = in->ndim - 1; d >= 0; --d) {
    if (in->shape[d] != 1) strides[out->ndim - in->ndim + d] = compact;
    compact *= in->shape[d];
  }
  for (i = 0; i < n; ++i)
    memcpy(cprim_ptr(out) + i * item, cprim_ptr(in) + Offset(out, strides, i) * item, (size_t)item);
  return 0;
}

/* out[:] = value (the core checked that it fits the dtype). */
int cprim_array_set(const DLArrayKernelCall* call, void* data) {
  const DLArray* out = call->outputs[0];
  const int dt = DT(out);
  const int64_t n = cprim_numel(out);
  int64_t i;
  (void)data;
  if (n == 0) return 0;
  cprim_store(cprim_ptr(out), 0, dt, cprim_real(call->attrs[0]));
  for (i = 1; i < n; ++i)
    memcpy(cprim_ptr(out) + i * cprim_item(out), cprim_ptr(out), (size_t)cprim_item(out));
  return 0;
}

/* out = x where condition else y (condition bool; x, y, out of one dtype). */
int cprim_where(const DLArrayKernelCall* call, void* data) {
  const uint8_t* c = (const uint8_t*)cprim_ptr(call->inputs[0]);
  const DLArray* out = call->outputs[0];
  const int64_t n = cprim_numel(out), item = cprim_item(out);
  int64_t i;
  (void)data;
  for (i = 0; i < n; ++i)
    memmove(cprim_ptr(out) + i * item, cprim_ptr(call->inputs[c[i] ? 1 : 2]) + i * item,
            (size_t)item);
  return 0;
}

/* a <cmp> b for cmp 0 ==, 1 !=, 2 <, 3 <=, 4 >, 5 >=; NaN compares unequal to everything. */
static int Compare(Value a, Value b, int cmp) {
  int unordered;
  const int order = cprim_order(a, b, &unordered);
  if (unordered) return cmp == 1;
  switch (cmp) {
    case 0:
      return order == 0;
    case 1:
      return order != 0;
    case 2:
      return order < 0;
    case 3:
      return order <= 0;
    case 4:
      return order > 0;
    default:
      return order >= 0;
  }
}

/* Both operands in one class: an integer and a double compare as doubles. */
static Value AsReal(Value v) {
  if (v.cls == V_INT) return cprim_real((double)v.i);
  if (v.cls == V_UINT) return cprim_real((double)v.u);
  return v;
}

int cprim_compare(const DLArrayKernelCall* call, void* data) {
  const int dt = DT(call->inputs[0]), cmp = (int)call->attrs[0];
  const char* a = cprim_ptr(call->inputs[0]);
  const char* b = cprim_ptr(call->inputs[1]);
  uint8_t* y = (uint8_t*)cprim_ptr(call->outputs[0]);
  const int64_t n = cprim_numel(call->outputs[0]);
  int64_t i;
  (void)data;
  for (i = 0; i < n; ++i) y[i] = (uint8_t)Compare(cprim_load(a, i, dt), cprim_load(b, i, dt), cmp);
  return 0;
}

/* x <cmp> value, compared exactly in double (not rounded to x's dtype first), as the CPU. */
int cprim_compare_by_const(const DLArrayKernelCall* call, void* data) {
  const int dt = DT(call->inputs[0]), cmp = (int)call->attrs[1];
  const char* x = cprim_ptr(call->inputs[0]);
  uint8_t* y = (uint8_t*)cprim_ptr(call->outputs[0]);
  const int64_t n = cprim_numel(call->outputs[0]);
  Value value = cprim_real(call->attrs[0]);
  int64_t i;
  (void)data;
  for (i = 0; i < n; ++i) {
    Value v = AsReal(cprim_load(x, i, dt));
    value.cls = v.cls; /* a complex x compares with value + 0j */
    y[i] = (uint8_t)Compare(v, value, cmp);
  }
  return 0;
}
