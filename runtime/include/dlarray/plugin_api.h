/*!
 * \file dlarray/plugin_api.h
 * \brief The plugin ABI: the plain-C boundary between the core and every plugin.
 *
 * Only what this header declares crosses between libdlarray_runtime.so and a plugin: C structs of
 * plain data and function pointers. No C++ type, exception or allocation crosses, so a plugin may
 * be written in C, or built with another compiler and another C++ standard library than the core.
 * A plugin does not link the core: the core hands it a DLArrayCoreApi table when it loads.
 *
 * Versioning (major.minor, as DLARRAY_PLUGIN_ABI_MAJOR / _MINOR):
 * - A plugin exports DLARRAY_PLUGIN_ENTRY_SYMBOL, a function returning its descriptor. The loader
 *   reads abi_major first and touches nothing else unless it equals the core's major.
 * - A minor version only appends fields at the end of structs (never reorders, removes or changes
 *   the meaning of one). Every struct that can grow starts with struct_size, set by whoever fills
 *   it to the sizeof() it was compiled with. A reader uses a field only when struct_size covers it
 *   (DLARRAY_STRUCT_HAS); a field beyond struct_size is absent, as if NULL or 0.
 * - So a core loads plugins built against any older minor of its major, and a plugin built against
 *   a newer minor loads too (it must check core->abi_minor / struct_size before using newer core
 *   functions). A different major is refused with both versions in the reason, except that a
 *   core of major 3 still loads plugins of major 2 (2.0, 2.1): their tables have the layout of
 *   3.0's, but copy takes plain pointers (data + byte_offset), and their devices have pointer
 *   arithmetic exactly when they serve cpu or cuda devices (what 2.x cores assumed).
 *
 * Errors: functions returning int return 0 on success and -1 on failure; before returning -1 the
 * plugin calls core->set_error(kind, message) (kind: a DLArrayErrorKind). The core turns that into
 * a typed exception, a C API error or a Python exception that carries the message.
 *
 * Threads: the core may call any function from several threads at once, except during loading.
 */
#ifndef DLARRAY_PLUGIN_API_H_
#define DLARRAY_PLUGIN_API_H_

#include <stddef.h>
#include <stdint.h>

#include "dlarray/dlarray.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief Major version: plugins of another major are refused (but see above for 2.x).
 *         3.0: copy takes (buffer handle, byte offset) pairs; DLArrayDeviceApi.capabilities
 *         and DLArrayDeviceApi.fill. */
#define DLARRAY_PLUGIN_ABI_MAJOR 3
/*! \brief Minor version: grows when fields are appended. 2.1 added DLArrayDeviceApi.get_extension,
 *         DLArrayCoreApi.invoke, DLArrayKernelCall.op_name and DLArrayOpSchema.infer_shape;
 *         3.1 added DLArrayGradient.attrs and DLArrayGradient.when. */
#define DLARRAY_PLUGIN_ABI_MINOR 1
/*! \brief The oldest major a core of this major still loads. */
#define DLARRAY_PLUGIN_ABI_OLDEST_MAJOR 2

/*!
 * \brief DLArrayDeviceApi.capabilities: the device's data pointers are addresses of one flat
 *        space, so data + k is the address of byte k of the buffer (CPU, CUDA). The core then may
 *        move an array's data pointer and byte_offset against each other (DLPack export, negative
 *        strides) and checks element alignment. Without it, data is an opaque buffer handle (an
 *        OpenCL cl_mem) that only its own byte_offset may offset, and the core never does.
 */
#define DLARRAY_DEVICE_POINTER_ARITHMETIC (UINT64_C(1) << 0)
/*! \brief DLArrayDeviceApi.capabilities: host code may read and write data + byte_offset directly
 *         (host memory, as the CPU's). Implies DLARRAY_DEVICE_POINTER_ARITHMETIC. */
#define DLARRAY_DEVICE_HOST_ADDRESSABLE (UINT64_C(1) << 1)

/*! \brief Name of the symbol every plugin exports (a DLArrayPluginEntryFn). */
#define DLARRAY_PLUGIN_ENTRY_SYMBOL "dlarray_plugin_entry"

/*! \brief Whether the struct at ptr (which starts with struct_size) contains field. */
#define DLARRAY_STRUCT_HAS(ptr, type, field) \
  ((ptr)->struct_size >= offsetof(type, field) + sizeof(((type*)0)->field))

/*! \brief Most inputs, outputs or attributes an op may declare. */
#define DLARRAY_MAX_OPERANDS 16
/*! \brief Most dimensions of an array. */
#define DLARRAY_MAX_NDIM 64

/*! \brief A string the core owns; a plugin fills it with core->string_set. */
typedef struct DLArrayString DLArrayString;
/*! \brief Where a plugin declares ops and registers kernels (owned by the core, loading only). */
typedef struct DLArrayRegistry DLArrayRegistry;
typedef struct DLArrayCoreApi DLArrayCoreApi;
typedef struct DLArrayDeviceApi DLArrayDeviceApi;

/*! \brief Allocator counters of one device. */
typedef struct DLArrayMemoryStats {
  uint64_t struct_size;       /*!< sizeof(DLArrayMemoryStats) of the caller */
  uint64_t bytes_in_use;      /*!< bytes held by live arrays */
  uint64_t bytes_reserved;    /*!< bytes taken from the system or driver (in use + cached) */
  uint64_t num_allocations;   /*!< system or driver allocations made so far */
  uint64_t num_frees;         /*!< system or driver frees made so far */
  uint64_t peak_bytes_in_use; /*!< high-water mark of bytes_in_use */
} DLArrayMemoryStats;

/*! \brief Everything one kernel call sees. The core validated the operands before the call. */
typedef struct DLArrayKernelCall {
  uint64_t struct_size;           /*!< sizeof(DLArrayKernelCall) of the core */
  const DLArrayCoreApi* core;     /*!< the core's functions */
  const DLArrayDeviceApi* device; /*!< the table of the operands' device (maybe another plugin's) */
  int32_t device_type;            /*!< DLArrayDeviceType of the operands */
  int32_t device_id;              /*!< id of the operands' device */
  void* stream;                 /*!< the device's stream for device_id; NULL: synchronous device */
  const DLArray* const* inputs; /*!< num_inputs arrays, compact row-major */
  DLArray* const* outputs;      /*!< num_outputs arrays, compact row-major */
  const double* attrs;          /*!< scalar attributes, in the schema's attr_names order */
  int32_t num_inputs;           /*!< as declared by the op schema */
  int32_t num_outputs;          /*!< as declared by the op schema */
  int32_t num_attrs;            /*!< as declared by the op schema */
  int32_t reserved;             /*!< zero */
  const char* op_name;          /*!< the op's name (ABI 2.1) */
} DLArrayKernelCall;

/*! \brief A kernel: one per (op, device type). data is what register_kernel was given. */
typedef int (*DLArrayKernelFn)(const DLArrayKernelCall* call, void* data);

/*! \brief What a schema's validate function sees: the operands of one call. */
typedef struct DLArrayOpCall {
  uint64_t struct_size;          /*!< sizeof(DLArrayOpCall) of the core */
  const char* op_name;           /*!< the op's name, for messages */
  const DLArray* const* inputs;  /*!< the inputs */
  const DLArray* const* outputs; /*!< the outputs */
  const double* attrs;           /*!< the attributes */
  int32_t num_inputs;            /*!< their count */
  int32_t num_outputs;           /*!< their count */
  int32_t num_attrs;             /*!< their count */
  int32_t reserved;              /*!< zero */
} DLArrayOpCall;

/*! \brief Shape check beyond counts, devices and dtypes (which the core always checks): returns 0,
 *         or -1 after core->set_error(kDLArrayErrValue, "...shapes..."). */
typedef int (*DLArrayValidateFn)(const DLArrayOpCall* call, void* data);

/*! \brief What a schema's infer_shape function sees and fills (ABI 2.1). */
typedef struct DLArrayShapeCall {
  uint64_t struct_size;               /*!< sizeof(DLArrayShapeCall) of the core */
  const char* op_name;                /*!< the op's name, for messages */
  const int64_t* const* input_shapes; /*!< num_inputs shapes */
  const int32_t* input_ndims;         /*!< their ranks */
  const DLArrayDType* input_dtypes;   /*!< their dtypes */
  const double* attrs;                /*!< the attributes */
  int64_t* const* output_shapes;      /*!< num_outputs buffers of DLARRAY_MAX_NDIM extents: fill */
  int32_t* output_ndims;              /*!< fill: the rank of each output */
  DLArrayDType* output_dtypes;        /*!< preset to input 0's dtype (float32 without inputs) */
  int32_t num_inputs;                 /*!< as declared */
  int32_t num_outputs;                /*!< as declared */
  int32_t num_attrs;                  /*!< as declared */
  int32_t reserved;                   /*!< zero */
} DLArrayShapeCall;

/*! \brief Output shapes (and dtypes) from input shapes: returns 0, or -1 after set_error. */
typedef int (*DLArrayInferShapeFn)(const DLArrayShapeCall* call, void* data);

/*! \brief Kinds of value a gradient op takes (DLArrayGradArg.kind). */
typedef enum {
  kDLArrayGradInput = 0,      /*!< input `index` of the forward op */
  kDLArrayGradOutput = 1,     /*!< output `index` of the forward op */
  kDLArrayGradOutputGrad = 2, /*!< the gradient flowing into output `index` */
} DLArrayGradArgKind;

/*! \brief One argument of a gradient op. */
typedef struct DLArrayGradArg {
  int32_t kind;  /*!< a DLArrayGradArgKind */
  int32_t index; /*!< which input or output */
} DLArrayGradArg;

/*!
 * \brief How one input of an op is differentiated: `op` applied to `args` (in order) gives the
 *        gradient of the loss with respect to input `input`, shaped like that input. The gradient
 *        op has one output; its attributes are taken by name from the forward op's attributes
 *        unless `attrs` sets them. A gradient op that cannot infer its output's shape (one the
 *        caller shapes, such as broadcast_to) takes one argument more than its inputs: the value
 *        whose shape its output takes, e.g. reduce_sum_axis_zero's x = broadcast_to(dout, x).
 */
typedef struct DLArrayGradient {
  uint64_t struct_size;       /*!< sizeof(DLArrayGradient) of the plugin */
  const char* op;             /*!< name of the gradient op (declared by this or another plugin) */
  const DLArrayGradArg* args; /*!< num_args arguments */
  int32_t input;              /*!< index of the differentiable input */
  int32_t num_args;           /*!< 1 .. DLARRAY_MAX_OPERANDS */
  /*!
   * \brief (ABI 3.1) The gradient op's attributes that differ from the forward op's: words
   *        "name=value" separated by spaces, value a number, a forward attribute's name, or
   *        "!name" (1 where that attribute is 0, else 0); e.g. "trans_a=0 trans_b=!trans_b".
   *        NULL: every attribute by name.
   */
  const char* attrs;
  /*!
   * \brief (ABI 3.1) "name" or "!name": this declaration holds only where the forward op's
   *        attribute `name` is nonzero (or zero). An input may have two declarations, one for
   *        each. NULL: always.
   */
  const char* when;
} DLArrayGradient;

/*! \brief How the dtypes of an op's operands relate (DLArrayOpSchema.output_dtype_rule, ABI 3.0).
 */
typedef enum {
  kDLArrayDTypesAlike = 0,    /*!< every operand has one dtype, one of dtypes */
  kDLArrayOutputsFixed = 1,   /*!< inputs alike, one of dtypes; outputs are output_dtype (bool) */
  kDLArrayDTypesPerArray = 2, /*!< each operand any of dtypes, independently (a conversion) */
} DLArrayDTypeRule;

/*! \brief What a caller may pass for an attribute (DLArrayOpSchema.attr_types, ABI 3.0); every
 *         attribute still reaches the op as a double. */
typedef enum {
  kDLArrayAttrFloat = 0, /*!< any real number */
  kDLArrayAttrBool = 1,  /*!< True or False (also 1 or 0): 1.0 or 0.0 */
  kDLArrayAttrInt = 2,   /*!< an integer */
} DLArrayAttrType;

/*! \brief The declaration of an op. The core copies everything during declare_op. */
typedef struct DLArrayOpSchema {
  uint64_t struct_size;             /*!< sizeof(DLArrayOpSchema) of the plugin */
  const char* name;                 /*!< e.g. "sigmoid": letters, digits and '_' */
  const char* doc;                  /*!< one line for help texts (may be NULL) */
  const char* const* attr_names;    /*!< num_attrs scalar attribute names, in order */
  const DLArrayDType* dtypes;       /*!< allowed dtypes, all operands alike; NULL: float32 only */
  const char* const* input_names;   /*!< num_inputs names (keyword arguments); NULL: x, x1, ... */
  const char* const* output_names;  /*!< num_outputs names; NULL: out, out1, ... */
  DLArrayValidateFn validate;       /*!< NULL: every input and output has the same shape */
  void* validate_data;              /*!< passed to validate */
  const DLArrayGradient* gradients; /*!< num_gradients declarations (NULL: not differentiable) */
  int32_t num_inputs;               /*!< 0 .. DLARRAY_MAX_OPERANDS */
  int32_t num_outputs;              /*!< 1 .. DLARRAY_MAX_OPERANDS */
  int32_t num_attrs;                /*!< 0 .. DLARRAY_MAX_OPERANDS */
  int32_t num_dtypes;               /*!< entries in dtypes */
  int32_t allow_inplace;            /*!< nonzero: an output may be one of the inputs */
  int32_t num_gradients;            /*!< entries in gradients */
  /*! \brief Output shapes from input shapes (ABI 2.1). NULL: every output has input 0's shape
   *         when validate is NULL too; otherwise callers must give the outputs. */
  DLArrayInferShapeFn infer_shape;
  void* infer_shape_data; /*!< passed to infer_shape (ABI 2.1) */
  /*!
   * \brief (ABI 3.0) The order of positional arguments in language bindings: every input,
   *        attribute and output name once, e.g. {"a", "trans_a", "b", "trans_b", "out"}.
   *        NULL: inputs, then attributes, then outputs. An output may be left out (allocated)
   *        when the op has inputs, an attribute when it has a default; the names after one that
   *        may be left out must be too.
   */
  const char* const* call_order;
  const int32_t* attr_types;   /*!< (ABI 3.0) num_attrs DLArrayAttrType; NULL: all float */
  const double* attr_defaults; /*!< (ABI 3.0) num_attrs defaults, NaN: none; NULL: none */
  double empty_fill;           /*!< (ABI 3.0) what fills_when_empty writes, e.g. 0 or NaN */
  DLArrayDType output_dtype;   /*!< (ABI 3.0) the outputs' dtype under kDLArrayOutputsFixed */
  int32_t dtype_rule;          /*!< (ABI 3.0) a DLArrayDTypeRule; absent: kDLArrayDTypesAlike */
  /*! \brief (ABI 3.0) Nonzero: operands may be strided views (the kernels read strides and
   *         byte_offset); zero: the core refuses non-compact operands before the kernel runs. */
  int32_t accepts_strided;
  /*! \brief (ABI 3.0) Nonzero: a call whose inputs are empty but whose outputs are not fills
   *         the outputs with empty_fill (a sum of nothing is 0) without running the kernel;
   *         zero: that call is an error. */
  int32_t fills_when_empty;
} DLArrayOpSchema;

/*!
 * \brief The functions the core gives a plugin (valid for the process's lifetime).
 *        Fields past struct_size are absent: check DLARRAY_STRUCT_HAS before using a newer one.
 */
struct DLArrayCoreApi {
  uint64_t struct_size; /*!< sizeof(DLArrayCoreApi) of the core */
  uint32_t abi_major;   /*!< the core's DLARRAY_PLUGIN_ABI_MAJOR */
  uint32_t abi_minor;   /*!< the core's DLARRAY_PLUGIN_ABI_MINOR */
  const char* version;  /*!< the core's version, e.g. "0.2.0" */
  /*! \brief Records why the current call fails (this thread); the caller then returns -1. */
  void (*set_error)(int32_t kind, const char* message);
  /*! \brief Stores text (NUL-terminated, copied) into a string the core passed in. */
  void (*string_set)(DLArrayString* out, const char* text);
  /*! \brief Declares an op the core does not know; the same name must have the same signature. */
  int (*declare_op)(DLArrayRegistry* registry, const DLArrayOpSchema* schema);
  /*! \brief Registers the kernel of (op, device_type); data is handed back on every call. */
  int (*register_kernel)(DLArrayRegistry* registry, const char* op, int32_t device_type,
                         DLArrayKernelFn kernel, void* data);
  /*!
   * \brief Runs any declared op on its operands' device, validated like every call (ABI 2.1).
   *        On failure the error is recorded as by set_error, so a kernel may just return -1.
   */
  int (*invoke)(const char* op, const DLArray* const* inputs, int32_t num_inputs,
                DLArray* const* outputs, int32_t num_outputs, const double* attrs,
                int32_t num_attrs);
};

/*!
 * \brief A device type served by a plugin: every function gets `self` back. Required: device_count,
 *        device_name, allocate, free, copy, synchronize; the others may be NULL.
 */
struct DLArrayDeviceApi {
  uint64_t struct_size; /*!< sizeof(DLArrayDeviceApi) of the plugin */
  void* self;           /*!< the plugin's device object */
  /*! \brief How many devices exist; 0 makes the plugin "no devices" (see unavailable_reason). */
  int (*device_count)(void* self, int32_t* count);
  /*! \brief Why device_count is 0 (e.g. "no CUDA driver"). */
  int (*unavailable_reason)(void* self, DLArrayString* out);
  /*! \brief Human-readable name of device id (e.g. the GPU model). */
  int (*device_name)(void* self, int32_t id, DLArrayString* out);
  /*! \brief Allocates nbytes (> 0) on device id; kDLArrayErrMemory when it cannot. */
  int (*allocate)(void* self, int32_t id, uint64_t nbytes, void** out);
  /*! \brief Releases a pointer from allocate(id, nbytes). */
  void (*free)(void* self, int32_t id, void* ptr, uint64_t nbytes);
  /*!
   * \brief Copies nbytes from byte src_offset of buffer src to byte dst_offset of buffer dst (a
   *        buffer is what allocate gave, or host memory for a CPU side). At least one side is on
   *        this device type; the other is on this type or on the CPU. Returns once host memory
   *        given as src may be reused and, for a copy into host memory, once dst holds the data.
   */
  int (*copy)(void* self, const void* src, uint64_t src_offset, DLDevice src_device, void* dst,
              uint64_t dst_offset, DLDevice dst_device, uint64_t nbytes);
  /*! \brief Waits for all work queued on device id; reports asynchronous failures. */
  int (*synchronize)(void* self, int32_t id);
  /*! \brief The stream kernels of device id run on (NULL: synchronous backend). */
  int (*stream)(void* self, int32_t id, void** out);
  /*! \brief Allocator counters of device id (out->struct_size is set by the core). */
  int (*memory_stats)(void* self, int32_t id, DLArrayMemoryStats* out);
  /*! \brief Returns cached, unused blocks of device id to the system. */
  int (*empty_cache)(void* self, int32_t id);
  /*! \brief Sets a backend option (e.g. "matmul_precision" = "tf32"); unknown keys are errors. */
  int (*set_option)(void* self, const char* key, const char* value);
  /*! \brief Reads a backend option; unknown keys are errors. */
  int (*get_option)(void* self, const char* key, DLArrayString* out);
  /*! \brief Called once when the process exits normally (may be NULL). */
  void (*destroy)(void* self);
  /*!
   * \brief A named extension table of this device type (ABI 2.1), e.g. "dlarray.rtc.v1": *out is
   *        the plugin's struct (layout documented with the extension), or NULL when unknown.
   */
  int (*get_extension)(void* self, const char* name, const void** out);
  /*! \brief DLARRAY_DEVICE_* bits (ABI 3.0): what the core may do with the device's pointers. */
  uint64_t capabilities;
  /*!
   * \brief (ABI 3.0; may be NULL) Writes nbytes at byte dst_offset of buffer dst (what allocate
   *        gave) on `device`, repeating the pattern_size bytes at pattern: pattern_size is 1, 2, 4
   *        or 8 and divides dst_offset and nbytes; nbytes may be 0. Ordered like kernels on the
   *        device's stream; returns once pattern may be reused.
   *
   *        A byte pattern rather than a typed scalar: the core converts the value to the array's
   *        dtype once, as NumPy does, for every device (so a device needs no dtype code, bfloat16
   *        and bool included, and an int64 or uint64 beyond a double's 53 bits is filled exactly),
   *        and the pattern is what the devices' own fills take (memset, cuMemsetD16/D32,
   *        clEnqueueFillBuffer). NULL (and every 2.x plugin): the core fills a host buffer and
   *        copies it over with copy.
   */
  int (*fill)(void* self, void* dst, uint64_t dst_offset, DLDevice device, const void* pattern,
              uint32_t pattern_size, uint64_t nbytes);
};

/*! \brief What a plugin tells the loader about itself. */
typedef struct DLArrayPluginDescriptor {
  uint32_t abi_major;   /*!< first: DLARRAY_PLUGIN_ABI_MAJOR the plugin was built with */
  uint32_t abi_minor;   /*!< DLARRAY_PLUGIN_ABI_MINOR the plugin was built with */
  uint64_t struct_size; /*!< sizeof(DLArrayPluginDescriptor) of the plugin */
  const char* name;     /*!< short name, e.g. "cpu" (used by DLARRAY_DISABLE_PLUGINS) */
  const char* version;  /*!< the plugin's own version (may be NULL) */
  int32_t device_type;  /*!< DLArrayDeviceType served, or 0 for a plugin that only adds ops */
  int32_t reserved;     /*!< zero */
  /*! \brief Makes the device table (device plugins only; *out stays valid until exit). */
  int (*create_device)(const DLArrayCoreApi* core, const DLArrayDeviceApi** out);
  /*! \brief Declares ops and registers kernels; on failure nothing registered is kept. */
  int (*register_kernels)(const DLArrayCoreApi* core, DLArrayRegistry* registry);
} DLArrayPluginDescriptor;

/*! \brief Signature of the entry symbol. */
typedef const DLArrayPluginDescriptor* (*DLArrayPluginEntryFn)(void);

/*! \brief Defines the entry symbol; its body returns the address of a static descriptor. */
#ifdef __cplusplus
#define DLARRAY_EXTERN_C extern "C"
#else
#define DLARRAY_EXTERN_C
#endif
#define DLARRAY_PLUGIN_ENTRY                                                             \
  DLARRAY_EXTERN_C __attribute__((visibility("default"))) const DLArrayPluginDescriptor* \
  dlarray_plugin_entry(void)

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // DLARRAY_PLUGIN_API_H_
