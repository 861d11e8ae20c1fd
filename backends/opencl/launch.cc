/*!
 * \file launch.cc
 * \brief Launch and the dtype helpers (see launch.h).
 */
#include "launch.h"

#include "cl_check.h"
#include "dlarray/errors.h"

namespace dlarray::opencl {

OpenclDevice& DeviceOf(const KernelContext& ctx) {
  if (ctx.device == nullptr || ctx.device_type != kDLOpenCL) {
    throw BackendError(std::string(ctx.op_name) +
                       ": the OpenCL kernel was called for arrays that are not on an OpenCL "
                       "device of this plugin");
  }
  return *static_cast<OpenclDevice*>(ctx.device);
}

std::string ClTypeName(DLArrayDType t, const DeviceInfo& info) {
  if (t.lanes == 1) {
    if (t.code == kDLArrayFloat && t.bits == 32) return "float";
    if (t.code == kDLArrayFloat && t.bits == 64) {
      if (info.fp64) return "double";
      throw DTypeError("float64 arrays need an OpenCL device with cl_khr_fp64; " + info.name +
                       " has none");
    }
    if (t.code == kDLArrayInt || t.code == kDLArrayUInt) {
      const bool u = t.code == kDLArrayUInt;
      switch (t.bits) {
        case 8:
          return u ? "uchar" : "char";
        case 16:
          return u ? "ushort" : "short";
        case 32:
          return u ? "uint" : "int";
        case 64:
          return u ? "ulong" : "long";
        default:
          break;
      }
    }
  }
  const char* code = t.code == kDLArrayInt     ? "int"
                     : t.code == kDLArrayUInt  ? "uint"
                     : t.code == kDLArrayFloat ? "float"
                                               : "type";
  throw DTypeError(std::string("the OpenCL backend has no kernels for ") + code +
                   std::to_string(t.bits) + (t.lanes != 1 ? "x" + std::to_string(t.lanes) : ""));
}

int VectorWidth(const DeviceInfo& info) { return info.is_cpu ? 16 : 4; }

std::string BuildOptions(DLArrayDType dtype, const DeviceInfo& info, const std::string& extra) {
  std::string o = "-DT=" + ClTypeName(dtype, info) + " -DVW=" + std::to_string(VectorWidth(info));
  if (dtype.code == kDLArrayFloat) o += " -DT_IS_FLOAT";
  if (info.fp64) o += " -DDLARRAY_FP64";
  if (info.is_cpu) o += " -DDLARRAY_CPU";
  if (!extra.empty()) o += " " + extra;
  return o;
}

Launch::Launch(const KernelContext& ctx, const ProgramSource& program, const char* kernel,
               const std::string& options)
    : device_(DeviceOf(ctx)),
      id_(ctx.device_id),
      name_(kernel),
      kernel_(device_.programs(ctx.device_id).kernel(program, options, kernel)),
      lock_(device_.launch_mutex(ctx.device_id)) {}

void Launch::Set(size_t size, const void* value) {
  const cl_int err = clSetKernelArg(kernel_, next_, size, value);
  if (err != CL_SUCCESS) {
    ThrowClError(err, std::string("clSetKernelArg(") + name_ + ", " + std::to_string(next_) + ")",
                 __FILE__, __LINE__);
  }
  ++next_;
}

Launch& Launch::array(const DLArray* a, const char* what) {
  const size_t elem = ElementBytes(a->dtype);
  const size_t nbytes = static_cast<size_t>(NumElements(a)) * elem;
  const BufferRef b =
      device_.resolve(id_, static_cast<const char*>(a->data) + a->byte_offset, nbytes, what);
  if (b.offset % elem != 0) {
    throw DeviceError(std::string(what) + ": byte offset " + std::to_string(b.offset) +
                      " is not a multiple of the element size " + std::to_string(elem));
  }
  Set(sizeof(cl_mem), &b.mem);
  const cl_ulong offset = b.offset / elem;
  Set(sizeof(offset), &offset);
  return *this;
}

Launch& Launch::buffer(cl_mem mem) {
  Set(sizeof(cl_mem), &mem);
  return *this;
}

void Launch::Enqueue(cl_uint dims, const size_t* global, const size_t* local) {
  const cl_int err = clEnqueueNDRangeKernel(device_.queue(id_), kernel_, dims, nullptr, global,
                                            local, 0, nullptr, nullptr);
  if (err != CL_SUCCESS) {
    ThrowClError(err, std::string("clEnqueueNDRangeKernel(") + name_ + ")", __FILE__, __LINE__);
  }
}

void Launch::run(size_t global, size_t local) {
  if (global == 0) return;
  const size_t g = ItemsFor(global, local) * local;
  Enqueue(1, &g, &local);
}

void Launch::run2(size_t global0, size_t global1, size_t local0, size_t local1) {
  if (global0 == 0 || global1 == 0) return;
  const size_t g[2] = {ItemsFor(global0, local0) * local0, ItemsFor(global1, local1) * local1};
  const size_t l[2] = {local0, local1};
  Enqueue(2, g, l);
}

}  // namespace dlarray::opencl
