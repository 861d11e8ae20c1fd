/*!
 * \file dlarray/ext/opencl.h
 * \brief The "dlarray.opencl.v2" device extension: the OpenCL objects behind the arrays of OpenCL
 *        devices (device type 4, kDLArrayOpenCL), for op plugins that bring their own OpenCL
 *        kernels for them.
 *
 * An OpenCL array's DLArray.data is its buffer handle (a cl_mem) and byte_offset its position in
 * it: the device has no pointer arithmetic (plugin ABI 3.0), so nobody adds the two. resolve()
 * checks that a handle is a live buffer of the device and that the bytes an array reaches lie in
 * it. (v1 took data + byte_offset, an address of a fake address space that ABI 3.0 removed; it is
 * no longer offered.) A kernel of an op plugin finds the table through the operands' device:
 *
 * \code
 *   const DLArrayDeviceApi* dev = ctx.call->device;          // C++ kernel (dlarray/kernel.h)
 *   const void* table = nullptr;
 *   if (dev->get_extension == nullptr ||
 *       dev->get_extension(dev->self, DLARRAY_EXT_OPENCL_V2, &table) != 0 || table == nullptr)
 *     ...;                                                   // not served by an OpenCL backend
 *   const DLArrayOpenclExtV2* cl = static_cast<const DLArrayOpenclExtV2*>(table);
 * \endcode
 *
 * (in the core's C++ API: dlarray::DeviceExtension(kDLArrayOpenCL, DLARRAY_EXT_OPENCL_V2)).
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
#define DLARRAY_EXT_OPENCL_V2 "dlarray.opencl.v2"

/*! \brief The table get_extension(DLARRAY_EXT_OPENCL_V2) gives (grows only at its end). */
typedef struct DLArrayOpenclExtV2 {
  uint64_t struct_size; /*!< sizeof(DLArrayOpenclExtV2) of the backend */
  void* self;           /*!< passed back to every function */
  /*!
   * \brief Checks bytes [offset, offset + nbytes) of buffer handle `buffer` (an array's data, with
   *        offset its byte_offset) of OpenCL device device_id, and gives the cl_mem (*mem) and the
   *        byte offset (*offset_out) to pass to a kernel. Fails (kDLArrayErrValue) when buffer is
   *        not memory of that device or the range runs past its end.
   */
  int (*resolve)(void* self, int32_t device_id, const void* buffer, uint64_t offset,
                 uint64_t nbytes, void** mem, uint64_t* offset_out);
  /*! \brief The cl_context, in-order cl_command_queue and cl_device_id of device device_id
   *         (made at first use); any out-pointer may be NULL. */
  int (*objects)(void* self, int32_t device_id, void** context, void** queue, void** device);
} DLArrayOpenclExtV2;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // DLARRAY_EXT_OPENCL_H_
