/*!
 * \file dlarray/c_runtime_api.h
 * \brief The C API. Every call returns 0 on success and -1 on failure; DLGetLastError() then
 *        returns the message (thread-local). No C++ exception crosses this boundary.
 *
 * Handles from DLArrayAlloc are owned by the runtime; arrays that describe caller memory (for
 * instance a NumPy buffer, built by the caller with ctx cpu(0)) may be passed wherever a handle
 * is read, as the seed's ctypes code does.
 */
#ifndef DLARRAY_C_RUNTIME_API_H_
#define DLARRAY_C_RUNTIME_API_H_

#include <stddef.h>
#include <stdint.h>

#include "dlarray/dlarray.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DLARRAY_DLL __attribute__((visibility("default")))

/*! \brief Message of the last failure on this thread. */
DLARRAY_DLL const char* DLGetLastError(void);
/*! \brief Kind of the last failure on this thread (a DLArrayErrorKind). */
DLARRAY_DLL int DLGetLastErrorKind(void);

/*! \brief Allocates a float32 array of the given shape on ctx. */
DLARRAY_DLL int DLArrayAlloc(const int64_t* shape, int ndim, DLContext ctx, DLArrayHandle* out);
/*! \brief Allocates an array of any supported dtype. */
DLARRAY_DLL int DLArrayAllocEx(const int64_t* shape, int ndim, DLArrayDType dtype, DLContext ctx,
                               DLArrayHandle* out);
/*! \brief Frees a handle from DLArrayAlloc; a null or already freed handle is an error. */
DLARRAY_DLL int DLArrayFree(DLArrayHandle handle);
/*! \brief Copies between arrays of equal shape and dtype, on any devices (stream: reserved, NULL).
 */
DLARRAY_DLL int DLArrayCopyFromTo(DLArrayHandle from, DLArrayHandle to, void* stream);
/*! \brief Waits for all queued work on ctx. */
DLARRAY_DLL int DLArraySynchronize(DLContext ctx);
/*! \brief Number of usable devices of a type (0 when none). */
DLARRAY_DLL int DLArrayDeviceCount(int device_type, int* out);
/*! \brief Loads a plugin; fails with its status and reason when it cannot be used. */
DLARRAY_DLL int DLArrayLoadPlugin(const char* path);
/*! \brief Runs any declared op by name (core or plugin). */
DLARRAY_DLL int DLArrayInvoke(const char* op, const DLArrayHandle* inputs, int num_inputs,
                              const DLArrayHandle* outputs, int num_outputs, const double* attrs,
                              int num_attrs);

/* One call per core op; operands in the seed's order. */
DLARRAY_DLL int DLArraySet(DLArrayHandle arr, float value);
DLARRAY_DLL int DLArrayBroadcastTo(DLArrayHandle input, DLArrayHandle output);
DLARRAY_DLL int DLArrayReduceSumAxisZero(DLArrayHandle input, DLArrayHandle output);
DLARRAY_DLL int DLArrayMatrixElementwiseAdd(DLArrayHandle a, DLArrayHandle b, DLArrayHandle c);
DLARRAY_DLL int DLArrayMatrixElementwiseAddByConst(DLArrayHandle input, float value,
                                                   DLArrayHandle output);
DLARRAY_DLL int DLArrayMatrixElementwiseMultiply(DLArrayHandle a, DLArrayHandle b, DLArrayHandle c);
DLARRAY_DLL int DLArrayMatrixElementwiseMultiplyByConst(DLArrayHandle input, float value,
                                                        DLArrayHandle output);
DLARRAY_DLL int DLArrayMatrixMultiply(DLArrayHandle a, int trans_a, DLArrayHandle b, int trans_b,
                                      DLArrayHandle c);
DLARRAY_DLL int DLArrayRelu(DLArrayHandle input, DLArrayHandle output);
DLARRAY_DLL int DLArrayReluGradient(DLArrayHandle input, DLArrayHandle in_grad,
                                    DLArrayHandle output);
DLARRAY_DLL int DLArraySoftmax(DLArrayHandle input, DLArrayHandle output);
DLARRAY_DLL int DLArraySoftmaxCrossEntropy(DLArrayHandle y, DLArrayHandle y_, DLArrayHandle output);
DLARRAY_DLL int DLArrayCopy(DLArrayHandle input, DLArrayHandle output);

/* The seed's names (gpu_op.py calls these through ctypes); they route by context like the rest. */
DLARRAY_DLL int DLGpuArraySet(DLArrayHandle arr, float value);
DLARRAY_DLL int DLGpuBroadcastTo(DLArrayHandle input, DLArrayHandle output);
DLARRAY_DLL int DLGpuReduceSumAxisZero(DLArrayHandle input, DLArrayHandle output);
DLARRAY_DLL int DLGpuMatrixElementwiseAdd(DLArrayHandle a, DLArrayHandle b, DLArrayHandle c);
DLARRAY_DLL int DLGpuMatrixElementwiseAddByConst(DLArrayHandle input, float value,
                                                 DLArrayHandle output);
DLARRAY_DLL int DLGpuMatrixElementwiseMultiply(DLArrayHandle a, DLArrayHandle b, DLArrayHandle c);
DLARRAY_DLL int DLGpuMatrixMultiplyByConst(DLArrayHandle input, float value, DLArrayHandle output);
DLARRAY_DLL int DLGpuMatrixMultiply(DLArrayHandle a, int trans_a, DLArrayHandle b, int trans_b,
                                    DLArrayHandle c);
DLARRAY_DLL int DLGpuRelu(DLArrayHandle input, DLArrayHandle output);
DLARRAY_DLL int DLGpuReluGradient(DLArrayHandle input, DLArrayHandle in_grad, DLArrayHandle output);
DLARRAY_DLL int DLGpuSoftmax(DLArrayHandle input, DLArrayHandle output);
DLARRAY_DLL int DLGpuSoftmaxCrossEntropy(DLArrayHandle y, DLArrayHandle y_, DLArrayHandle output);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // DLARRAY_C_RUNTIME_API_H_
