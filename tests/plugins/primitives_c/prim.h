/* The "cprim" test backend: a device type served by plain C (C99) against the SDK's C headers,
 * with kernels for the primitives only (docs/tutorials/writing-a-backend.md, "A backend of
 * primitives only"). Everything else dlarray offers on it is composed in Python from these.
 * Speed is not the point: kernels are plain loops, most of them over a generic element value. */
#ifndef DLARRAY_TESTS_PRIMITIVES_C_PRIM_H_
#define DLARRAY_TESTS_PRIMITIVES_C_PRIM_H_

#include <stdint.h>

#include "dlarray/plugin_api.h"

/* The device type, DLPack's kDLExtDev (reserved for trying out devices), and the plugin's name,
 * which Python uses as the device's name: dlarray.device("cprim:0"),
 * DLARRAY_DEFAULT_DEVICE=cprim:0. */
#define CPRIM_DEVICE_TYPE 12
#define CPRIM_NAME "cprim"

extern const DLArrayCoreApi* cprim_core;

/* The dtypes, as indices into per-dtype tables. */
enum {
  DT_BOOL,
  DT_I8,
  DT_I16,
  DT_I32,
  DT_I64,
  DT_U8,
  DT_U16,
  DT_U32,
  DT_U64,
  DT_F16,
  DT_BF16,
  DT_F32,
  DT_F64,
  DT_C64,
  DT_C128,
  DT_COUNT
};
/* The index of t, or -1 for a dtype this backend does not know. */
int cprim_dtype_index(DLArrayDType t);

/* Fails the current call: records the message (formatted as printf does) and returns -1. */
int cprim_fail(int kind, const char* format, ...);

int64_t cprim_numel(const DLArray* a);
/* The address of element 0 of a (host memory: data + byte_offset). */
char* cprim_ptr(const DLArray* a);
/* Bytes per element. */
int cprim_item(const DLArray* a);

/* The 16-bit floats, as NumPy and ml_dtypes convert them (round to nearest even). */
float cprim_half_to_float(uint16_t h);
uint16_t cprim_half_from_double(double v);
float cprim_bf16_to_float(uint16_t h);
uint16_t cprim_bf16_from_float(float v);

/* Any element as one value: signed (bool too), unsigned, real or complex. The conversions
 * between them are NumPy's casts (floats to integers truncate, saturating, NaN 0; complex to
 * real keeps the real part; anything to bool is != 0), as the CPU backend makes them. */
typedef enum { V_INT, V_UINT, V_REAL, V_COMPLEX } ValueClass;
typedef struct {
  ValueClass cls;
  int64_t i;
  uint64_t u;
  double re, im;
} Value;
Value cprim_load(const char* base, int64_t index, int dt);
void cprim_store(char* base, int64_t index, int dt, Value v);
Value cprim_real(double v);
/* NaN or a complex with a NaN part. */
int cprim_is_nan(Value v);
/* v != 0. */
int cprim_truthy(Value v);
/* -1, 0 or 1 ordering a and b of one class (complex: by real part, then imaginary); NaN is
 * neither less nor greater: *unordered is set instead. */
int cprim_order(Value a, Value b, int* unordered);

/* The kernels (the signature of DLArrayKernelFn). */
/* clang-format off */
#define CPRIM_KERNELS(K)                                                                   \
  K(copy) K(astype) K(broadcast_to) K(array_set) K(where) K(compare) K(compare_by_const) \
  K(reduce) K(scan) K(matrix_multiply) K(gather) K(scatter) K(nonzero) K(argsort)
/* clang-format on */
#define CPRIM_DECLARE(name) int cprim_##name(const DLArrayKernelCall* call, void* data);
CPRIM_KERNELS(CPRIM_DECLARE)
#undef CPRIM_DECLARE

/* Registers the kernels of every op of dlarray/elementwise_table.h (elementwise.c). */
int cprim_register_elementwise(const DLArrayCoreApi* core, DLArrayRegistry* registry);

#endif /* DLARRAY_TESTS_PRIMITIVES_C_PRIM_H_ */
