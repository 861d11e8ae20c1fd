// OpenCL kernels for arrays of an OpenCL backend (opencl_backend.so, or any backend offering the
// "dlarray.opencl.v2" extension): the extension checks the arrays' buffers and offsets and gives
// the device's context and in-order queue; this plugin builds its own program once per context.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "dlarray/ext/opencl.h"
#include "leaky_relu.h"

namespace {

const char* const kSource = R"CLC(
__kernel void forward(__global const float* x, ulong xo, __global float* y, ulong yo, float slope,
                      ulong n) {
  const ulong i = get_global_id(0);
  if (i < n) y[yo + i] = x[xo + i] > 0.0f ? x[xo + i] : slope * x[xo + i];
}
__kernel void backward(__global const float* x, ulong xo, __global const float* dy, ulong dyo,
                       __global float* dx, ulong dxo, float slope, ulong n) {
  const ulong i = get_global_id(0);
  if (i < n) dx[dxo + i] = x[xo + i] > 0.0f ? dy[dyo + i] : slope * dy[dyo + i];
}
)CLC";

void Check(cl_int err, const char* what) {
  if (err != CL_SUCCESS) {
    throw dlarray::BackendError(std::string("leaky_relu (OpenCL): ") + what +
                                " failed: " + std::to_string(err));
  }
}

const DLArrayOpenclExtV2* Extension(const dlarray::KernelContext& ctx) {
  const DLArrayDeviceApi* dev = ctx.call->device;
  const void* table = nullptr;
  if (!DLARRAY_STRUCT_HAS(dev, DLArrayDeviceApi, get_extension) || dev->get_extension == nullptr ||
      dev->get_extension(dev->self, DLARRAY_EXT_OPENCL_V2, &table) != 0 || table == nullptr) {
    throw dlarray::BackendError("leaky_relu: the arrays' device offers no dlarray.opencl.v2");
  }
  return static_cast<const DLArrayOpenclExtV2*>(table);
}

// The kernels of one context, built at first use; clSetKernelArg + enqueue under the lock.
struct Kernels {
  cl_kernel forward = nullptr;
  cl_kernel backward = nullptr;
};
std::mutex g_mu;
std::map<cl_context, Kernels> g_kernels;

Kernels& KernelsFor(cl_context context, cl_device_id device) {
  Kernels& k = g_kernels[context];
  if (k.forward != nullptr) return k;
  cl_int err = CL_SUCCESS;
  const char* source = kSource;
  cl_program program = clCreateProgramWithSource(context, 1, &source, nullptr, &err);
  Check(err, "clCreateProgramWithSource");
  Check(clBuildProgram(program, 1, &device, "", nullptr, nullptr), "clBuildProgram");
  k.forward = clCreateKernel(program, "forward", &err);
  Check(err, "clCreateKernel(forward)");
  k.backward = clCreateKernel(program, "backward", &err);
  Check(err, "clCreateKernel(backward)");
  return k;
}

// Sets an array argument: its buffer, then its offset in floats.
void SetArray(cl_kernel k, cl_uint& index, const DLArrayOpenclExtV2* ext, int device_id,
              const DLArray* a) {
  void* mem = nullptr;
  uint64_t offset = 0;
  const uint64_t nbytes = static_cast<uint64_t>(dlarray::NumElements(a)) * sizeof(float);
  if (ext->resolve(ext->self, device_id, a->data, a->byte_offset, nbytes, &mem, &offset) != 0) {
    throw dlarray::CoreCallFailed();  // the backend recorded why
  }
  cl_mem m = static_cast<cl_mem>(mem);
  const cl_ulong elements = offset / sizeof(float);
  Check(clSetKernelArg(k, index++, sizeof(m), &m), "clSetKernelArg");
  Check(clSetKernelArg(k, index++, sizeof(elements), &elements), "clSetKernelArg");
}

void Run(const dlarray::KernelContext& ctx, bool forward) {
  const DLArrayOpenclExtV2* ext = Extension(ctx);
  void *context = nullptr, *queue = nullptr, *device = nullptr;
  if (ext->objects(ext->self, ctx.device_id, &context, &queue, &device) != 0) {
    throw dlarray::CoreCallFailed();
  }
  std::lock_guard<std::mutex> lock(g_mu);
  Kernels& ks = KernelsFor(static_cast<cl_context>(context), static_cast<cl_device_id>(device));
  cl_kernel k = forward ? ks.forward : ks.backward;
  cl_uint index = 0;
  for (int i = 0; i < ctx.num_inputs; ++i) SetArray(k, index, ext, ctx.device_id, ctx.inputs[i]);
  SetArray(k, index, ext, ctx.device_id, ctx.outputs[0]);
  const cl_float slope = static_cast<cl_float>(ctx.attrs[0]);
  const cl_ulong n = static_cast<cl_ulong>(dlarray::NumElements(ctx.outputs[0]));
  Check(clSetKernelArg(k, index++, sizeof(slope), &slope), "clSetKernelArg");
  Check(clSetKernelArg(k, index++, sizeof(n), &n), "clSetKernelArg");
  const size_t local = 64;
  const size_t global = (n + local - 1) / local * local;
  Check(clEnqueueNDRangeKernel(static_cast<cl_command_queue>(queue), k, 1, nullptr, &global, &local,
                               0, nullptr, nullptr),
        "clEnqueueNDRangeKernel");
}

}  // namespace

void LeakyReluOpencl(const dlarray::KernelContext& ctx) { Run(ctx, true); }
void LeakyReluGradientOpencl(const dlarray::KernelContext& ctx) { Run(ctx, false); }
