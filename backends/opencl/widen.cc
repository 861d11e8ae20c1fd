/*!
 * \file widen.cc
 * \brief RunInFloat32 (see widen.h).
 */
#include "widen.h"

#include <memory>
#include <vector>

#include "kernels.h"
#include "launch.h"

namespace dlarray::opencl {
namespace {

// A float32 array of a's shape in a buffer of the device, freed with it.
class Twin {
 public:
  Twin(OpenclDevice& device, int id, const DLArray* a)
      : device_(device), id_(id), bytes_(static_cast<size_t>(NumElements(a)) * 4) {
    array_ = *a;
    array_.dtype = DLArrayDType{kDLArrayFloat, 32, 1};
    array_.strides = nullptr;
    array_.byte_offset = 0;
    array_.data = device_.allocate(id_, bytes_);
  }
  ~Twin() { device_.free(id_, array_.data, bytes_); }
  Twin(const Twin&) = delete;
  Twin& operator=(const Twin&) = delete;
  DLArray* get() { return &array_; }

 private:
  OpenclDevice& device_;
  int id_;
  size_t bytes_;
  DLArray array_{};
};

// astype from -> to with the call's device.
void Convert(const KernelContext& ctx, const DLArray* from, DLArray* to) {
  KernelContext c = ctx;
  const DLArray* in[1] = {from};
  DLArray* out[1] = {to};
  c.inputs = in;
  c.num_inputs = 1;
  c.outputs = out;
  c.num_outputs = 1;
  c.attrs = nullptr;
  c.num_attrs = 0;
  c.op_name = "astype";
  AstypeKernel(c);
}

}  // namespace

bool IsHalfType(const KernelContext& ctx) {
  const DLArray* a = ctx.num_inputs > 0 ? ctx.inputs[0] : ctx.outputs[0];
  const int kind = TypeKind(a->dtype);
  return kind == 1 || kind == 2;
}

void RunInFloat32(const KernelContext& ctx, KernelFn kernel) {
  OpenclDevice& device = DeviceOf(ctx);
  std::vector<std::unique_ptr<Twin>> twins;
  std::vector<const DLArray*> in;
  std::vector<DLArray*> out;
  for (int i = 0; i < ctx.num_inputs; ++i) {
    twins.push_back(std::make_unique<Twin>(device, ctx.device_id, ctx.inputs[i]));
    Convert(ctx, ctx.inputs[i], twins.back()->get());
    in.push_back(twins.back()->get());
  }
  for (int o = 0; o < ctx.num_outputs; ++o) {
    twins.push_back(std::make_unique<Twin>(device, ctx.device_id, ctx.outputs[o]));
    out.push_back(twins.back()->get());
  }
  KernelContext c = ctx;
  c.inputs = in.data();
  c.outputs = out.data();
  kernel(c);
  for (int o = 0; o < ctx.num_outputs; ++o) Convert(ctx, out[o], ctx.outputs[o]);
}

}  // namespace dlarray::opencl
