// sigmoid_ops.so: declares two ops the core does not know and registers their CPU kernels.
#include <cmath>
#include <cstdint>

#include "dlarray/plugin.h"

namespace {

const float* In(const dlarray::KernelContext& c, int i) {
  return reinterpret_cast<const float*>(static_cast<const char*>(c.inputs[i]->data) +
                                        c.inputs[i]->byte_offset);
}
float* Out(const dlarray::KernelContext& c) {
  return reinterpret_cast<float*>(static_cast<char*>(c.outputs[0]->data) +
                                  c.outputs[0]->byte_offset);
}

// y = 1 / (1 + exp(-x))
void Sigmoid(const dlarray::KernelContext& c) {
  const float* x = In(c, 0);
  float* y = Out(c);
  const int64_t n = dlarray::NumElements(c.outputs[0]);
  for (int64_t i = 0; i < n; ++i) y[i] = 1.0f / (1.0f + std::exp(-x[i]));
}

// dx = grad * y * (1 - y), from the forward output y.
void SigmoidGradient(const dlarray::KernelContext& c) {
  const float* y = In(c, 0);
  const float* g = In(c, 1);
  float* dx = Out(c);
  const int64_t n = dlarray::NumElements(c.outputs[0]);
  for (int64_t i = 0; i < n; ++i) dx[i] = g[i] * y[i] * (1.0f - y[i]);
}

void RegisterKernels(dlarray::Registry* r) {
  dlarray::OpSchema sigmoid;
  sigmoid.name = "sigmoid";
  sigmoid.num_inputs = 1;
  sigmoid.doc = "out = 1 / (1 + exp(-in))";
  r->declare_op(sigmoid);
  dlarray::OpSchema grad;
  grad.name = "sigmoid_gradient";
  grad.num_inputs = 2;
  grad.doc = "out = grad * y * (1 - y), y the sigmoid output";
  r->declare_op(grad);
  r->register_kernel("sigmoid", kDLArrayCPU, &Sigmoid);
  r->register_kernel("sigmoid_gradient", kDLArrayCPU, &SigmoidGradient);
}

}  // namespace

DLARRAY_DEFINE_PLUGIN("sigmoid_ops", 0, nullptr, &RegisterKernels)
