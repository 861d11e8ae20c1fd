/*!
 * \file dlarray/runtime.h
 * \brief The core's C++ API: plugins, devices, arrays, op invocation. Used by the Python module
 *        and the C API; knows no device.
 */
#ifndef DLARRAY_RUNTIME_H_
#define DLARRAY_RUNTIME_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dlarray/device.h"
#include "dlarray/dlarray.h"
#include "dlarray/kernel.h"
#include "dlarray/plugin_api.h"

namespace dlarray {

class PluginDevice;

/*! \brief float32, the compute dtype. */
constexpr DLArrayDType kFloat32{kDLArrayFloat, 32, 1};

/*! \brief What happened to a plugin the loader tried. */
enum class PluginStatus {
  kLoaded = 0,    //!< usable
  kDisabled,      //!< named in DLARRAY_DISABLE_PLUGINS
  kOpenFailed,    //!< not a library, or a dependency is missing (dlerror text in reason)
  kMissingEntry,  //!< no DLARRAY_PLUGIN_ENTRY_SYMBOL
  kAbiMismatch,   //!< built for another plugin ABI major version (both versions in reason)
  kInitFailed,    //!< create_device or register_kernels threw (message in reason)
  kNoDevices,     //!< loaded, but device_count() is 0 (unavailable_reason in reason)
  kDuplicate,     //!< another plugin already serves its device type, or the same file
};

/*! \brief "loaded", "disabled", "open failed", ... */
DLARRAY_EXPORT const char* PluginStatusName(PluginStatus status);

/*! \brief One plugin the loader tried (dlarray.plugins()). */
struct PluginInfo {
  std::string name;    //!< descriptor name, or derived from the file name
  std::string path;    //!< absolute path of the library
  std::string origin;  //!< "plugins folder", "DLARRAY_PLUGIN_PATH" or "load_plugin"
  PluginStatus status = PluginStatus::kOpenFailed;
  std::string reason;            //!< why it is not loaded (empty when loaded)
  int device_type = 0;           //!< DLArrayDeviceType served, 0 for op-only plugins or unknown
  int device_count = 0;          //!< devices it reported
  uint32_t abi_version = 0;      //!< the plugin's ABI major version (0 when unknown)
  uint32_t abi_minor = 0;        //!< the plugin's ABI minor version
  std::string version;           //!< the plugin's own version string (may be empty)
  std::vector<std::string> ops;  //!< ops it registered kernels for
  std::vector<std::string> declared_ops;  //!< ops it declared
};

/*! \brief Every plugin tried so far (discovery runs on first use of the runtime). */
DLARRAY_EXPORT std::vector<PluginInfo> Plugins();
/*! \brief Loads one plugin library explicitly; returns its record (check status). */
DLARRAY_EXPORT PluginInfo LoadPlugin(const std::string& path);
/*! \brief Absolute path of libdlarray_runtime.so itself (empty when it cannot be found). */
DLARRAY_EXPORT std::string CoreLibraryPath();
/*! \brief The folders searched at start-up, in order. */
DLARRAY_EXPORT std::vector<std::string> PluginSearchPath();

/*! \brief "cpu(0)", "cuda(1)", "opencl(0)", a plugin's own name ("c99_device(0)"), else
 *         "device_type_20(0)". */
DLARRAY_EXPORT std::string ContextToString(DLContext ctx);
/*!
 * \brief The name the plugin serving device_type gave itself, else "cpu", "cuda" and DLPack's
 *        names of other types ("opencl", "vulkan", "metal", "rocm", "oneapi"), else
 *        "device_type_<n>". DeviceTypeFromName parses every one of them (and "gpu").
 */
DLARRAY_EXPORT std::string DeviceTypeName(int device_type);
/*! \brief "float32", "int64", ... */
DLARRAY_EXPORT std::string DTypeToString(DLArrayDType dtype);
/*! \brief Bytes per element. */
inline size_t DTypeBytes(DLArrayDType t) { return (static_cast<size_t>(t.bits) * t.lanes + 7) / 8; }

/*!
 * \brief Checks that ctx names a usable device; throws BackendError with the stored reason when its
 *        plugin is not loaded, DeviceError when the id is out of range.
 */
DLARRAY_EXPORT void CheckDevice(DLContext ctx);
/*! \brief Name of the device (e.g. the CPU or GPU model). */
DLARRAY_EXPORT std::string DeviceName(DLContext ctx);
/*! \brief Allocator counters of the device. */
DLARRAY_EXPORT MemoryStats GetMemoryStats(DLContext ctx);
/*! \brief Returns cached, unused memory of the device to the system. */
DLARRAY_EXPORT void EmptyCache(DLContext ctx);
/*! \brief Sets a backend option of the device's plugin; unknown keys raise ValueError. */
DLARRAY_EXPORT void SetDeviceOption(DLContext ctx, const std::string& key,
                                    const std::string& value);
/*! \brief Reads a backend option of the device's plugin. */
DLARRAY_EXPORT std::string GetDeviceOption(DLContext ctx, const std::string& key);
/*! \brief The stream ops on ctx run on (nullptr: synchronous device). */
DLARRAY_EXPORT void* DeviceStream(DLContext ctx);
/*!
 * \brief A named extension table of the plugin serving device_type (see DLArrayDeviceApi::
 *        get_extension), or nullptr when it offers none; throws when no plugin serves the type.
 */
DLARRAY_EXPORT const void* DeviceExtension(int device_type, const std::string& name);
/*! \brief Every usable context, CPU first. */
DLARRAY_EXPORT std::vector<DLContext> Devices();
/*! \brief Number of devices of a type (0 when no plugin serves it). */
DLARRAY_EXPORT int DeviceCount(int device_type);

/*! \brief Whether arrays may hold this dtype: bool, int8-64, uint8-64, float16/32/64, bfloat16. */
DLARRAY_EXPORT bool IsStorageDType(DLArrayDType dtype);

/*!
 * \brief An array: a shape, strides and a byte offset over reference-counted storage. Arrays made
 *        by Empty are compact row-major and own their memory; views (View) share it; arrays over
 *        memory of another library (FromMemory: NumPy, DLPack producers) keep its owner alive.
 *        Zero-size arrays hold no memory (data is null) and ops on them do nothing.
 */
class DLARRAY_EXPORT Array {
 public:
  /*! \brief Allocates an uninitialised compact array; validates shape, dtype and ctx. */
  static std::shared_ptr<Array> Empty(const std::vector<int64_t>& shape, DLContext ctx,
                                      DLArrayDType dtype = kFloat32);
  /*!
   * \brief An array over memory the caller owns: elements at data + byte_offset + strides[i] *
   *        index[i] * itemsize (strides in elements, empty for compact row-major). `owner` is
   *        released when the last array over the memory goes (it may be null). Validates shape,
   *        strides, dtype and ctx; data may be null only for zero-size arrays.
   */
  static std::shared_ptr<Array> FromMemory(void* data, uint64_t byte_offset, DLContext ctx,
                                           DLArrayDType dtype, const std::vector<int64_t>& shape,
                                           const std::vector<int64_t>& strides,
                                           std::shared_ptr<void> owner, bool read_only);
  /*!
   * \brief A view of the same memory with another shape, strides (elements) and byte offset (from
   *        data); throws ValueError when it would reach outside the memory this array may use.
   */
  std::shared_ptr<Array> View(const std::vector<int64_t>& shape,
                              const std::vector<int64_t>& strides, uint64_t byte_offset) const;
  /*!
   * \brief The view of the sub-array at `indices` of the first `count` axes (NumPy's x[i, j]),
   *        each index in [0, extent): the other axes keep their extents and strides. View's
   *        answer without validating a layout that fits by construction (the per-call cost of
   *        x[0]); throws ValueError for an index out of range. With `slice` ({start, length,
   *        step} of axis `count`, as PySlice_AdjustIndices gives them: NumPy's x[i, a:b:c]),
   *        that axis keeps `length` elements from `start`, every `step`-th.
   */
  std::shared_ptr<Array> Subarray(const int64_t* indices, int count,
                                  std::shared_ptr<Array> reuse = nullptr,
                                  const int64_t* slice = nullptr) const;
  /*!
   * \brief For a cache of views (the Python instances of x[0]): when `a` is the only reference to
   *        its array, releases the array's memory and keeps the emptied object, which Subarray
   *        may then reuse (no allocation); else lets go of `a`. Nothing may hold a weak_ptr to
   *        an Array (none does).
   */
  static void Recycle(std::shared_ptr<Array>* a);
  ~Array();
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;

  /*! \brief The DLPack-layout view (shape and strides point into this object; strides is null
   *         when compact). */
  DLArray* dl() { return &dl_; }
  const DLArray* dl() const { return &dl_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  /*! \brief Strides in elements, always filled (also for compact arrays). */
  const std::vector<int64_t>& strides() const { return strides_; }
  DLContext ctx() const { return dl_.ctx; }
  DLArrayDType dtype() const { return dl_.dtype; }
  int64_t size() const { return size_; }
  /*! \brief size() * itemsize: the bytes of the elements (not of the memory spanned). */
  size_t nbytes() const { return nbytes_; }
  uint64_t byte_offset() const { return dl_.byte_offset; }
  /*! \brief Whether the elements are compact row-major (contiguous, C order). */
  bool is_compact() const { return dl_.strides == nullptr; }
  /*! \brief Whether writes are refused (memory of a read-only source). */
  bool read_only() const { return read_only_; }
  /*! \brief Address of the first element (data + byte_offset). */
  void* data_ptr() const { return static_cast<char*>(dl_.data) + dl_.byte_offset; }
  /*! \brief The storage: shared by every view of the memory. */
  const std::shared_ptr<void>& storage() const { return storage_; }
  /*! \brief Bytes [lo, hi) from data that views of this memory may reach. */
  uint64_t span_begin() const { return span_begin_; }
  uint64_t span_end() const { return span_end_; }

 private:
  Array() = default;
  static std::shared_ptr<Array> New();  // uninitialised, its block from BlockCache
  void SetLayout(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides);
  // dl_ from shape_ and strides_ (set): compact strides made canonical, with a null pointer.
  // compact: known compact (strides_ need only the right size).
  void FinishLayout(bool compact);
  // A view's fields but its layout: of's dtype, device, memory and flags, size elements from
  // byte_offset.
  void ShareMemory(const Array& of, int64_t size, uint64_t byte_offset);
  DLArray dl_{};
  std::vector<int64_t> shape_;
  std::vector<int64_t> strides_;
  int64_t size_ = 0;
  size_t nbytes_ = 0;
  bool read_only_ = false;
  std::shared_ptr<void> storage_;
  uint64_t span_begin_ = 0;
  uint64_t span_end_ = 0;
};

/*! \brief Whether the array's elements are compact row-major (null strides, or strides that say
 *         so; extents of 1 have any stride). */
DLARRAY_EXPORT bool IsCompact(const DLArray* a);

/*!
 * \brief The context a DLPack device is read as: pinned host memory (kDLCUDAHost) is cpu,
 *        managed memory (kDLCUDAManaged) its GPU; the other numbers are dlarray's own.
 */
DLARRAY_EXPORT DLContext ContextFromDLPack(DLContext device);
/*!
 * \brief The consumer's side of a DLPack exchange: an array over a producer's tensor, whose
 *        device is read by ContextFromDLPack. Validates rank, shape, dtype, device, and
 *        strides and byte_offset against int64 and the address space, throwing a
 *        dlarray::Error that names the field. `owner` releases the producer's tensor when the
 *        last view of the array goes, or when this throws.
 */
DLARRAY_EXPORT std::shared_ptr<Array> ArrayFromDLPack(const DLArray& tensor,
                                                      std::shared_ptr<void> owner, bool read_only);

/*! \brief How one input of an op is differentiated (from the op's declaration). */
struct GradientInfo {
  /*! \brief One attribute the gradient op gets (DLArrayGradient.attrs). */
  struct Attr {
    std::string name;     //!< the gradient op's attribute
    int source = -1;      //!< the forward attribute it copies; -1: `value`
    bool negate = false;  //!< 1 where the source is 0, else 0
    double value = 0.0;   //!< the constant when source is -1
  };
  int input = 0;              //!< the differentiable input
  std::string op;             //!< the gradient op
  std::vector<GradArg> args;  //!< its arguments, in order
  std::vector<Attr> attrs;    //!< attributes set; the others are the forward op's, by name
  int when_attr = -1;         //!< the forward attribute this holds under; -1: always
  bool when_nonzero = true;   //!< holds where that attribute is nonzero (else zero)
};

/*! \brief A declared op, as the core keeps it (copied from its DLArrayOpSchema). */
struct OpInfo {
  std::string name;                         //!< e.g. "relu"
  std::string doc;                          //!< one line for help texts
  std::string owner;                        //!< "core" or the plugin that declared it
  int num_inputs = 1;                       //!< exact input count
  int num_outputs = 1;                      //!< exact output count
  std::vector<std::string> attr_names;      //!< scalar attributes, in order
  std::vector<std::string> input_names;     //!< keyword names of the inputs
  std::vector<std::string> output_names;    //!< keyword names of the outputs
  std::vector<DLArrayAttrType> attr_types;  //!< one per attribute
  std::vector<double> attr_defaults;        //!< one per attribute, NaN: none
  /*! \brief The positional order of the language bindings, as indices into inputs, then
   *         attributes, then outputs (0 .. num_inputs + attrs + num_outputs - 1). */
  std::vector<int> call_order;
  std::vector<DLArrayDType> dtypes;                   //!< allowed dtypes; empty: float32
  DLArrayDTypeRule dtype_rule = kDLArrayDTypesAlike;  //!< how operands' dtypes relate
  DLArrayDType output_dtype{0, 0, 0};                 //!< outputs' dtype (kDLArrayOutputsFixed)
  bool allow_inplace = true;                          //!< may an output share memory with an input
  bool accepts_strided = false;  //!< operands may be strided views (else compact only)
  /*! \brief With an empty input and non-empty outputs the outputs are filled with empty_fill
   *         (a sum over nothing is 0); otherwise that case is an error. */
  bool fills_when_empty = false;
  double empty_fill = 0.0;                    //!< see fills_when_empty
  std::vector<GradientInfo> gradients;        //!< declared gradients
  DLArrayValidateFn validate = nullptr;       //!< shape check; null: every operand has one shape
  void* validate_data = nullptr;              //!< for validate
  DLArrayInferShapeFn infer_shape = nullptr;  //!< output shapes; null: see InferOutputs
  void* infer_data = nullptr;                 //!< for infer_shape
};

/*! \brief Shape and dtype of each output of an op call, inferred from its inputs. */
struct OutputSpec {
  std::vector<int64_t> shape;  //!< the output's shape
  DLArrayDType dtype;          //!< the output's dtype
};

/*! \brief Id of a declared op, or -1. */
DLARRAY_EXPORT int FindOp(const std::string& name);
/*! \brief Id of a declared op; throws ValueError listing the known ops when there is none. */
DLARRAY_EXPORT int RequireOp(const std::string& name);
/*! \brief The declaration of op id. */
DLARRAY_EXPORT const OpInfo& GetOpInfo(int op);
/*!
 * \brief The outputs of op for inputs of these shapes and dtypes, from the op's infer_shape or,
 *        for ops whose operands all share one shape, input 0's; throws ValueError when the op
 *        cannot say (then callers must give the outputs).
 */
DLARRAY_EXPORT std::vector<OutputSpec> InferOutputs(int op, const Shapes& input_shapes,
                                                    const std::vector<DLArrayDType>& input_dtypes,
                                                    const std::vector<double>& attrs);
/*! \brief Names of every declared op. */
DLARRAY_EXPORT std::vector<std::string> ListOps();
/*! \brief Whether a kernel for (op, device type) is registered. */
DLARRAY_EXPORT bool HasKernel(int op, int device_type);

/*!
 * \brief Validates and runs op on its operands' device. Returns without waiting on asynchronous
 *        devices.
 */
DLARRAY_EXPORT void Invoke(int op, const DLArray* const* inputs, int num_inputs,
                           DLArray* const* outputs, int num_outputs, const double* attrs,
                           int num_attrs);

/*!
 * \brief Invoke for the bindings' fast paths (a 1-element op costs about as much as NumPy's):
 *        op on compact inputs of one shape, dtype and context into `output`, a compact array of
 *        that shape that overlaps none of them. Checks with plain comparisons what Invoke checks
 *        and returns false, running nothing, wherever it would need more (a plugin's shape
 *        check, a conversion's dtype rule, empty operands, anything Invoke might refuse): the
 *        caller then calls Invoke, whose errors and rules are the only ones.
 */
DLARRAY_EXPORT bool TryInvokeSameShape(int op, const DLArray* const* inputs, int num_inputs,
                                       DLArray* output, const double* attrs, int num_attrs);

/*! \brief Copies between compact arrays of equal shape and dtype on any devices. */
DLARRAY_EXPORT void CopyFromTo(const DLArray* from, DLArray* to);
/*!
 * \brief Sets every element of the compact array `to` to the element whose stored bytes are
 *        `element` (as many bytes as one element of its dtype, e.g. a NumPy scalar's), through
 *        its device's fill (DLArrayDeviceApi.fill). Zero-size arrays are left alone.
 */
DLARRAY_EXPORT void FillElements(DLArray* to, const void* element, size_t element_bytes);

/*! \brief Free and total bytes of a device's memory (from its plugin's "dlarray.mem_info.v1"). */
struct MemInfo {
  uint64_t free_bytes = 0;   //!< available to new allocations
  uint64_t total_bytes = 0;  //!< the device's memory
};
/*! \brief Free and total memory of ctx; throws RuntimeError when its plugin cannot tell. */
DLARRAY_EXPORT MemInfo GetMemInfo(DLContext ctx);
/*!
 * \brief Makes stream `waiter` of ctx's device wait (without blocking the host) for the work
 *        queued so far on stream `signaller` (handles as the device's plugin defines them, e.g.
 *        cudaStream_t; for CUDA 1 and 2 are the legacy and per-thread default streams). Nothing
 *        to do when they are equal or the device has no streams; throws when its plugin offers no
 *        "dlarray.streams.v1" but has streams.
 */
DLARRAY_EXPORT void WaitStream(DLContext ctx, void* waiter, void* signaller);
/*!
 * \brief The context a device string names: "cpu", "cuda", "gpu:1", "cuda:0", or the device
 *        type name of a loaded plugin with an optional ":id" (ValueError otherwise; ids are not
 *        range-checked here).
 */
DLARRAY_EXPORT DLContext ParseContext(const std::string& text);
/*! \brief The device type a name stands for ("cpu" 1, "cuda"/"gpu" 2, a plugin's name), or -1. */
DLARRAY_EXPORT int DeviceTypeFromName(const std::string& name);
/*!
 * \brief The DLARRAY_DEVICE_* capability bits (dlarray/plugin_api.h) of the plugin serving the
 *        device: whether its data pointers may be offset or read on the host.
 */
DLARRAY_EXPORT uint64_t DeviceCapabilities(DLDevice device);
/*! \brief Waits for all queued work on ctx. */
DLARRAY_EXPORT void Synchronize(DLContext ctx);

/*!
 * \brief Like DeviceExtension, but also reaches the plugin of device_type when it loaded and found
 *        no devices, for services that need none (e.g. compiling kernels for a GPU this machine
 *        lacks); the extension then says itself what it cannot do. Throws BackendError with the
 *        stored reason when no plugin of device_type loaded.
 */
DLARRAY_EXPORT const void* PluginExtension(int device_type, const std::string& name);
/*!
 * \brief The extension `name` of whichever device type offers it (the lowest such type), for
 *        services not tied to one array's device: its table, with *device_type set to the type;
 *        nullptr (and *device_type -1) when no loaded device plugin offers it. Plugins that
 *        loaded with no devices are asked too, as by PluginExtension.
 */
DLARRAY_EXPORT const void* FindExtension(const std::string& name, int* device_type);
/*!
 * \brief FindExtension that never gives nullptr: throws BackendError "<feature> needs a device
 *        plugin offering <name>", listing the device plugins that did not load and why.
 */
DLARRAY_EXPORT const void* RequireExtension(const std::string& name, const std::string& feature,
                                            int* device_type);
/*!
 * \brief Forgets any error a plugin recorded on this thread (with the core's set_error). Call it
 *        before a function of a device extension whose failures are reported that way.
 */
DLARRAY_EXPORT void ClearPluginError();
/*!
 * \brief Throws the error a plugin recorded on this thread with set_error, typed by its kind
 *        (ValueError, TypeError, MemoryError, else RuntimeError in Python), or, when it recorded
 *        none, a BackendError saying `what` failed without a message.
 */
[[noreturn]] DLARRAY_EXPORT void ThrowPluginError(const std::string& what);

}  // namespace dlarray

#endif  // DLARRAY_RUNTIME_H_
