/*!
 * \file seed_c_api.h
 * \brief libc_runtime_api.so: the dlsys seed's C API, with the seed's struct layouts.
 *
 * This is NOT dlarray's C API (dlarray/c_runtime_api.h, DLPack's layout). It exists so that the
 * seed's own ctypes client (_base.py, ndarray.py, gpu_op.py) runs unchanged: its DLContext is
 * (device_id, device_type) and its DLArray is (data, ctx, ndim, shape), always float32, compact.
 * Every call is routed through the runtime to the plugin of the array's context, returns 0 or -1,
 * and leaves the message of a failure in DLGetLastError() (thread-local).
 *
 * Both libraries export DLArrayAlloc, DLGpuRelu, ... under the same names. Each library's names
 * carry its own symbol version (DLARRAY_SEED_API_1 here, DLARRAY_C_API_1 in the core), so code
 * linked against one of them never binds to the other, whatever was loaded first with
 * RTLD_GLOBAL.
 *
 * C++ code that also includes dlarray/dlarray.h defines DLARRAY_SEED_NO_SEED_NAMES first and uses
 * the DLSeed* names, since the seed's type names collide with dlarray's.
 */
#ifndef DLARRAY_SEED_C_API_H_
#define DLARRAY_SEED_C_API_H_

#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define DLARRAY_SEED_DLL __attribute__((visibility("default")))

/*! \brief The seed's device: device_id FIRST (DLPack's DLDevice puts device_type first). */
typedef struct {
  int device_id;   /*!< index among the devices of that type */
  int device_type; /*!< 1 = cpu, 2 = gpu (CUDA) */
} DLSeedContext;

/*! \brief The seed's array: float32, compact row-major; no dtype, strides or byte offset. */
typedef struct {
  void* data;        /*!< host or device pointer to the first element */
  DLSeedContext ctx; /*!< where data lives */
  int ndim;          /*!< number of dimensions */
  int64_t* shape;    /*!< ndim extents */
} DLSeedArray;

/*! \brief What the seed's calls pass around. */
typedef DLSeedArray* DLSeedArrayHandle;

#ifndef DLARRAY_SEED_NO_SEED_NAMES
typedef DLSeedContext DLContext;         /*!< the seed's name */
typedef DLSeedArray DLArray;             /*!< the seed's name */
typedef DLSeedArrayHandle DLArrayHandle; /*!< the seed's name */
#endif

/*! \brief Message of the last failure on this thread ("" when none). */
DLARRAY_SEED_DLL const char* DLGetLastError(void);

/*! \brief Allocates a float32 array of the given shape on ctx; *out owns it until DLArrayFree. */
DLARRAY_SEED_DLL int DLArrayAlloc(const int64_t* shape, int ndim, DLSeedContext ctx,
                                  DLSeedArrayHandle* out);
/*! \brief Frees a handle from DLArrayAlloc; null, freed or caller-made handles are errors. */
DLARRAY_SEED_DLL int DLArrayFree(DLSeedArrayHandle handle);
/*!
 * \brief Copies between arrays of equal shape on any devices. Either side may be a DLSeedArray the
 *        caller filled in over its own memory (e.g. a NumPy buffer, ctx cpu(0)); stream must be
 *        NULL.
 */
DLARRAY_SEED_DLL int DLArrayCopyFromTo(DLSeedArrayHandle from, DLSeedArrayHandle to, void* stream);

/* The seed's ops (gpu_op.py); despite the names they run on the operands' device, CPU or GPU. */

/*! \brief arr[:] = value */
DLARRAY_SEED_DLL int DLGpuArraySet(DLSeedArrayHandle arr, float value);
/*! \brief output = input broadcast to output's shape (NumPy rules) */
DLARRAY_SEED_DLL int DLGpuBroadcastTo(const DLSeedArrayHandle input, DLSeedArrayHandle output);
/*! \brief output = input.sum(axis=0) */
DLARRAY_SEED_DLL int DLGpuReduceSumAxisZero(const DLSeedArrayHandle input,
                                            DLSeedArrayHandle output);
/*! \brief output = matA + matB */
DLARRAY_SEED_DLL int DLGpuMatrixElementwiseAdd(const DLSeedArrayHandle matA,
                                               const DLSeedArrayHandle matB,
                                               DLSeedArrayHandle output);
/*! \brief output = input + val */
DLARRAY_SEED_DLL int DLGpuMatrixElementwiseAddByConst(const DLSeedArrayHandle input, float val,
                                                      DLSeedArrayHandle output);
/*! \brief output = matA * matB (elementwise) */
DLARRAY_SEED_DLL int DLGpuMatrixElementwiseMultiply(const DLSeedArrayHandle matA,
                                                    const DLSeedArrayHandle matB,
                                                    DLSeedArrayHandle output);
/*! \brief output = input * val (the seed's name, without "Elementwise") */
DLARRAY_SEED_DLL int DLGpuMatrixMultiplyByConst(const DLSeedArrayHandle input, float val,
                                                DLSeedArrayHandle output);
/*! \brief matC = op(matA) @ op(matB), op transposing when asked */
DLARRAY_SEED_DLL int DLGpuMatrixMultiply(const DLSeedArrayHandle matA, bool transposeA,
                                         const DLSeedArrayHandle matB, bool transposeB,
                                         DLSeedArrayHandle matC);
/*! \brief output = max(input, 0) */
DLARRAY_SEED_DLL int DLGpuRelu(const DLSeedArrayHandle input, DLSeedArrayHandle output);
/*! \brief output = (input > 0) * in_grad */
DLARRAY_SEED_DLL int DLGpuReluGradient(const DLSeedArrayHandle input,
                                       const DLSeedArrayHandle in_grad, DLSeedArrayHandle output);
/*! \brief output = softmax of input over its last axis */
DLARRAY_SEED_DLL int DLGpuSoftmax(const DLSeedArrayHandle input, DLSeedArrayHandle output);
/*! \brief output (1 element) = mean over rows of -sum(input_b * log(softmax(input_a))) */
DLARRAY_SEED_DLL int DLGpuSoftmaxCrossEntropy(const DLSeedArrayHandle input_a,
                                              const DLSeedArrayHandle input_b,
                                              DLSeedArrayHandle output);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // DLARRAY_SEED_C_API_H_
