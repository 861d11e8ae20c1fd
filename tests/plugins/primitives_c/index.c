/* The indexing primitives (shapes in the core's runtime/src/index_ops.cc): gather, scatter,
 * nonzero and argsort. Elements are moved as bytes, so one loop serves every dtype. */
#include <stdlib.h>
#include <string.h>

#include "prim.h"

#define DT(a) cprim_dtype_index((a)->dtype)

/* Moves rows along axis 1 between data (outer, n, inner) and picked (outer, m, inner): gather
 * copies data[o, idx[j]] to picked[o, j], scatter the reverse. An index outside [-n, n) is never
 * used: the call fails naming it (Python raises the message as an IndexError). */
static int MoveRows(const DLArrayKernelCall* call, const DLArray* data, const DLArray* picked,
                    int scatter) {
  const DLArray* indices = call->inputs[1];
  const int64_t* idx = (const int64_t*)cprim_ptr(indices);
  const int64_t outer = data->shape[0], n = data->shape[1], inner = data->shape[2];
  const int64_t m = indices->shape[0], row = inner * cprim_item(data);
  char* d = cprim_ptr(data);
  char* p = cprim_ptr(picked);
  int64_t o, j;
  for (j = 0; j < m; ++j) {
    if (idx[j] < -n || idx[j] >= n) {
      return cprim_fail(kDLArrayErrValue, "%s: index %lld is out of bounds for size %lld",
                        call->op_name, (long long)idx[j], (long long)n);
    }
  }
  for (o = 0; o < outer; ++o) {
    for (j = 0; j < m; ++j) {
      const int64_t i = idx[j] < 0 ? idx[j] + n : idx[j];
      char* at_data = d + (o * n + i) * row;
      char* at_picked = p + (o * m + j) * row;
      if (scatter) {
        memmove(at_data, at_picked, (size_t)row);
      } else {
        memmove(at_picked, at_data, (size_t)row);
      }
    }
  }
  return 0;
}

int cprim_gather(const DLArrayKernelCall* call, void* data) {
  (void)data;
  return MoveRows(call, call->inputs[0], call->outputs[0], 0);
}

int cprim_scatter(const DLArrayKernelCall* call, void* data) {
  (void)data;
  return MoveRows(call, call->outputs[0], call->inputs[0], 1);
}

/* out[0] = the number of non-zero elements of mask, out[1:1 + count] their flat positions. */
int cprim_nonzero(const DLArrayKernelCall* call, void* data) {
  const DLArray* mask = call->inputs[0];
  const int dt = DT(mask);
  const int64_t n = cprim_numel(mask);
  int64_t* out = (int64_t*)cprim_ptr(call->outputs[0]);
  int64_t i, count = 0;
  (void)data;
  for (i = 0; i < n; ++i) {
    if (cprim_truthy(cprim_load(cprim_ptr(mask), i, dt))) out[1 + count++] = i;
  }
  out[0] = count;
  return 0;
}

/* The order argsort sorts by: ascending with NaN last, or descending with NaN first; ties keep
 * their positions (the merge sort below is stable). */
typedef struct {
  const char* row;
  int dt;
  int descending;
} SortKey;

/* Whether element i must come before element j (strictly). */
static int Before(const SortKey* key, int64_t i, int64_t j) {
  const Value a = cprim_load(key->row, i, key->dt), b = cprim_load(key->row, j, key->dt);
  const int a_nan = cprim_is_nan(a), b_nan = cprim_is_nan(b);
  int unordered, order;
  if (a_nan || b_nan) return key->descending ? a_nan && !b_nan : b_nan && !a_nan;
  order = cprim_order(a, b, &unordered);
  return key->descending ? order > 0 : order < 0;
}

static void MergeSort(const SortKey* key, int64_t* v, int64_t* tmp, int64_t n) {
  int64_t half = n / 2, i = 0, j, k = 0;
  if (n < 2) return;
  MergeSort(key, v, tmp, half);
  MergeSort(key, v + half, tmp, n - half);
  j = half;
  while (i < half && j < n) tmp[k++] = Before(key, v[j], v[i]) ? v[j++] : v[i++];
  while (i < half) tmp[k++] = v[i++];
  while (j < n) tmp[k++] = v[j++];
  memcpy(v, tmp, (size_t)n * sizeof *v);
}

/* out (rows, n) int64: for each row of x (rows, n), the stable order that sorts it. */
int cprim_argsort(const DLArrayKernelCall* call, void* data) {
  const DLArray* x = call->inputs[0];
  const int64_t rows = x->shape[0], n = x->shape[1];
  int64_t* out = (int64_t*)cprim_ptr(call->outputs[0]);
  int64_t* tmp;
  int64_t r, i;
  SortKey key;
  (void)data;
  if (n == 0) return 0;
  tmp = (int64_t*)malloc((size_t)n * sizeof *tmp);
  if (tmp == NULL) return cprim_fail(kDLArrayErrMemory, "argsort: out of memory");
  key.dt = DT(x);
  key.descending = call->attrs[0] != 0;
  for (r = 0; r < rows; ++r) {
    int64_t* order = out + r * n;
    key.row = cprim_ptr(x) + r * n * cprim_item(x);
    for (i = 0; i < n; ++i) order[i] = i;
    MergeSort(&key, order, tmp, n);
  }
  free(tmp);
  return 0;
}
