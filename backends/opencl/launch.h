/*!
 * \file launch.h
 * \brief Running a kernel of this plugin: the device from the call, build options for a dtype,
 *        arguments (an array is its buffer and its element offset) and the enqueue.
 */
#ifndef DLARRAY_BACKENDS_OPENCL_LAUNCH_H_
#define DLARRAY_BACKENDS_OPENCL_LAUNCH_H_

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

#include "cl_headers.h"
#include "dlarray/kernel.h"
#include "opencl_device.h"
#include "program_cache.h"

namespace dlarray::opencl {

/*! \brief This plugin's device serving the call; throws BackendError otherwise. */
OpenclDevice& DeviceOf(const KernelContext& ctx);

/*! \brief How kernels store a dtype (kernel_common.h's T_KIND): 0 native, 1 float16, 2 bfloat16,
 *         3 bool, 4 complex (float2 or double2: real, imaginary). */
int TypeKind(DLArrayDType t);

/*! \brief The OpenCL C storage type of a dtype on a device ("float", "double", "int", "ushort" for
 *         float16 and bfloat16, "uchar" for bool, "float2" and "double2" for complex); throws
 *         DTypeError naming the dtype (and the device, for float64 or complex128 without
 *         cl_khr_fp64). */
std::string ClTypeName(DLArrayDType dtype, const DeviceInfo& info);

/*! \brief Throws DTypeError "<op> on opencl: no kernel for <dtype>" for a complex dtype: for the
 *         kernels that take every real dtype (complex ones pass the core's check). */
void RequireReal(const KernelContext& ctx, DLArrayDType dtype);

/*! \brief The unsigned OpenCL C type of `bytes` bytes (moving elements without looking at them). */
std::string StorageTypeName(size_t bytes);

/*! \brief Vector width of the kernels on a device: 16 on CPUs (AVX-512 and wider loops), 4 on
 *         GPUs (a float4 per work-item). */
int VectorWidth(const DeviceInfo& info);

/*! \brief The options defining one type of a program: -D<name>=<storage> -D<name>_KIND=<k>, and
 *         -D<name>_INT -DU<name>=<unsigned type> for integers, -D<name>_FLOAT for floating types,
 *         -D<name>_COMPLEX -D<name>_REAL=<part type> for complex ones.
 */
std::string TypeOptions(const char* name, DLArrayDType dtype, const DeviceInfo& info);

/*! \brief -DVW=<width> [-DDLARRAY_FP64] [-DDLARRAY_CPU] + extra. */
std::string CommonOptions(const DeviceInfo& info, const std::string& extra = "");

/*! \brief CommonOptions + TypeOptions("T", dtype). */
std::string BuildOptions(DLArrayDType dtype, const DeviceInfo& info, const std::string& extra = "");

/*! \brief CommonOptions + T the unsigned type of `bytes` bytes (copies, fills, broadcasts). */
std::string StorageOptions(size_t bytes, const DeviceInfo& info, const std::string& extra = "");

/*!
 * \brief How kernels that only move elements see an array: a complex array as its parts (unsigned
 *        integers of half the element size, in a last dimension of 2: OpenCL C has no 16-byte
 *        scalar for complex128), any other array as it is.
 */
class MovedElements {
 public:
  explicit MovedElements(const DLArray* a);
  MovedElements(const MovedElements&) = delete;
  MovedElements& operator=(const MovedElements&) = delete;
  /*! \brief The array to launch with (valid while this object lives). */
  const DLArray* get() const { return array_; }

 private:
  const DLArray* array_;
  DLArray view_{};
  int64_t shape_[DLARRAY_MAX_NDIM + 1] = {};
  int64_t strides_[DLARRAY_MAX_NDIM + 1] = {};
};

/*!
 * \brief One kernel launch: finds (or builds) the kernel, holds the device's launch mutex while
 *        arguments are set and the kernel is queued.
 */
class Launch {
 public:
  Launch(const KernelContext& ctx, const ProgramSource& program, const char* kernel,
         const std::string& options);
  /*! \brief An array operand: two arguments, its buffer and its offset in elements (ulong). */
  Launch& array(const DLArray* a, const char* what);
  /*! \brief A buffer argument (scratch). */
  Launch& buffer(cl_mem mem);
  /*! \brief A scalar argument of exactly the kernel's type (cl_ulong, cl_int, float, ...). */
  template <typename V>
  Launch& scalar(V value) {
    Set(sizeof(V), &value);
    return *this;
  }
  /*! \brief Queues the kernel over `global` work-items in groups of `local` (global is rounded up
   *         to a multiple of local; kernels check their bounds). */
  void run(size_t global, size_t local);
  /*! \brief 2-D: global0 x global1 in groups of local0 x local1. */
  void run2(size_t global0, size_t global1, size_t local0, size_t local1);

 private:
  void Set(size_t size, const void* value);
  void Enqueue(cl_uint dims, const size_t* global, const size_t* local);
  OpenclDevice& device_;
  int id_;
  const char* name_;
  cl_kernel kernel_;
  std::unique_lock<std::mutex> lock_;
  cl_uint next_ = 0;
};

/*! \brief Whether kernels should write an output of nbytes with non-temporal stores: on CPUs,
 *         for outputs of 16 MiB or more, which would not stay in the caches anyway. */
inline bool NonTemporal(const DeviceInfo& info, size_t nbytes) {
  return info.is_cpu && nbytes >= (size_t{16} << 20);
}

/*! \brief Bytes of one element. */
inline size_t ElementBytes(DLArrayDType t) { return (t.bits * t.lanes + 7u) / 8u; }

/*! \brief Work-items for n elements handled `per_item` at a time, rounded up. */
inline size_t ItemsFor(size_t n, size_t per_item) { return (n + per_item - 1) / per_item; }

}  // namespace dlarray::opencl

#endif  // DLARRAY_BACKENDS_OPENCL_LAUNCH_H_
