/*!
 * \file dlarray/plugin.h
 * \brief Writing a plugin in C++: the header-only layer that turns a dlarray::Device subclass and
 *        C++ kernels into the C tables of dlarray/plugin_api.h.
 *
 * \code
 *   dlarray::Device* CreateDevice() { return new MyDevice(); }        // device plugins only
 *   void RegisterKernels(dlarray::Registry* r) {
 *     r->register_kernel("relu", kMyDeviceType, &MyRelu);              // void MyRelu(const
 * KernelContext&)
 *   }
 *   DLARRAY_DEFINE_PLUGIN("mydevice", kMyDeviceType, &CreateDevice, &RegisterKernels)
 * \endcode
 *
 * Every exception a Device method, kernel or shape check throws is caught here and reported to the
 * core as an error code with its message: nothing C++ crosses into the core. Include this header
 * in one source file of the plugin (the one that defines the plugin); kernels need only kernel.h.
 */
#ifndef DLARRAY_PLUGIN_H_
#define DLARRAY_PLUGIN_H_

#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "dlarray/device.h"
#include "dlarray/errors.h"
#include "dlarray/kernel.h"
#include "dlarray/plugin_api.h"
#include "dlarray/sdk_util.h"

namespace dlarray {

/*! \brief The registry a plugin receives in register_kernels. Nothing is committed if it throws. */
class Registry {
 public:
  Registry(const DLArrayCoreApi* core, DLArrayRegistry* registry)
      : core_(core), registry_(registry) {}
  /*! \brief Declares an op the core does not know; an op of the same name must match exactly. */
  inline void declare_op(const OpSchema& schema);
  /*! \brief Registers the kernel of (op, device_type); the op must be declared. */
  inline void register_kernel(const std::string& op, int device_type, KernelFn fn);
  /*! \brief Registers a C kernel with its data pointer, as the C ABI does. */
  void register_c_kernel(const std::string& op, int device_type, DLArrayKernelFn fn, void* data) {
    if (core_->register_kernel(registry_, op.c_str(), device_type, fn, data) != 0) {
      throw CoreCallFailed();
    }
  }
  /*! \brief The core's functions. */
  const DLArrayCoreApi* core() const { return core_; }

 private:
  const DLArrayCoreApi* core_;
  DLArrayRegistry* registry_;
};

/*!
 * \brief Runs any declared op from inside a kernel (on the operands' device, validated like every
 *        call). Needs a core of ABI 2.1 or newer.
 */
inline void InvokeOp(const KernelContext& ctx, const std::string& op,
                     const std::vector<const DLArray*>& inputs,
                     const std::vector<DLArray*>& outputs, const std::vector<double>& attrs = {}) {
  const DLArrayCoreApi* core = ctx.call->core;
  if (!DLARRAY_STRUCT_HAS(core, DLArrayCoreApi, invoke) || core->invoke == nullptr) {
    throw BackendError("InvokeOp(" + op + ") needs a dlarray core of plugin ABI 2.1 or newer");
  }
  if (core->invoke(op.c_str(), inputs.data(), static_cast<int32_t>(inputs.size()), outputs.data(),
                   static_cast<int32_t>(outputs.size()), attrs.data(),
                   static_cast<int32_t>(attrs.size())) != 0) {
    throw CoreCallFailed();
  }
}

// The adapter. Hidden, so that each plugin library has its own state even when the plugin is
// built without -fvisibility=hidden.
namespace sdk_detail __attribute__((visibility("hidden"))) {

  struct PluginState {
    const DLArrayCoreApi* core = nullptr;
    const char* name = "";
    int device_type = 0;
    Device* (*create)() = nullptr;
    void (*register_fn)(Registry*) = nullptr;
    Device* device = nullptr;
    DLArrayDeviceApi table{};
  };

  inline PluginState& State() {
    static PluginState state;
    return state;
  }

  template <typename F>
  int Guard(const char* what, F&& f) noexcept {
    return GuardCall(State().core, what, static_cast<F&&>(f), State().name);
  }

  inline Device* Self(void* self) { return static_cast<Device*>(self); }
  inline void SetString(DLArrayString * out, const std::string& s) {
    State().core->string_set(out, s.c_str());
  }

  inline int DeviceCount(void* self, int32_t* count) {
    return Guard("device_count", [&] { *count = Self(self)->device_count(); });
  }
  inline int UnavailableReason(void* self, DLArrayString* out) {
    return Guard("unavailable_reason", [&] { SetString(out, Self(self)->unavailable_reason()); });
  }
  inline int DeviceName(void* self, int32_t id, DLArrayString* out) {
    return Guard("device_name", [&] { SetString(out, Self(self)->device_name(id)); });
  }
  inline int Allocate(void* self, int32_t id, uint64_t nbytes, void** out) {
    return Guard("allocate", [&] { *out = Self(self)->allocate(id, static_cast<size_t>(nbytes)); });
  }
  inline void Free(void* self, int32_t id, void* ptr, uint64_t nbytes) {
    Self(self)->free(id, ptr, static_cast<size_t>(nbytes));
  }
  inline int Copy(void* self, const void* src, uint64_t src_offset, DLDevice src_device, void* dst,
                  uint64_t dst_offset, DLDevice dst_device, uint64_t nbytes) {
    return Guard("copy", [&] {
      Self(self)->copy(src, src_offset, src_device, dst, dst_offset, dst_device,
                       static_cast<size_t>(nbytes));
    });
  }
  inline int Fill(void* self, void* dst, uint64_t dst_offset, DLDevice device, const void* pattern,
                  uint32_t pattern_size, uint64_t nbytes) {
    return Guard("fill", [&] {
      Self(self)->fill(dst, dst_offset, device, pattern, pattern_size, static_cast<size_t>(nbytes));
    });
  }
  inline int Synchronize(void* self, int32_t id) {
    return Guard("synchronize", [&] { Self(self)->synchronize(id); });
  }
  inline int Stream(void* self, int32_t id, void** out) {
    return Guard("stream", [&] { *out = Self(self)->stream(id); });
  }
  inline int GetMemoryStats(void* self, int32_t id, DLArrayMemoryStats* out) {
    return Guard("memory_stats", [&] {
      const MemoryStats s = Self(self)->memory_stats(id);
      DLArrayMemoryStats c{sizeof(DLArrayMemoryStats), s.bytes_in_use, s.bytes_reserved,
                           s.num_allocations,          s.num_frees,    s.peak_bytes_in_use};
      const uint64_t n = out->struct_size < c.struct_size ? out->struct_size : c.struct_size;
      const uint64_t caller_size = out->struct_size;
      std::memcpy(out, &c, static_cast<size_t>(n));
      out->struct_size = caller_size;
    });
  }
  inline int EmptyCache(void* self, int32_t id) {
    return Guard("empty_cache", [&] { Self(self)->empty_cache(id); });
  }
  inline int SetOption(void* self, const char* key, const char* value) {
    return Guard("set_option", [&] { Self(self)->set_option(key, value); });
  }
  inline int GetOption(void* self, const char* key, DLArrayString* out) {
    return Guard("get_option", [&] { SetString(out, Self(self)->get_option(key)); });
  }
  inline void Destroy(void* self) {
    Device* d = Self(self);
    if (State().device == d) State().device = nullptr;
    delete d;
  }
  inline int Extension(void* self, const char* name, const void** out) {
    return Guard("get_extension", [&] { *out = Self(self)->extension(name); });
  }

  inline int CreateDevice(const DLArrayCoreApi* core, const DLArrayDeviceApi** out) {
    PluginState& s = State();
    s.core = core;
    return Guard("create_device", [&] {
      std::unique_ptr<Device> device(s.create());
      if (!device) throw BackendError("create_device returned no device");
      if (device->device_type() != s.device_type) {
        throw BackendError("the device reports device type " +
                           std::to_string(device->device_type()) + " but the plugin declares " +
                           std::to_string(s.device_type));
      }
      DLArrayDeviceApi& t = s.table;
      t = DLArrayDeviceApi{};
      t.struct_size = sizeof(DLArrayDeviceApi);
      t.self = device.get();
      t.device_count = &DeviceCount;
      t.unavailable_reason = &UnavailableReason;
      t.device_name = &DeviceName;
      t.allocate = &Allocate;
      t.free = &Free;
      t.copy = &Copy;
      t.synchronize = &Synchronize;
      t.stream = &Stream;
      t.memory_stats = &GetMemoryStats;
      t.empty_cache = &EmptyCache;
      t.set_option = &SetOption;
      t.get_option = &GetOption;
      t.destroy = &Destroy;
      t.get_extension = &Extension;
      t.capabilities = device->capabilities();
      t.fill = &Fill;
      s.device = device.release();
      *out = &t;
    });
  }

  // The C++ function a C entry calls travels in the entry's data pointer itself (no allocation
  // that a registration the core rolls back would leak). POSIX guarantees that function and
  // object pointers convert both ways, as dlsym requires.
  template <typename Fn>
  void* FnToData(Fn fn) {
    static_assert(sizeof(Fn) == sizeof(void*), "function pointers must fit in a data pointer");
    return reinterpret_cast<void*>(fn);
  }
  template <typename Fn>
  Fn DataToFn(void* data) {
    return reinterpret_cast<Fn>(data);
  }

  inline int CallKernel(const DLArrayKernelCall* call, void* data) {
    const bool has_name = DLARRAY_STRUCT_HAS(call, DLArrayKernelCall, op_name);
    const char* op = has_name && call->op_name != nullptr ? call->op_name : "kernel";
    PluginState& s = State();
    KernelContext ctx{call->device == &s.table ? s.device : nullptr,
                      call->device_id,
                      call->stream,
                      call->inputs,
                      call->num_inputs,
                      call->outputs,
                      call->num_outputs,
                      call->attrs,
                      call->num_attrs,
                      call->device_type,
                      has_name && call->op_name != nullptr ? call->op_name : "",
                      call};
    return Guard(op, [&] { DataToFn<KernelFn>(data)(ctx); });
  }

  inline int CallValidate(const DLArrayOpCall* c, void* data) {
    OpCall call{c->op_name,     c->inputs, c->num_inputs, c->outputs,
                c->num_outputs, c->attrs,  c->num_attrs};
    return Guard(c->op_name, [&] { DataToFn<ValidateFn>(data)(call); });
  }

  inline int CallInferShape(const DLArrayShapeCall* c, void* data) {
    return Guard(c->op_name, [&] {
      Shapes inputs(static_cast<size_t>(c->num_inputs));
      for (int i = 0; i < c->num_inputs; ++i)
        inputs[i].assign(c->input_shapes[i], c->input_shapes[i] + c->input_ndims[i]);
      const std::vector<double> attrs(c->attrs, c->attrs + c->num_attrs);
      const Shapes outputs = DataToFn<InferShapeFn>(data)(inputs, attrs);
      if (outputs.size() != static_cast<size_t>(c->num_outputs)) {
        throw BackendError(std::string(c->op_name) + ": infer_shape gave " +
                           std::to_string(outputs.size()) + " shapes for " +
                           std::to_string(c->num_outputs) + " outputs");
      }
      for (int o = 0; o < c->num_outputs; ++o) {
        if (outputs[o].size() > DLARRAY_MAX_NDIM) {
          throw ShapeError(std::string(c->op_name) + ": an output with more than " +
                           std::to_string(DLARRAY_MAX_NDIM) + " dimensions");
        }
        for (size_t d = 0; d < outputs[o].size(); ++d) c->output_shapes[o][d] = outputs[o][d];
        c->output_ndims[o] = static_cast<int32_t>(outputs[o].size());
      }
    });
  }

  inline int RegisterKernels(const DLArrayCoreApi* core, DLArrayRegistry* registry) {
    State().core = core;
    return Guard("register_kernels", [&] {
      Registry r(core, registry);
      State().register_fn(&r);
    });
  }

  inline const DLArrayPluginDescriptor* Describe(
      const char* name, int device_type, Device* (*create)(), void (*register_fn)(Registry*)) {
    PluginState& s = State();
    s.name = name;
    s.device_type = device_type;
    s.create = create;
    s.register_fn = register_fn;
    static const DLArrayPluginDescriptor descriptor{
        DLARRAY_PLUGIN_ABI_MAJOR,
        DLARRAY_PLUGIN_ABI_MINOR,
        sizeof(DLArrayPluginDescriptor),
        name,
        nullptr,
        device_type,
        0,
        create != nullptr ? &CreateDevice : nullptr,
        register_fn != nullptr ? &RegisterKernels : nullptr};
    return &descriptor;
  }

}  // namespace )

/*!
 * \brief The core's function table, for code of the plugin outside kernels and Device methods
 *        (e.g. a device extension that reports failures with set_error). Set before create_device
 *        runs; null before the core loads the plugin.
 */
inline const DLArrayCoreApi* PluginCoreApi() { return sdk_detail::State().core; }

/*!
 * \brief The guard for functions this plugin hands the core outside kernels and Device methods
 *        (extension tables): f's exception becomes -1 and an error recorded with the core, its
 *        message naming `what` and the plugin (dlarray/sdk_util.h has the core-agnostic form).
 */
template <typename F>
int Guard(const char* what, F&& f) noexcept {
  return sdk_detail::Guard(what, static_cast<F&&>(f));
}

inline void Registry::declare_op(const OpSchema& s) {
  std::vector<const char*> attrs, inputs, outputs;
  for (const std::string& a : s.attr_names) attrs.push_back(a.c_str());
  for (const std::string& n : s.input_names) inputs.push_back(n.c_str());
  for (const std::string& n : s.output_names) outputs.push_back(n.c_str());
  std::vector<std::vector<DLArrayGradArg>> args(s.gradients.size());
  std::vector<DLArrayGradient> grads(s.gradients.size());
  for (size_t i = 0; i < s.gradients.size(); ++i) {
    for (const GradArg& a : s.gradients[i].args) args[i].push_back({a.kind, a.index});
    grads[i].struct_size = sizeof(DLArrayGradient);
    grads[i].op = s.gradients[i].op.c_str();
    grads[i].args = args[i].data();
    grads[i].input = s.gradients[i].input;
    grads[i].num_args = static_cast<int32_t>(args[i].size());
    grads[i].attrs = s.gradients[i].attrs.empty() ? nullptr : s.gradients[i].attrs.c_str();
    grads[i].when = s.gradients[i].when.empty() ? nullptr : s.gradients[i].when.c_str();
  }
  DLArrayOpSchema c{};
  c.struct_size = sizeof(DLArrayOpSchema);
  c.name = s.name.c_str();
  c.doc = s.doc.c_str();
  c.attr_names = attrs.data();
  c.dtypes = s.dtypes.empty() ? nullptr : s.dtypes.data();
  c.input_names = inputs.empty() ? nullptr : inputs.data();
  c.output_names = outputs.empty() ? nullptr : outputs.data();
  if (s.validate != nullptr) {
    c.validate = &sdk_detail::CallValidate;
    c.validate_data = sdk_detail::FnToData(s.validate);
  }
  c.gradients = grads.empty() ? nullptr : grads.data();
  if (s.infer_shape != nullptr) {
    c.infer_shape = &sdk_detail::CallInferShape;
    c.infer_shape_data = sdk_detail::FnToData(s.infer_shape);
  }
  c.num_inputs = s.num_inputs;
  c.num_outputs = s.num_outputs;
  c.num_attrs = static_cast<int32_t>(attrs.size());
  c.num_dtypes = static_cast<int32_t>(s.dtypes.size());
  c.allow_inplace = s.allow_inplace ? 1 : 0;
  c.num_gradients = static_cast<int32_t>(grads.size());
  if (!s.input_names.empty() && s.input_names.size() != static_cast<size_t>(s.num_inputs)) {
    throw BackendError("declare_op(" + s.name + "): input_names must name every input");
  }
  if (!s.output_names.empty() && s.output_names.size() != static_cast<size_t>(s.num_outputs)) {
    throw BackendError("declare_op(" + s.name + "): output_names must name every output");
  }
  if (core_->declare_op(registry_, &c) != 0) throw CoreCallFailed();
}

inline void Registry::register_kernel(const std::string& op, int device_type, KernelFn fn) {
  if (fn == nullptr) throw BackendError("register_kernel(" + op + "): the kernel is null");
  register_c_kernel(op, device_type, &sdk_detail::CallKernel, sdk_detail::FnToData(fn));
}

}  // namespace dlarray

/*!
 * \brief Defines the plugin's entry symbol from C++ functions: `Device* create_device()` (nullptr
 *        for a plugin that only adds ops) and `void register_kernels(dlarray::Registry*)`.
 */
#define DLARRAY_DEFINE_PLUGIN(name, device_type, create_device, register_kernels)               \
  DLARRAY_PLUGIN_ENTRY {                                                                        \
    return ::dlarray::sdk_detail::Describe(name, device_type, create_device, register_kernels); \
  }

#endif  // DLARRAY_PLUGIN_H_
