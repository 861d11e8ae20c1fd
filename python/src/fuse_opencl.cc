// dlarray._core's side of dlarray.fuse on OpenCL devices: the objects of the "dlarray.opencl.v2"
// extension (dlarray/ext/opencl.h) as integers, so that the fusion package can build its generated
// OpenCL C with the device's own context and queue it on the device's in-order queue (through
// the OpenCL library, from Python) without a C++ compiler.
#include <pybind11/stl.h>

#include <string>

#include "binding.h"
#include "dlarray/ext/opencl.h"

namespace dlarray {
namespace {

const DLArrayOpenclExtV2* OpenclTable(const DLContext& ctx) {
  CheckDevice(ctx);  // a type in range with a usable plugin, else its reason
  const auto* t = static_cast<const DLArrayOpenclExtV2*>(
      DeviceExtension(ctx.device_type, DLARRAY_EXT_OPENCL_V2));
  if (t == nullptr || t->struct_size < sizeof(DLArrayOpenclExtV2)) {
    throw Error(ErrorKind::kValue, "dlarray.fuse: the plugin serving " + ContextToString(ctx) +
                                       " does not offer " DLARRAY_EXT_OPENCL_V2);
  }
  return t;
}

template <typename F>
void Call(const char* what, F&& f) {
  ClearPluginError();
  if (f() != 0) ThrowPluginError(std::string("dlarray.fuse: ") + what);
}

}  // namespace

void BindFuseOpencl(py::module_& m) {
  m.def(
      "_opencl_objects",
      [](const DLContext& ctx) {
        const DLArrayOpenclExtV2* t = OpenclTable(ctx);
        void *context = nullptr, *queue = nullptr, *device = nullptr;
        Call("objects",
             [&] { return t->objects(t->self, ctx.device_id, &context, &queue, &device); });
        return py::make_tuple(reinterpret_cast<uintptr_t>(context),
                              reinterpret_cast<uintptr_t>(queue),
                              reinterpret_cast<uintptr_t>(device));
      },
      py::arg("ctx"), "(cl_context, cl_command_queue, cl_device_id) of an OpenCL device, as ints.");
  m.def(
      "_opencl_buffer",
      [](const NDArray& a) {
        const DLArray* dl = a.dl();
        const DLArrayOpenclExtV2* t = OpenclTable(dl->ctx);
        void* mem = nullptr;
        uint64_t offset = 0;
        const uint64_t nbytes = static_cast<uint64_t>(NumElements(dl)) * DTypeBytes(dl->dtype);
        Call("resolve", [&] {
          return t->resolve(t->self, dl->ctx.device_id, dl->data, dl->byte_offset, nbytes, &mem,
                            &offset);
        });
        return py::make_tuple(reinterpret_cast<uintptr_t>(mem), offset);
      },
      py::arg("array"), "(cl_mem as an int, byte offset) of an OpenCL array's elements.");
}

}  // namespace dlarray
