/*!
 * \file dlarray/dlarray.h
 * \brief The DLArray struct: DLPack's DLTensor layout, in plain C.
 *
 * Field order, types and device numbers match DLPack's DLTensor, so a DLArray can be handed to
 * NumPy, PyTorch or CuPy through DLPack without copying. The names carry a DLArray prefix so that
 * this header can be included next to dlpack.h.
 */
#ifndef DLARRAY_DLARRAY_H_
#define DLARRAY_DLARRAY_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief Device types, with DLPack's numbers (the seed's 2 = gpu is CUDA: it prints "cuda"). */
typedef enum {
  kDLArrayCPU = 1,    /*!< host memory */
  kDLArrayCUDA = 2,   /*!< CUDA device memory */
  kDLArrayOpenCL = 4, /*!< OpenCL buffers (data is a cl_mem: see dlarray/ext/opencl.h) */
} DLArrayDeviceType;

/*! \brief Largest device type number the runtime routes (DLPack defines fewer). */
#define DLARRAY_MAX_DEVICE_TYPES 32

/*! \brief A device: DLPack's DLDevice. */
typedef struct {
  int32_t device_type; /*!< one of DLArrayDeviceType */
  int32_t device_id;   /*!< index among the devices of that type */
} DLDevice;

/*! \brief The seed API's name of DLDevice (kept for its callers; new code writes DLDevice). */
typedef DLDevice DLContext;

/*! \brief Type codes, with DLPack's numbers. */
typedef enum {
  kDLArrayInt = 0,     /*!< signed integer */
  kDLArrayUInt = 1,    /*!< unsigned integer */
  kDLArrayFloat = 2,   /*!< IEEE floating point */
  kDLArrayBfloat = 4,  /*!< bfloat16: float32's upper 16 bits */
  kDLArrayComplex = 5, /*!< complex: real then imaginary part, each of bits / 2 (NumPy's layout) */
  kDLArrayBool = 6,    /*!< bool, 8 bits per element (0 or 1) */
} DLArrayTypeCode;

/*! \brief Element type: DLPack's DLDataType layout. */
typedef struct {
  uint8_t code;   /*!< one of DLArrayTypeCode */
  uint8_t bits;   /*!< bits per lane */
  uint16_t lanes; /*!< lanes per element (1 for scalars) */
} DLArrayDType;

/*! \brief An n-dimensional array: DLPack's DLTensor layout. */
typedef struct {
  void* data; /*!< the buffer handle: a pointer on devices with pointer arithmetic, else opaque */
#if defined(__cplusplus) || (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L)
  /* C11 and C++ also read the device under the seed API's name `ctx` (one member, two names). */
  union {
    DLDevice device; /*!< where data lives */
    DLDevice ctx;    /*!< the seed API's name of `device` */
  };
#else
  DLDevice device; /*!< where data lives (C99 has no anonymous unions: no `ctx` alias there) */
#endif
  int32_t ndim;         /*!< number of dimensions */
  DLArrayDType dtype;   /*!< element type */
  int64_t* shape;       /*!< ndim extents */
  int64_t* strides;     /*!< in elements; NULL: compact row-major (views may have strides) */
  uint64_t byte_offset; /*!< offset of the first element from data, in bytes */
} DLArray;

/*! \brief Kinds of failure (C API's DLGetLastErrorKind, plugins' set_error). */
typedef enum {
  kDLArrayErrRuntime = 0, /*!< backend or plugin failure (Python: RuntimeError) */
  kDLArrayErrValue = 1,   /*!< bad shape, device or argument (ValueError) */
  kDLArrayErrType = 2,    /*!< unsupported dtype or argument type (TypeError) */
  kDLArrayErrMemory = 3,  /*!< allocation failed (MemoryError) */
} DLArrayErrorKind;

/*! \brief The handle the C API passes around. */
typedef DLArray* DLArrayHandle;

#ifdef __cplusplus
}  // extern "C"

/*! \brief Equality of dtypes and of devices (C++ only). */
inline bool operator==(DLArrayDType a, DLArrayDType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}
inline bool operator!=(DLArrayDType a, DLArrayDType b) { return !(a == b); }
inline bool operator==(DLDevice a, DLDevice b) {
  return a.device_type == b.device_type && a.device_id == b.device_id;
}
inline bool operator!=(DLDevice a, DLDevice b) { return !(a == b); }
#endif

#endif  // DLARRAY_DLARRAY_H_
