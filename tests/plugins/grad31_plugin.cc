// An op plugin whose gradient declarations use ABI 3.1's DLArrayGradient.attrs and .when:
// grad31_scale (y = x * factor, + 1 when shift) is differentiated by itself with shift set to 0,
// once per value of shift. GRAD31_CASE picks a bad declaration instead, which the loader must
// refuse with a message naming the problem.
#include <cstdlib>

#include "dlarray/plugin_api.h"

namespace {

// y = x * factor (+ 1 when shift), float32, compact.
int Scale(const DLArrayKernelCall* c, void*) {
  const DLArray* x = c->inputs[0];
  DLArray* out = c->outputs[0];
  int64_t n = 1;
  for (int d = 0; d < x->ndim; ++d) n *= x->shape[d];
  const float* in =
      reinterpret_cast<const float*>(static_cast<const char*>(x->data) + x->byte_offset);
  float* o = reinterpret_cast<float*>(static_cast<char*>(out->data) + out->byte_offset);
  const float add = c->attrs[1] != 0.0 ? 1.0f : 0.0f;
  for (int64_t i = 0; i < n; ++i) o[i] = in[i] * static_cast<float>(c->attrs[0]) + add;
  return 0;
}

int Register(const DLArrayCoreApi* core, DLArrayRegistry* registry) {
  const char* env = std::getenv("GRAD31_CASE");
  const int bad = env != nullptr ? std::atoi(env) : 0;
  static const char* const kInputs[] = {"x"};
  static const char* const kAttrs[] = {"factor", "shift"};
  static const char* const kOutputs[] = {"y"};
  static const DLArrayGradArg kArgs[] = {{kDLArrayGradOutputGrad, 0}};
  int32_t types[] = {kDLArrayAttrFloat, kDLArrayAttrBool};
  DLArrayGradient grads[2] = {
      {sizeof(DLArrayGradient), "grad31_scale", kArgs, 0, 1, "shift=0", "!shift"},
      {sizeof(DLArrayGradient), "grad31_scale", kArgs, 0, 1, "shift=!shift factor=factor",
       "shift"}};
  if (bad == 1) grads[1].attrs = "shift=nope";  // no forward attribute of that name
  if (bad == 2) grads[1].attrs = "shift";       // not name=value
  if (bad == 3) grads[1].attrs = "shift=!0";    // '!' before a number
  if (bad == 4) grads[1].when = "nope";         // a condition on no attribute
  if (bad == 5) grads[1].when = nullptr;        // x declared twice, once without a condition
  if (bad == 6) grads[1].when = "!shift";       // x declared twice under one condition
  DLArrayOpSchema s{};
  s.struct_size = sizeof(DLArrayOpSchema);
  s.name = "grad31_scale";
  s.doc = "y = x * factor + shift";
  s.attr_names = kAttrs;
  s.input_names = kInputs;
  s.output_names = kOutputs;
  s.num_inputs = 1;
  s.num_outputs = 1;
  s.num_attrs = 2;
  s.allow_inplace = 1;
  s.attr_types = types;
  s.gradients = grads;
  s.num_gradients = 2;
  if (core->declare_op(registry, &s) != 0) return -1;
  return core->register_kernel(registry, "grad31_scale", kDLArrayCPU, &Scale, nullptr);
}

const DLArrayPluginDescriptor kDescriptor = {DLARRAY_PLUGIN_ABI_MAJOR,
                                             DLARRAY_PLUGIN_ABI_MINOR,
                                             sizeof(DLArrayPluginDescriptor),
                                             "grad31",
                                             "1.0",
                                             0,
                                             0,
                                             nullptr,
                                             &Register};

}  // namespace

DLARRAY_PLUGIN_ENTRY { return &kDescriptor; }
