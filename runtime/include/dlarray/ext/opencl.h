/*!
 * \file dlarray/ext/opencl.h
 * \brief The "dlarray.opencl.v1" device extension: the OpenCL objects behind the arrays of OpenCL
 *        devices (device type 4, kDLArrayOpenCL), for op plugins that bring their own OpenCL
 *        kernels for them.
 *
 * OpenCL memory is a handle (cl_mem), not an address: the OpenCL backend gives every buffer an
 * address range of its own, so DLArray.data + byte_offset is an opaque address that only this
 * extension turns into a buffer and an offset. A kernel of an op plugin finds the table through
 * the operands' device:
 *
 * \code
 *   const DLArrayDeviceApi* dev = ctx.call->device;          // C++ kernel (dlarray/kernel.h)
 *   const void* table = nullptr;
 *   if (dev->get_extension == nullptr ||
 *       dev->get_extension(dev->self, DLARRAY_OPENCL_EXT_V1, &table) != 0 || table == nullptr)
 *     ...;                                                   // not served by an OpenCL backend
 *   const DLArrayOpenclExtV1* cl = static_cast<const DLArrayOpenclExtV1*>(table);
 * \endcode
 *
 * (in the core's C++ API: dlarray::DeviceExtension(kDLArrayOpenCL, DLARRAY_OPENCL_EXT_V1)).
 * OpenCL types travel as void* so that this header needs no OpenCL header; cast them to cl_mem,
 * cl_context, cl_command_queue and cl_device_id. The objects belong to the backend: do not release
 * them. Queue work on the returned queue (in order, shared with every op of the device) to be
 * ordered with the device's other ops; clSetKernelArg on your own cl_kernel objects needs your
 * own lock when kernels may run from several threads. Functions return 0, or -1 after recording
 * the error (as every plugin function does).
 */
#ifndef DLARRAY_EXT_OPENCL_H_
#define DLARRAY_EXT_OPENCL_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief The extension's name, for get_extension. */
#define DLARRAY_OPENCL_EXT_V1 "dlarray.opencl.v1"

/*! \brief The table get_extension(DLARRAY_OPENCL_EXT_V1) gives (grows only at its end). */
typedef struct DLArrayOpenclExtV1 {
  uint64_t struct_size; /*!< sizeof(DLArrayOpenclExtV1) of the backend */
  void* self;           /*!< passed back to every function */
  /*!
   * \brief The buffer holding [ptr, ptr + nbytes) of OpenCL device device_id (ptr: an array's
   *        data + byte_offset) and the byte offset of ptr in it. Fails (kDLArrayErrValue) when ptr
   *        is not memory of that device or the range runs past its buffer.
   */
  int (*resolve)(void* self, int32_t device_id, const void* ptr, uint64_t nbytes, void** mem,
                 uint64_t* offset);
  /*! \brief The cl_context, in-order cl_command_queue and cl_device_id of device device_id
   *         (made at first use); any out-pointer may be NULL. */
  int (*objects)(void* self, int32_t device_id, void** context, void** queue, void** device);
} DLArrayOpenclExtV1;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // DLARRAY_EXT_OPENCL_H_
