/* The reductions (reduce), the scans (scan) and matrix_multiply, over prim.h's generic values:
 * sums and products accumulate in uint64_t for integers and bool (wrapping), in double for the
 * floats and in double complex for the complex dtypes, as dlarray/reduce_kinds.h says. */
#include <string.h>

#include "prim.h"

#define DT(a) cprim_dtype_index((a)->dtype)

enum { K_SUM, K_PROD, K_MIN, K_MAX, K_ANY, K_ALL, K_ARGMIN, K_ARGMAX };

/* A running sum or product. */
typedef struct {
  uint64_t u;
  double re, im;
} Acc;

static void AccStart(Acc* a, int prod) {
  a->u = prod ? 1u : 0u;
  a->re = prod ? 1.0 : 0.0;
  a->im = 0.0;
}

static void AccAdd(Acc* a, Value v, int prod) {
  switch (v.cls) {
    case V_INT:
    case V_UINT: {
      const uint64_t x = v.cls == V_INT ? (uint64_t)v.i : v.u;
      a->u = prod ? a->u * x : a->u + x;
      return;
    }
    default:
      if (!prod) {
        a->re += v.re;
        a->im += v.im;
      } else {
        const double re = a->re * v.re - a->im * v.im;
        a->im = a->re * v.im + a->im * v.re;
        a->re = re;
      }
  }
}

static Value AccValue(const Acc* a, ValueClass cls) {
  Value v = cprim_real(a->re);
  v.cls = cls;
  v.im = a->im;
  v.i = (int64_t)a->u;
  v.u = a->u;
  return v;
}

/* x [outer, n, inner] (or [outer, n]) reduced along n, n >= 1 (the core's Python side answers
 * empty reductions). min / max: NaN propagates; argmin / argmax: the first index of the best, the
 * first NaN winning. */
int cprim_reduce(const DLArrayKernelCall* call, void* data) {
  const DLArray* in = call->inputs[0];
  const DLArray* out = call->outputs[0];
  const int kind = (int)call->attrs[0], dt = DT(in), out_dt = DT(out);
  const int64_t outer = in->shape[0], n = in->shape[1], inner = in->ndim > 2 ? in->shape[2] : 1;
  const char* x = cprim_ptr(in);
  char* y = cprim_ptr(out);
  int64_t o, j, r;
  (void)data;
  for (o = 0; o < outer; ++o) {
    for (j = 0; j < inner; ++j) {
      const int64_t base = o * n * inner + j;
      Value best = cprim_load(x, base, dt), result;
      int64_t best_index = 0;
      int truth = kind == K_ALL;
      Acc acc;
      AccStart(&acc, kind == K_PROD);
      for (r = 0; r < n; ++r) {
        const Value v = cprim_load(x, base + r * inner, dt);
        int unordered, order;
        switch (kind) {
          case K_SUM:
          case K_PROD:
            AccAdd(&acc, v, kind == K_PROD);
            break;
          case K_ANY:
            truth = truth || cprim_truthy(v);
            break;
          case K_ALL:
            truth = truth && cprim_truthy(v);
            break;
          default: /* min, max and their arg forms: keep the first NaN, else the best value */
            if (cprim_is_nan(best)) break;
            order = cprim_order(v, best, &unordered);
            if (unordered || ((kind == K_MIN || kind == K_ARGMIN) ? order < 0 : order > 0)) {
              best = v;
              best_index = r;
            }
        }
      }
      switch (kind) {
        case K_SUM:
        case K_PROD:
          result = AccValue(&acc, best.cls);
          break;
        case K_ANY:
        case K_ALL:
          result = cprim_real(truth);
          break;
        case K_ARGMIN:
        case K_ARGMAX:
          result = cprim_real(0);
          result.cls = V_INT;
          result.i = best_index;
          break;
        default:
          result = best;
      }
      cprim_store(y, o * inner + j, out_dt, result);
    }
  }
  return 0;
}

/* out[o, r, j] = sum (kind 0) or product (1) of x[o, :r + 1, j]; include_initial: one more row
 * first, the identity. */
int cprim_scan(const DLArrayKernelCall* call, void* data) {
  const DLArray* in = call->inputs[0];
  const DLArray* out = call->outputs[0];
  const int prod = (int)call->attrs[0] == 1, initial = call->attrs[1] != 0, dt = DT(in);
  const int64_t outer = in->shape[0], n = in->shape[1], inner = in->ndim > 2 ? in->shape[2] : 1;
  const int64_t rows = n + (initial ? 1 : 0);
  const char* x = cprim_ptr(in);
  char* y = cprim_ptr(out);
  const ValueClass cls = cprim_load(x, 0, dt).cls;
  int64_t o, j, r;
  (void)data;
  for (o = 0; o < outer; ++o) {
    for (j = 0; j < inner; ++j) {
      Acc acc;
      AccStart(&acc, prod);
      if (initial) cprim_store(y, o * rows * inner + j, dt, AccValue(&acc, cls));
      for (r = 0; r < n; ++r) {
        AccAdd(&acc, cprim_load(x, (o * n + r) * inner + j, dt), prod);
        cprim_store(y, (o * rows + r + (initial ? 1 : 0)) * inner + j, dt, AccValue(&acc, cls));
      }
    }
  }
  return 0;
}

/* out (m, n) = op(a) @ op(b), op transposing when trans_a / trans_b; accumulated in double. */
int cprim_matrix_multiply(const DLArrayKernelCall* call, void* data) {
  const DLArray* a = call->inputs[0];
  const DLArray* b = call->inputs[1];
  const DLArray* c = call->outputs[0];
  const int ta = call->attrs[0] != 0, tb = call->attrs[1] != 0, dt = DT(c);
  const int64_t m = c->shape[0], n = c->shape[1], k = a->shape[ta ? 0 : 1];
  int64_t i, j, p;
  (void)data;
  for (i = 0; i < m; ++i) {
    for (j = 0; j < n; ++j) {
      double sum = 0;
      for (p = 0; p < k; ++p)
        sum += cprim_load(cprim_ptr(a), ta ? p * m + i : i * k + p, dt).re *
               cprim_load(cprim_ptr(b), tb ? j * k + p : p * n + j, dt).re;
      cprim_store(cprim_ptr(c), i * n + j, dt, cprim_real(sum));
    }
  }
  return 0;
}
