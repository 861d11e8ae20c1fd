/* An op plugin in plain C (C11), built at run time by dlarray.cpp_extension.load:
 *
 *     ext = dlarray.cpp_extension.load("axpby_c", ["examples/custom_op_c/axpby.c"])
 *     out = ext.axpby(x, y, alpha=2.0, beta=-1.0)     # out = alpha * x + beta * y
 *
 * It includes only the plain-C plugin ABI (dlarray/plugin_api.h), declares one op for float32 and
 * float64 and registers its CPU kernel. The core checks counts, dtypes, devices and (with no
 * validate function) that every operand has one shape before the kernel runs. */
#include <string.h>

#include "dlarray/plugin_api.h"

static const DLArrayCoreApi* core;

static int64_t Numel(const DLArray* a) {
  int64_t n = 1;
  for (int i = 0; i < a->ndim; ++i) n *= a->shape[i];
  return n;
}

/* The operands are compact (the schema does not accept strided inputs); byte_offset still counts.
 */
static void* Data(const DLArray* a) { return (char*)a->data + a->byte_offset; }

static int AxpbyKernel(const DLArrayKernelCall* call, void* data) {
  const double alpha = call->attrs[0], beta = call->attrs[1];
  const int64_t n = Numel(call->outputs[0]);
  (void)data;
  if (call->outputs[0]->dtype.bits == 64) {
    const double* x = Data(call->inputs[0]);
    const double* y = Data(call->inputs[1]);
    double* out = Data(call->outputs[0]);
    for (int64_t i = 0; i < n; ++i) out[i] = alpha * x[i] + beta * y[i];
  } else {
    const float* x = Data(call->inputs[0]);
    const float* y = Data(call->inputs[1]);
    float* out = Data(call->outputs[0]);
    const float a = (float)alpha, b = (float)beta;
    for (int64_t i = 0; i < n; ++i) out[i] = a * x[i] + b * y[i];
  }
  return 0;
}

static int RegisterKernels(const DLArrayCoreApi* api, DLArrayRegistry* registry) {
  static const char* const attrs[] = {"alpha", "beta"};
  static const char* const inputs[] = {"x", "y"};
  static const DLArrayDType dtypes[] = {{kDLArrayFloat, 32, 1}, {kDLArrayFloat, 64, 1}};
  DLArrayOpSchema schema;
  core = api;
  memset(&schema, 0, sizeof schema);
  schema.struct_size = sizeof schema;
  schema.name = "axpby";
  schema.doc = "out = alpha * x + beta * y (an op plugin written in C)";
  schema.attr_names = attrs;
  schema.input_names = inputs;
  schema.dtypes = dtypes;
  schema.num_dtypes = 2;
  schema.num_inputs = 2;
  schema.num_outputs = 1;
  schema.num_attrs = 2;
  schema.allow_inplace = 1;
  if (core->declare_op(registry, &schema) != 0) return -1;
  return core->register_kernel(registry, "axpby", kDLArrayCPU, AxpbyKernel, NULL);
}

DLARRAY_PLUGIN_ENTRY {
  static const DLArrayPluginDescriptor descriptor = {
      .abi_major = DLARRAY_PLUGIN_ABI_MAJOR,
      .abi_minor = DLARRAY_PLUGIN_ABI_MINOR,
      .struct_size = sizeof(DLArrayPluginDescriptor),
      .name = "axpby_c",
      .version = "1.0",
      .device_type = 0, /* adds ops only: no device, so no create_device */
      .register_kernels = RegisterKernels,
  };
  return &descriptor;
}
