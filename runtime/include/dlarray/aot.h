/*!
 * \file dlarray/aot.h
 * \brief What an ahead-of-time (AOT) custom op library sees: MindSpore's calling convention, and
 * the struct that its `extra` argument points to (attributes, workspace, error message).
 *
 * A library exports (extern "C", any name for Func; see dlarray.custom.Custom):
 *
 *     int Func(int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes,
 *              void *stream, void *extra);
 *
 * params, ndims, shapes and dtypes have nparam entries: the inputs, then the outputs. params are
 * device pointers to compact row-major arrays; dtypes are MindSpore's names ("float32", "float16",
 * "float64", "int8" ... "int64", "uint8" ... "uint64", "bool"); stream is the device's stream
 * (a cudaStream_t on a GPU; NULL on the CPU): launch on it and do not synchronize. extra points to
 * a DLArrayAotExtra. Func returns 0, or non-zero on failure (after DLArrayAotSetError, optionally).
 *
 * Optional companions, found by name (C versions of MindSpore's; each returns 0 or non-zero).
 * Their ndims / shapes / dtypes arrays hold the inputs, then the outputs (counts in extra):
 *
 *     int FuncInit(int *ndims, int64_t **shapes, const char **dtypes, DLArrayAotExtra *extra);
 *         Called before the first call for each new set of shapes and dtypes: reads attributes,
 *         sets extra->workspace_size (bytes). Func then gets a device buffer of that size in
 *         extra->workspace, owned by dlarray and reused across calls (not cleared).
 *     int FuncInferShape(int *ndims, int64_t **shapes, DLArrayAotExtra *extra);
 *         Output shapes from input shapes: fill ndims[i] and shapes[i][0 .. ndims[i]) for each
 *         output i (room for DLARRAY_AOT_MAX_NDIM extents each).
 *     int FuncInferType(const char **dtypes, DLArrayAotExtra *extra);
 *         Output dtypes from input dtypes: set dtypes[i] to a dtype name for each output i (a
 *         string that outlives the call, e.g. a literal).
 *
 * Versioning: fields are only appended; struct_size says which exist (DLARRAY_AOT_HAS). The
 * helpers below check it, so a library built against this header works with later dlarrays.
 * This header is self-contained C99: copy it next to a kernel, or use `python -m dlarray
 * --include-dir`.
 */
#ifndef DLARRAY_AOT_H_
#define DLARRAY_AOT_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief Version of this header's layout (grows when fields are appended). */
#define DLARRAY_AOT_VERSION 1
/*! \brief DLArrayAotExtra.magic: tells a DLArrayAotExtra from other frameworks' extra data. */
#define DLARRAY_AOT_MAGIC 0x444c4158u /* "DLAX" */
/*! \brief Room for extents in each output shape given to FuncInferShape. */
#define DLARRAY_AOT_MAX_NDIM 64

/*! \brief Kinds of attribute value (DLArrayAotAttr.kind). */
typedef enum {
  kDLArrayAotInt = 0,    /*!< int_value (Python int or bool); float_value holds it as a double */
  kDLArrayAotFloat = 1,  /*!< float_value (Python float) */
  kDLArrayAotString = 2, /*!< string_value (Python str, UTF-8, NUL-terminated) */
  kDLArrayAotInts = 3,   /*!< ints[0 .. length) (a list of Python ints or bools) */
  kDLArrayAotFloats = 4, /*!< floats[0 .. length) (a list of Python floats) */
} DLArrayAotAttrKind;

/*! \brief One named attribute (Custom(..., attrs={"name": value})). */
typedef struct DLArrayAotAttr {
  const char* name;         /*!< the attribute's name */
  int32_t kind;             /*!< a DLArrayAotAttrKind */
  int32_t reserved;         /*!< zero */
  int64_t int_value;        /*!< kDLArrayAotInt */
  double float_value;       /*!< kDLArrayAotFloat (and kDLArrayAotInt, converted) */
  const char* string_value; /*!< kDLArrayAotString */
  const int64_t* ints;      /*!< kDLArrayAotInts */
  const double* floats;     /*!< kDLArrayAotFloats */
  int64_t length;           /*!< entries in ints or floats; bytes (without NUL) of string_value */
} DLArrayAotAttr;

/*! \brief What `extra` points to in every call (valid during the call only). */
typedef struct DLArrayAotExtra {
  uint64_t struct_size;        /*!< sizeof(DLArrayAotExtra) of dlarray */
  uint32_t magic;              /*!< DLARRAY_AOT_MAGIC */
  uint32_t version;            /*!< DLARRAY_AOT_VERSION of dlarray */
  const char* op_name;         /*!< the op, e.g. "/path/custom_add.so:CustomAdd", for messages */
  int32_t device_type;         /*!< 1: CPU, 2: CUDA (DLArrayDeviceType) */
  int32_t device_id;           /*!< the device's id */
  int32_t num_inputs;          /*!< inputs (the first entries of params) */
  int32_t num_outputs;         /*!< outputs (the next entries) */
  const DLArrayAotAttr* attrs; /*!< num_attrs attributes, in the order given */
  int32_t num_attrs;           /*!< entries in attrs */
  int32_t reserved;            /*!< zero */
  void* workspace;             /*!< Func: workspace_size bytes on the device (NULL when 0) */
  uint64_t workspace_size;     /*!< FuncInit sets it; Func reads it */
  /*! \brief Records why the call fails (copied); the function then returns non-zero. */
  void (*set_error)(struct DLArrayAotExtra* self, const char* message);
} DLArrayAotExtra;

/*! \brief Whether extra (non-NULL) has field. */
#define DLARRAY_AOT_HAS(extra, field) \
  ((extra)->struct_size >= offsetof(DLArrayAotExtra, field) + sizeof(((DLArrayAotExtra*)0)->field))

/*! \brief extra as a DLArrayAotExtra, or NULL when it is not one (another framework's data). */
static inline DLArrayAotExtra* DLArrayAotExtraOf(void* extra) {
  DLArrayAotExtra* e = (DLArrayAotExtra*)extra;
  if (e == NULL || e->struct_size < offsetof(DLArrayAotExtra, op_name) ||
      e->magic != DLARRAY_AOT_MAGIC) {
    return NULL;
  }
  return e;
}

/*! \brief The attribute called name, or NULL. */
static inline const DLArrayAotAttr* DLArrayAotFindAttr(const DLArrayAotExtra* extra,
                                                       const char* name) {
  int32_t i;
  if (extra == NULL || !DLARRAY_AOT_HAS(extra, num_attrs)) return NULL;
  for (i = 0; i < extra->num_attrs; ++i) {
    if (strcmp(extra->attrs[i].name, name) == 0) return &extra->attrs[i];
  }
  return NULL;
}

/*! \brief Integer attribute name, or fallback when absent or not an integer. */
static inline int64_t DLArrayAotAttrInt(const DLArrayAotExtra* extra, const char* name,
                                        int64_t fallback) {
  const DLArrayAotAttr* a = DLArrayAotFindAttr(extra, name);
  return a != NULL && a->kind == kDLArrayAotInt ? a->int_value : fallback;
}

/*! \brief Number attribute name (float or integer), or fallback. */
static inline double DLArrayAotAttrFloat(const DLArrayAotExtra* extra, const char* name,
                                         double fallback) {
  const DLArrayAotAttr* a = DLArrayAotFindAttr(extra, name);
  return a != NULL && (a->kind == kDLArrayAotFloat || a->kind == kDLArrayAotInt) ? a->float_value
                                                                                 : fallback;
}

/*! \brief String attribute name, or fallback. */
static inline const char* DLArrayAotAttrString(const DLArrayAotExtra* extra, const char* name,
                                               const char* fallback) {
  const DLArrayAotAttr* a = DLArrayAotFindAttr(extra, name);
  return a != NULL && a->kind == kDLArrayAotString ? a->string_value : fallback;
}

/*! \brief Records message as the reason of the failure the function is about to return. */
static inline void DLArrayAotSetError(DLArrayAotExtra* extra, const char* message) {
  if (extra != NULL && DLARRAY_AOT_HAS(extra, set_error) && extra->set_error != NULL) {
    extra->set_error(extra, message);
  }
}

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // DLARRAY_AOT_H_
