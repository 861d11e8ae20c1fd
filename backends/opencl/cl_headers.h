/*!
 * \file cl_headers.h
 * \brief The OpenCL headers at the API level this plugin is written for (OpenCL 1.2: every
 *        platform in use has it, NVIDIA's included).
 */
#ifndef DLARRAY_BACKENDS_OPENCL_CL_HEADERS_H_
#define DLARRAY_BACKENDS_OPENCL_CL_HEADERS_H_

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#ifndef CL_PLATFORM_NOT_FOUND_KHR
#define CL_PLATFORM_NOT_FOUND_KHR -1001  // cl_khr_icd: the ICD loader found no platform
#endif

#endif  // DLARRAY_BACKENDS_OPENCL_CL_HEADERS_H_
