// libcxx_row_sum: out[i] = scale * sum(x[i, :]), an op with its own shape rule and shape inference,
// written with std::string, std::vector and exceptions of libc++ (the test builds it with clang++
// -stdlib=libc++). Error paths: a bad shape (ShapeError from validate), scale NaN (a std::exception
// from the kernel), scale -1 (an exception that is not a std::exception at all).
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "dlarray/plugin.h"

namespace {

void Validate(const dlarray::OpCall& call) {
  const DLArray* x = call.inputs[0];
  const DLArray* out = call.outputs[0];
  if (x->ndim != 2 || out->ndim != 1 || out->shape[0] != x->shape[0]) {
    throw dlarray::ShapeError(
        std::string(call.op_name) + ": x must be 2-D and out its rows, got x " +
        dlarray::ShapeToString(x) + " and out " + dlarray::ShapeToString(out));
  }
}

dlarray::Shapes Infer(const dlarray::Shapes& inputs, const std::vector<double>&) {
  if (inputs[0].size() != 2) {
    throw dlarray::ShapeError("libcxx_row_sum: x must be 2-D, got " +
                              std::to_string(inputs[0].size()) + " dimensions");
  }
  return {{inputs[0][0]}};
}

void RowSum(const dlarray::KernelContext& ctx) {
  const double scale = ctx.attrs[0];
  if (std::isnan(scale)) throw std::invalid_argument("libcxx_row_sum: scale is NaN (libc++)");
  if (scale == -1.0) throw 42;  // not a std::exception: the SDK layer must still report it
  const DLArray* x = ctx.inputs[0];
  const float* in =
      reinterpret_cast<const float*>(static_cast<const char*>(x->data) + x->byte_offset);
  float* out = dlarray::Data<float>(ctx.outputs[0]);
  const int64_t rows = x->shape[0], cols = x->shape[1];
  std::vector<double> row(static_cast<size_t>(cols));
  for (int64_t i = 0; i < rows; ++i) {
    row.assign(in + i * cols, in + (i + 1) * cols);
    out[i] = static_cast<float>(scale * std::accumulate(row.begin(), row.end(), 0.0));
  }
}

void Register(dlarray::Registry* r) {
  dlarray::OpSchema s;
  s.name = "libcxx_row_sum";
  s.doc = "out = scale * x.sum(axis=1) (a plugin built with clang++ and libc++)";
  s.input_names = {"x"};
  s.attr_names = {"scale"};
  s.output_names = {"out"};
  s.validate = &Validate;
  s.infer_shape = &Infer;
  s.allow_inplace = false;
  r->declare_op(s);
  r->register_kernel("libcxx_row_sum", kDLArrayCPU, &RowSum);
}

}  // namespace

DLARRAY_DEFINE_PLUGIN("libcxx_plugin", 0, nullptr, &Register)
