// sigmoid_ops.so: the reference op plugin. It declares two ops the core does not know, sigmoid and
// sigmoid_gradient, says how sigmoid is differentiated (so dlarray.autodiff trains through it with
// no Python code), and registers CPU kernels and, when built with nvcc, CUDA kernels. Built
// against the SDK only, with dlarray_add_plugin: a third party would write it the same way.
#include "dlarray/plugin.h"
#include "sigmoid_kernels.h"

namespace {

void RegisterKernels(dlarray::Registry* r) {
  using dlarray::GradArg;
  dlarray::OpSchema sigmoid;
  sigmoid.name = "sigmoid";
  sigmoid.doc = "y = 1 / (1 + exp(-x)), elementwise";
  sigmoid.input_names = {"x"};
  sigmoid.output_names = {"y"};
  // dL/dx = sigmoid_gradient(y, dL/dy): from the output, not the input.
  sigmoid.gradients = {{0, "sigmoid_gradient", {GradArg::Output(0), GradArg::OutputGrad(0)}}};
  r->declare_op(sigmoid);

  dlarray::OpSchema grad;
  grad.name = "sigmoid_gradient";
  grad.num_inputs = 2;
  grad.doc = "dx = dy * y * (1 - y), with y the output of sigmoid";
  grad.input_names = {"y", "dy"};
  grad.output_names = {"dx"};
  r->declare_op(grad);

  r->register_kernel("sigmoid", kDLArrayCPU, &sigmoid::SigmoidCpu);
  r->register_kernel("sigmoid_gradient", kDLArrayCPU, &sigmoid::SigmoidGradientCpu);
#ifdef DLARRAY_SIGMOID_CUDA
  r->register_kernel("sigmoid", kDLArrayCUDA, &sigmoid::SigmoidCuda);
  r->register_kernel("sigmoid_gradient", kDLArrayCUDA, &sigmoid::SigmoidGradientCuda);
#endif
}

}  // namespace

DLARRAY_DEFINE_PLUGIN("sigmoid_ops", 0, nullptr, &RegisterKernels)
