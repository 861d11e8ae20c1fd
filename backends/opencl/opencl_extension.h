/*!
 * \file opencl_extension.h
 * \brief The "dlarray.opencl.v2" extension table (dlarray/ext/opencl.h) of this backend.
 */
#ifndef DLARRAY_BACKENDS_OPENCL_OPENCL_EXTENSION_H_
#define DLARRAY_BACKENDS_OPENCL_OPENCL_EXTENSION_H_

#include "dlarray/plugin_api.h"

namespace dlarray::opencl {

class OpenclDevice;

/*! \brief Remembers the core's functions (to report the extension's errors). */
void SetExtensionCore(const DLArrayCoreApi* core);

/*! \brief The DLArrayOpenclExtV2 table of device (made once). */
const void* OpenclExtensionTable(OpenclDevice* device);

/*! \brief The DLArrayMemInfoExtV1 table of device (made once): total is
 *         CL_DEVICE_GLOBAL_MEM_SIZE, free the total less the bytes of this process's live arrays
 *         (OpenCL cannot tell what other processes use). */
const void* MemInfoTable(OpenclDevice* device);

}  // namespace dlarray::opencl

#endif  // DLARRAY_BACKENDS_OPENCL_OPENCL_EXTENSION_H_
