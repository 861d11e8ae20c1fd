// An op plugin that declares ops with the schema fields of ABI 3.0 (positional order, attribute
// types and defaults, dtype rule, strided operands, fill of empty inputs). SCHEMA3_CASE picks a
// bad declaration instead, which the loader must refuse with a message naming the problem.
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "dlarray/plugin_api.h"

namespace {

// y = x * factor (+ 1 when shift), float32; x may be a strided 1-D view, y is compact.
int Scale(const DLArrayKernelCall* c, void*) {
  const DLArray* x = c->inputs[0];
  DLArray* out = c->outputs[0];
  int64_t n = 1;
  for (int d = 0; d < x->ndim; ++d) n *= x->shape[d];
  const float* in =
      reinterpret_cast<const float*>(static_cast<const char*>(x->data) + x->byte_offset);
  float* o = reinterpret_cast<float*>(static_cast<char*>(out->data) + out->byte_offset);
  const int64_t step = x->strides != nullptr && x->ndim == 1 ? x->strides[0] : 1;
  const float add = c->attrs[1] != 0.0 ? 1.0f : 0.0f;
  for (int64_t i = 0; i < n; ++i) o[i] = in[i * step] * static_cast<float>(c->attrs[0]) + add;
  return 0;
}

int Register(const DLArrayCoreApi* core, DLArrayRegistry* registry) {
  const char* env = std::getenv("SCHEMA3_CASE");
  const int bad = env != nullptr ? std::atoi(env) : 0;
  static const char* const kInputs[] = {"x"};
  static const char* const kAttrs[] = {"factor", "shift"};
  static const char* const kOutputs[] = {"y"};
  const char* order[] = {"x", "y", "factor", "shift"};
  int32_t types[] = {kDLArrayAttrFloat, kDLArrayAttrBool};
  double defaults[] = {2.0, 0.0};
  DLArrayOpSchema s{};
  s.struct_size = sizeof(DLArrayOpSchema);
  s.name = "schema3_scale";
  s.doc = "y = x * factor + shift";
  s.attr_names = kAttrs;
  s.input_names = kInputs;
  s.output_names = kOutputs;
  s.num_inputs = 1;
  s.num_outputs = 1;
  s.num_attrs = 2;
  s.allow_inplace = 1;
  s.call_order = order;
  s.attr_types = types;
  s.attr_defaults = defaults;
  s.accepts_strided = 1;
  s.fills_when_empty = 1;
  s.empty_fill = -1.0;
  if (bad == 1) order[1] = "nope";           // a name the op does not have
  if (bad == 2) order[1] = "x";              // a name twice
  if (bad == 3) defaults[0] = std::nan("");  // factor required after the optional y
  if (bad == 4) types[1] = 7;                // no such attribute type
  if (bad == 5) s.dtype_rule = 9;            // no such dtype rule
  if (bad == 6) {                            // a fixed output dtype that arrays cannot have
    s.dtype_rule = kDLArrayOutputsFixed;
    s.output_dtype = DLArrayDType{kDLArrayFloat, 12, 1};
  }
  if (core->declare_op(registry, &s) != 0) return -1;
  return core->register_kernel(registry, "schema3_scale", kDLArrayCPU, &Scale, nullptr);
}

const DLArrayPluginDescriptor kDescriptor = {DLARRAY_PLUGIN_ABI_MAJOR,
                                             DLARRAY_PLUGIN_ABI_MINOR,
                                             sizeof(DLArrayPluginDescriptor),
                                             "schema3",
                                             "1.0",
                                             0,
                                             0,
                                             nullptr,
                                             &Register};

}  // namespace

DLARRAY_PLUGIN_ENTRY { return &kDescriptor; }
