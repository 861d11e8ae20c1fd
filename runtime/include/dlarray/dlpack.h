/*!
 * \file dlarray/dlpack.h
 * \brief The DLPack exchange structures (DLPack 1.x: the versioned managed tensor and the legacy
 *        one), declared from the published specification with a DLArray prefix, so that this
 *        header can be included next to dlpack.h.
 *
 * The tensor inside both is DLArray (dlarray/dlarray.h), whose layout is DLPack's DLTensor; the
 * device and dtype numbers are DLPack's. Python passes these structures in capsules: a producer's
 * __dlpack__ returns a capsule named DLARRAY_DLPACK_CAPSULE_VERSIONED (or, for consumers that ask
 * for no version, DLARRAY_DLPACK_CAPSULE_LEGACY); the consumer renames it to the "used_" name when
 * it takes ownership, and from then on calls the deleter exactly once when done.
 */
#ifndef DLARRAY_DLPACK_H_
#define DLARRAY_DLPACK_H_

#include <stdint.h>

#include "dlarray/dlarray.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief The DLPack version these declarations follow (major changes break the ABI). */
#define DLARRAY_DLPACK_MAJOR_VERSION 1
#define DLARRAY_DLPACK_MINOR_VERSION 1

/*! \brief flags: the consumer must not write through the tensor. */
#define DLARRAY_DLPACK_FLAG_READ_ONLY (UINT64_C(1) << 0)
/*! \brief flags: the producer made a copy for this export (the consumer owns it alone). */
#define DLARRAY_DLPACK_FLAG_IS_COPIED (UINT64_C(1) << 1)
/*! \brief flags: sub-byte elements are padded to whole bytes. */
#define DLARRAY_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED (UINT64_C(1) << 2)

/*! \brief Capsule names of the Python exchange (unused, then used by a consumer). */
#define DLARRAY_DLPACK_CAPSULE_VERSIONED "dltensor_versioned"
#define DLARRAY_DLPACK_CAPSULE_VERSIONED_USED "used_dltensor_versioned"
#define DLARRAY_DLPACK_CAPSULE_LEGACY "dltensor"
#define DLARRAY_DLPACK_CAPSULE_LEGACY_USED "used_dltensor"

/*! \brief DLPack device types beyond cpu (1) and cuda (2) that consumers may meet. */
typedef enum {
  kDLArrayPackCUDAHost = 3,     /*!< pinned host memory of CUDA */
  kDLArrayPackOpenCL = 4,       /*!< OpenCL */
  kDLArrayPackVulkan = 7,       /*!< Vulkan */
  kDLArrayPackMetal = 8,        /*!< Metal */
  kDLArrayPackROCM = 10,        /*!< ROCm */
  kDLArrayPackCUDAManaged = 13, /*!< CUDA managed (unified) memory */
  kDLArrayPackOneAPI = 14,      /*!< oneAPI (SYCL) */
} DLArrayPackDeviceType;

/*! \brief A DLPack version: the major must match the consumer's; minors add features. */
typedef struct {
  uint32_t major; /*!< incompatible changes */
  uint32_t minor; /*!< compatible additions */
} DLArrayPackVersion;

/*! \brief The legacy (pre-1.0) managed tensor: no version, no flags. */
typedef struct DLArrayManagedTensor {
  DLArray dl_tensor; /*!< the tensor (DLTensor's layout) */
  void* manager_ctx; /*!< the producer's bookkeeping */
  /*! \brief Releases the tensor; called once by the consumer (may be NULL: nothing to free). */
  void (*deleter)(struct DLArrayManagedTensor* self);
} DLArrayManagedTensor;

/*! \brief The versioned managed tensor of DLPack 1.x. */
typedef struct DLArrayManagedTensorVersioned {
  DLArrayPackVersion version; /*!< the producer's DLPack version */
  void* manager_ctx;          /*!< the producer's bookkeeping */
  /*! \brief Releases the tensor; called once by the consumer (may be NULL: nothing to free). */
  void (*deleter)(struct DLArrayManagedTensorVersioned* self);
  uint64_t flags;    /*!< DLARRAY_DLPACK_FLAG_* bits */
  DLArray dl_tensor; /*!< the tensor (DLTensor's layout) */
} DLArrayManagedTensorVersioned;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // DLARRAY_DLPACK_H_
