// leaky_relu_ops.so: declares leaky_relu(x, slope) with its gradient, and registers CPU kernels
// and, when built with nvcc, CUDA kernels, and with OpenCL, OpenCL kernels. dlarray then offers
// dlarray.ops.leaky_relu and, in dlarray.autodiff graphs, ops.leaky_relu(x, slope=0.1),
// differentiated by leaky_relu_gradient.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "dlarray/plugin.h"
#include "leaky_relu.h"

namespace {

bool SameShape(const DLArray* a, const DLArray* b) {
  return a->ndim == b->ndim && std::equal(a->shape, a->shape + a->ndim, b->shape);
}

// The slope must be a finite number in [0, 1), and every operand of one shape: checked by the core
// before any kernel runs.
void ValidateSlope(const dlarray::OpCall& call) {
  const double slope = call.attrs[0];
  if (!std::isfinite(slope) || slope < 0.0 || slope >= 1.0) {
    throw dlarray::Error(
        dlarray::ErrorKind::kValue,
        std::string(call.op_name) + ": slope must be in [0, 1), got " + std::to_string(slope));
  }
  for (int i = 1; i < call.num_inputs; ++i) {
    if (!SameShape(call.inputs[i], call.inputs[0]))
      throw dlarray::ShapeError(std::string(call.op_name) + ": inputs differ in shape");
  }
  if (!SameShape(call.outputs[0], call.inputs[0])) {
    throw dlarray::ShapeError(std::string(call.op_name) + ": the output " +
                              dlarray::ShapeToString(call.outputs[0]) + " differs from x " +
                              dlarray::ShapeToString(call.inputs[0]));
  }
}

// Output shaped like x (declared because the op has its own validate function).
dlarray::Shapes SameAsX(const dlarray::Shapes& inputs, const std::vector<double>&) {
  return {inputs[0]};
}

void Register(dlarray::Registry* r) {
  using dlarray::GradArg;
  dlarray::OpSchema op;
  op.name = "leaky_relu";
  op.doc = "y = x if x > 0 else slope * x";
  op.input_names = {"x"};
  op.attr_names = {"slope"};
  op.output_names = {"y"};
  op.validate = &ValidateSlope;
  op.infer_shape = &SameAsX;
  op.gradients = {{0, "leaky_relu_gradient", {GradArg::Input(0), GradArg::OutputGrad(0)}}};
  r->declare_op(op);

  dlarray::OpSchema grad;
  grad.name = "leaky_relu_gradient";
  grad.doc = "dx = dy if x > 0 else slope * dy";
  grad.num_inputs = 2;
  grad.input_names = {"x", "dy"};
  grad.attr_names = {"slope"};  // taken by name from leaky_relu's attributes
  grad.output_names = {"dx"};
  grad.validate = &ValidateSlope;
  grad.infer_shape = &SameAsX;
  r->declare_op(grad);

  r->register_kernel("leaky_relu", kDLArrayCPU, &LeakyReluCpu);
  r->register_kernel("leaky_relu_gradient", kDLArrayCPU, &LeakyReluGradientCpu);
#ifdef WITH_CUDA_KERNELS
  r->register_kernel("leaky_relu", kDLArrayCUDA, &LeakyReluCuda);
  r->register_kernel("leaky_relu_gradient", kDLArrayCUDA, &LeakyReluGradientCuda);
#endif
#ifdef WITH_OPENCL_KERNELS
  r->register_kernel("leaky_relu", kDLArrayOpenCL, &LeakyReluOpencl);
  r->register_kernel("leaky_relu_gradient", kDLArrayOpenCL, &LeakyReluGradientOpencl);
#endif
}

}  // namespace

DLARRAY_DEFINE_PLUGIN("leaky_relu_ops", 0, nullptr, &Register)
