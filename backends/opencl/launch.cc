/*!
 * \file launch.cc
 * \brief Launch and the dtype helpers (see launch.h).
 */
#include "launch.h"

#include "cl_check.h"
#include "dlarray/errors.h"
#include "dlarray/sdk_util.h"

namespace dlarray::opencl {

OpenclDevice& DeviceOf(const KernelContext& ctx) {
  if (ctx.device == nullptr || ctx.device_type != kDLOpenCL) {
    throw BackendError(std::string(ctx.op_name) +
                       ": the OpenCL kernel was called for arrays that are not on an OpenCL "
                       "device of this plugin");
  }
  return *static_cast<OpenclDevice*>(ctx.device);
}

namespace {

const char* IntName(int bits, bool is_unsigned) {
  switch (bits) {
    case 8:
      return is_unsigned ? "uchar" : "char";
    case 16:
      return is_unsigned ? "ushort" : "short";
    case 32:
      return is_unsigned ? "uint" : "int";
    case 64:
      return is_unsigned ? "ulong" : "long";
    default:
      return nullptr;
  }
}

}  // namespace

int TypeKind(DLArrayDType t) {
  if (t.lanes == 1 && t.bits == 16 && (t.code == kDLArrayFloat || t.code == kDLArrayBfloat)) {
    return t.code == kDLArrayFloat ? 1 : 2;
  }
  if (t.lanes == 1 && t.bits == 8 && t.code == kDLArrayBool) return 3;
  if (t.lanes == 1 && t.code == kDLArrayComplex) return 4;
  return 0;
}

void RequireReal(const KernelContext& ctx, DLArrayDType dtype) {
  if (TypeKind(dtype) == 4) {
    throw DTypeError(std::string(ctx.op_name) + " on opencl: no kernel for " + FormatDType(dtype));
  }
}

MovedElements::MovedElements(const DLArray* a) : array_(a) {
  if (a->dtype.code != kDLArrayComplex) return;
  view_ = *a;
  view_.dtype = DLArrayDType{kDLArrayUInt, static_cast<uint8_t>(a->dtype.bits / 2), 1};
  view_.ndim = a->ndim + 1;
  for (int d = 0; d < a->ndim; ++d) shape_[d] = a->shape[d];
  shape_[a->ndim] = 2;
  view_.shape = shape_;
  if (a->strides != nullptr) {
    for (int d = 0; d < a->ndim; ++d) strides_[d] = a->strides[d] * 2;
    strides_[a->ndim] = 1;
    view_.strides = strides_;
  }
  array_ = &view_;
}

std::string ClTypeName(DLArrayDType t, const DeviceInfo& info) {
  if (t.lanes == 1) {
    if (t.code == kDLArrayFloat && t.bits == 32) return "float";
    if (t.code == kDLArrayFloat && t.bits == 64) {
      if (info.fp64) return "double";
      throw DTypeError("float64 arrays need an OpenCL device with cl_khr_fp64; " + info.name +
                       " has none");
    }
    if (t.code == kDLArrayComplex && t.bits == 64) return "float2";
    if (t.code == kDLArrayComplex && t.bits == 128) {
      if (info.fp64) return "double2";
      throw DTypeError("complex128 arrays need an OpenCL device with cl_khr_fp64; " + info.name +
                       " has none");
    }
    if (TypeKind(t) == 1 || TypeKind(t) == 2) return "ushort";
    if (TypeKind(t) == 3) return "uchar";
    if (t.code == kDLArrayInt || t.code == kDLArrayUInt) {
      if (const char* name = IntName(t.bits, t.code == kDLArrayUInt)) return name;
    }
  }
  throw DTypeError("the OpenCL backend has no kernels for " + FormatDType(t));
}

std::string StorageTypeName(size_t bytes) {
  if (const char* name = IntName(static_cast<int>(bytes * 8), true)) return name;
  throw DTypeError("the OpenCL backend cannot move " + std::to_string(bytes) + "-byte elements");
}

int VectorWidth(const DeviceInfo& info) { return info.is_cpu ? 16 : 4; }

std::string TypeOptions(const char* name, DLArrayDType t, const DeviceInfo& info) {
  const std::string n = name;
  std::string o =
      " -D" + n + "=" + ClTypeName(t, info) + " -D" + n + "_KIND=" + std::to_string(TypeKind(t));
  if (t.code == kDLArrayInt || t.code == kDLArrayUInt) {
    o += " -D" + n + "_INT -DU" + n + "=" + IntName(t.bits, true);
  }
  if (t.code == kDLArrayFloat || t.code == kDLArrayBfloat) o += " -D" + n + "_FLOAT";
  if (t.code == kDLArrayComplex) {
    o += " -D" + n + "_COMPLEX -D" + n + "_REAL=" + (t.bits == 64 ? "float" : "double");
  }
  return o;
}

std::string CommonOptions(const DeviceInfo& info, const std::string& extra) {
  std::string o = "-DVW=" + std::to_string(VectorWidth(info));
  if (info.fp64) o += " -DDLARRAY_FP64";
  if (info.is_cpu) o += " -DDLARRAY_CPU";
  if (!extra.empty()) o += " " + extra;
  return o;
}

std::string BuildOptions(DLArrayDType dtype, const DeviceInfo& info, const std::string& extra) {
  return CommonOptions(info, extra) + TypeOptions("T", dtype, info);
}

std::string StorageOptions(size_t bytes, const DeviceInfo& info, const std::string& extra) {
  return CommonOptions(info, extra) + " -DT=" + StorageTypeName(bytes) + " -DT_KIND=0";
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
  const BufferRef b = device_.resolve(id_, a->data, a->byte_offset, nbytes, what);
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
