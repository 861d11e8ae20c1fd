// AotLibrary and AotOp (see aot_op.h): loading, attributes, output specs, and the call itself.
#include "aot_op.h"

#include <dlfcn.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <exception>
#include <type_traits>
#include <utility>

#include "dlarray/ext/current_device.h"

namespace dlarray {

using AotFn = int (*)(int, void**, int*, int64_t**, const char**, void*, void*);
using AotInitFn = int (*)(int*, int64_t**, const char**, DLArrayAotExtra*);
using AotInferShapeFn = int (*)(int*, int64_t**, DLArrayAotExtra*);
using AotInferTypeFn = int (*)(const char**, DLArrayAotExtra*);

/*! \brief One device type's implementation: the library functions, and FuncInit's state. */
struct AotImpl {
  int device_type = 0;
  std::string name;  // "path:Func", for messages
  std::shared_ptr<AotLibrary> library;
  AotFn fn = nullptr;
  AotInitFn init = nullptr;
  AotInferShapeFn infer_shape = nullptr;
  AotInferTypeFn infer_type = nullptr;
  // FuncInit's result for the last shapes and dtypes, and the workspace per device id.
  mutable std::mutex mu;
  bool init_done = false;
  std::vector<int64_t> init_key;
  uint64_t workspace_size = 0;
  std::vector<std::shared_ptr<Array>> workspaces;
};

namespace {

// DLPack's codes for types dlarray.h does not name yet.
constexpr uint8_t kDLPackBfloat = 4;
constexpr uint8_t kDLPackBool = 6;

/*! \brief MindSpore's name of a dtype ("float32", ...), or nullptr when it has none. */
const char* AotDTypeName(DLArrayDType t) {
  if (t.lanes != 1) return nullptr;
  const int b = t.bits;
  switch (t.code) {
    case kDLArrayFloat:
      return b == 16 ? "float16" : b == 32 ? "float32" : b == 64 ? "float64" : nullptr;
    case kDLArrayInt:
      return b == 8 ? "int8" : b == 16 ? "int16" : b == 32 ? "int32" : b == 64 ? "int64" : nullptr;
    case kDLArrayUInt:
      return b == 8    ? "uint8"
             : b == 16 ? "uint16"
             : b == 32 ? "uint32"
             : b == 64 ? "uint64"
                       : nullptr;
    case kDLPackBfloat:
      return b == 16 ? "bfloat16" : nullptr;
    case kDLPackBool:
      return b == 8 ? "bool" : nullptr;
    default:
      return nullptr;
  }
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  DLArray view{};
  view.ndim = static_cast<int32_t>(shape.size());
  view.shape = const_cast<int64_t*>(shape.data());
  return ShapeToString(&view);
}

Error ValueError(const std::string& message) { return Error(ErrorKind::kValue, message); }

/*! \brief Whether an array is compact row-major (what AOT functions are given). */
bool IsCompact(const DLArray* a) {
  if (a->strides == nullptr) return true;
  int64_t expected = 1;
  for (int d = a->ndim - 1; d >= 0; --d) {
    if (a->shape[d] != 1 && a->strides[d] != expected) return false;
    expected *= a->shape[d];
  }
  return true;
}

void CheckCompact(const DLArray* a, const std::string& op, const char* what, int i) {
  if (!IsCompact(a)) {
    throw ValueError("dlarray.custom: " + op + ": " + what + " " + std::to_string(i) +
                     " is a strided view; AOT functions take compact arrays (copy it first)");
  }
}

/*! \brief Small arrays on the stack for the common case, on the heap past N entries. */
template <typename T, size_t N>
class SmallBuffer {
 public:
  explicit SmallBuffer(size_t n) : data_(n <= N ? fixed_.data() : Heap(n)) {}
  SmallBuffer(const SmallBuffer&) = delete;
  SmallBuffer& operator=(const SmallBuffer&) = delete;
  T& operator[](size_t i) { return data_[i]; }
  T* data() { return data_; }

 private:
  T* Heap(size_t n) {
    heap_.resize(n);
    return heap_.data();
  }
  std::array<T, N> fixed_;
  std::vector<T> heap_;
  T* data_;
};

/*! \brief A DLArrayAotExtra with the storage its set_error writes to. */
struct CallExtra {
  DLArrayAotExtra c;
  std::string error;
};

void SetError(DLArrayAotExtra* self, const char* message) {
  // c is CallExtra's first member: the struct's address is CallExtra's.
  reinterpret_cast<CallExtra*>(self)->error = message != nullptr ? message : "";
}

/*! \brief The current-device extension of a device type (nullptr when it has none). */
const DLArrayCurrentDeviceExtV1* CurrentDeviceExt(int device_type) {
  static std::array<std::atomic<const void*>, DLARRAY_MAX_DEVICE_TYPES> tables{};
  static std::array<std::atomic<bool>, DLARRAY_MAX_DEVICE_TYPES> looked_up{};
  if (device_type <= 0 || device_type >= DLARRAY_MAX_DEVICE_TYPES) return nullptr;
  if (!looked_up[device_type].load(std::memory_order_acquire)) {
    tables[device_type].store(DeviceExtension(device_type, DLARRAY_EXT_CURRENT_DEVICE_V1),
                              std::memory_order_relaxed);
    looked_up[device_type].store(true, std::memory_order_release);
  }
  const auto* ext = static_cast<const DLArrayCurrentDeviceExtV1*>(
      tables[device_type].load(std::memory_order_relaxed));
  if (ext == nullptr || ext->struct_size < sizeof(DLArrayCurrentDeviceExtV1)) return nullptr;
  return ext;
}

/*! \brief The device's stream, looked up once per device (it never changes). */
void* StreamOf(DLContext ctx) {
  constexpr int kIds = 64;
  static std::array<std::atomic<void*>, DLARRAY_MAX_DEVICE_TYPES * kIds> streams{};
  static std::array<std::atomic<bool>, DLARRAY_MAX_DEVICE_TYPES * kIds> known{};
  if (ctx.device_type <= 0 || ctx.device_type >= DLARRAY_MAX_DEVICE_TYPES || ctx.device_id < 0 ||
      ctx.device_id >= kIds) {
    return DeviceStream(ctx);
  }
  const size_t slot = static_cast<size_t>(ctx.device_type) * kIds + ctx.device_id;
  if (!known[slot].load(std::memory_order_acquire)) {
    streams[slot].store(DeviceStream(ctx), std::memory_order_relaxed);
    known[slot].store(true, std::memory_order_release);
  }
  return streams[slot].load(std::memory_order_relaxed);
}

// Runs a library function; a C++ exception escaping it becomes an error naming it. The library's
// guard (dlarray/aot_guard.h) catches it on the library's side, where its compiler's C++ runtime
// knows the exception; the catch here is for libraries without one, and names the exception only
// when the library and dlarray share a C++ runtime.
template <typename F>
int CallGuarded(const AotImpl& impl, const char* what, F&& f) {
  using Call = std::remove_reference_t<F>;
  auto error = [&](const char* message) {
    return BackendError("dlarray.custom: " + impl.name + what + " threw a C++ exception" +
                        (message[0] != '\0' ? std::string(": ") + message : std::string()));
  };
  if (AotGuardFn guard = impl.library->guard()) {
    int threw = 0;
    std::array<char, 1024> message;  // written only when something was thrown
    message[0] = '\0';
    const int rc = guard([](void* data) { return (*static_cast<Call*>(data))(); }, &f, &threw,
                         message.data(), message.size());
    if (threw != 0) throw error(message.data());
    return rc;
  }
  try {
    return f();
  } catch (const std::exception& e) {
    throw error(e.what());
  } catch (...) {
    throw error("");
  }
}

void CheckReturn(int rc, const std::string& name, const char* what, DLContext ctx,
                 const std::string& message) {
  if (rc == 0) return;
  throw BackendError("dlarray.custom: " + name + what + " failed on " + ContextToString(ctx) +
                     ": it returned " + std::to_string(rc) +
                     (message.empty() ? "" : ": " + message));
}

}  // namespace

AotLibrary::AotLibrary(std::string path) : path_(std::move(path)) {
  dlerror();
  handle_ = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle_ == nullptr) {
    const char* err = dlerror();
    throw BackendError("dlarray.custom: cannot load the library " + path_ + ": " +
                       (err != nullptr ? err : "unknown dlopen error"));
  }
  guard_ = reinterpret_cast<AotGuardFn>(Symbol("dlarray_aot_guard_v1"));
}

void* AotLibrary::Symbol(const std::string& name) const {
  dlerror();
  return dlsym(handle_, name.c_str());
}

AotOp::AotOp(std::string name, const std::vector<py::tuple>& impls, int num_inputs,
             const std::vector<py::dtype>& in_dtypes, int num_outputs,
             const py::object& fixed_specs, const std::vector<py::tuple>& attrs)
    : name_(std::move(name)), num_inputs_(num_inputs), num_outputs_(num_outputs) {
  if (num_outputs_ < 1) throw ValueError("dlarray.custom: " + name_ + " needs an output");
  if (impls.empty()) throw ValueError("dlarray.custom: " + name_ + " has no library function");
  for (const py::dtype& d : in_dtypes) in_dtypes_.push_back(DTypeFromNumpy(d));
  for (const py::tuple& t : impls) AddImpl(t[0].cast<int>(), t[1], t[2].cast<std::string>());
  if (!fixed_specs.is_none()) {
    for (const py::handle& s : fixed_specs) {
      auto t = s.cast<py::tuple>();
      specs_.push_back({t[0].cast<std::vector<int64_t>>(), DTypeFromNumpy(t[1].cast<py::dtype>())});
    }
    if (static_cast<int>(specs_.size()) != num_outputs_)
      throw ValueError("dlarray.custom: " + name_ + ": output specs do not match the outputs");
    specs_fixed_ = true;
  }
  for (const py::tuple& a : attrs) {
    if (a.size() != 2) throw ValueError("dlarray.custom: attrs must be (name, value) pairs");
    attrs_.Add(a[0], a[1]);
  }
}

AotOp::~AotOp() = default;

void AotOp::AddImpl(int device_type, const py::handle& library, const std::string& symbol) {
  auto impl = std::make_unique<AotImpl>();
  impl->device_type = device_type;
  impl->library = library.cast<std::shared_ptr<AotLibrary>>();
  impl->name = impl->library->path() + ":" + symbol;
  impl->fn = reinterpret_cast<AotFn>(impl->library->Symbol(symbol));
  if (impl->fn == nullptr) {
    throw BackendError("dlarray.custom: " + impl->library->path() + " has no function '" + symbol +
                       "' (is it exported as extern \"C\"?)");
  }
  impl->init = reinterpret_cast<AotInitFn>(impl->library->Symbol(symbol + "Init"));
  impl->infer_shape =
      reinterpret_cast<AotInferShapeFn>(impl->library->Symbol(symbol + "InferShape"));
  impl->infer_type = reinterpret_cast<AotInferTypeFn>(impl->library->Symbol(symbol + "InferType"));
  impls_.push_back(std::move(impl));
}

std::vector<int> AotOp::device_types() const {
  std::vector<int> types;
  for (const auto& impl : impls_) types.push_back(impl->device_type);
  return types;
}

bool AotOp::Has(int device_type, const std::string& what) const {
  const AotImpl* impl = Find(device_type);
  if (impl == nullptr) return false;
  if (what == "init") return impl->init != nullptr;
  if (what == "infer_shape") return impl->infer_shape != nullptr;
  if (what == "infer_type") return impl->infer_type != nullptr;
  return what == "fn";
}

uint64_t AotOp::WorkspaceSize(int device_type) const {
  const AotImpl* impl = Find(device_type);
  if (impl == nullptr) return 0;
  std::lock_guard<std::mutex> lock(impl->mu);
  return impl->workspace_size;
}

AotImpl* AotOp::Find(int device_type) const {
  for (const auto& impl : impls_) {
    if (impl->device_type == device_type) return impl.get();
  }
  return nullptr;
}

void AotOp::ThrowNoImpl(DLContext ctx) const {
  std::string have;
  for (const auto& impl : impls_) have += (have.empty() ? "" : ", ") + impl->name;
  throw ValueError("dlarray.custom: " + name_ + " has no implementation for arrays on " +
                   ContextToString(ctx) + " (it has: " + have + ")");
}

DLArrayAotExtra AotOp::MakeExtra(const AotImpl* impl, DLContext ctx, int nin) const {
  DLArrayAotExtra e{};
  e.struct_size = sizeof(DLArrayAotExtra);
  e.magic = DLARRAY_AOT_MAGIC;
  e.version = DLARRAY_AOT_VERSION;
  e.op_name = impl->name.c_str();
  e.device_type = ctx.device_type;
  e.device_id = ctx.device_id;
  e.num_inputs = nin;
  e.num_outputs = num_outputs_;
  e.attrs = attrs_.data();
  e.num_attrs = static_cast<int32_t>(attrs_.size());
  e.set_error = &SetError;
  return e;
}

py::tuple AotOp::LibraryInfer(int device_type, const std::vector<std::vector<int64_t>>& shapes,
                              const std::vector<std::string>& dtypes) {
  const int nin = static_cast<int>(shapes.size()), nall = nin + num_outputs_;
  // device_type's library first, then any other that has the function.
  const AotImpl* shape_impl = nullptr;
  const AotImpl* type_impl = nullptr;
  for (bool exact : {true, false}) {
    for (const auto& impl : impls_) {
      if (exact && impl->device_type != device_type) continue;
      if (shape_impl == nullptr && impl->infer_shape != nullptr) shape_impl = impl.get();
      if (type_impl == nullptr && impl->infer_type != nullptr) type_impl = impl.get();
    }
  }
  py::object out_shapes = py::none(), out_types = py::none();
  if (shape_impl != nullptr) {
    std::vector<std::vector<int64_t>> storage(shapes);
    storage.resize(nall, std::vector<int64_t>(DLARRAY_AOT_MAX_NDIM, 0));
    std::vector<int> ndims(nall, -1);
    std::vector<int64_t*> ptrs(nall);
    for (int i = 0; i < nall; ++i) {
      if (i < nin) ndims[i] = static_cast<int>(shapes[i].size());
      if (storage[i].empty()) storage[i].push_back(0);  // a valid pointer for 0-d inputs
      ptrs[i] = storage[i].data();
    }
    const DLContext where{shape_impl->device_type, 0};
    CallExtra extra{MakeExtra(shape_impl, where, nin), {}};
    const int rc = CallGuarded(*shape_impl, "InferShape", [&] {
      return shape_impl->infer_shape(ndims.data(), ptrs.data(), &extra.c);
    });
    CheckReturn(rc, shape_impl->name, "InferShape", where, extra.error);
    py::list result;
    for (int i = nin; i < nall; ++i) {
      if (ndims[i] < 0 || ndims[i] > DLARRAY_AOT_MAX_NDIM) {
        throw ValueError("dlarray.custom: " + shape_impl->name + "InferShape gave output " +
                         std::to_string(i - nin) + " no valid rank (" + std::to_string(ndims[i]) +
                         ")");
      }
      result.append(py::tuple(
          py::cast(std::vector<int64_t>(storage[i].begin(), storage[i].begin() + ndims[i]))));
    }
    out_shapes = result;
  }
  if (type_impl != nullptr) {
    std::vector<const char*> names(nall, nullptr);
    for (int i = 0; i < nin; ++i) names[i] = dtypes[i].c_str();
    const DLContext where{type_impl->device_type, 0};
    CallExtra extra{MakeExtra(type_impl, where, nin), {}};
    const int rc = CallGuarded(*type_impl, "InferType",
                               [&] { return type_impl->infer_type(names.data(), &extra.c); });
    CheckReturn(rc, type_impl->name, "InferType", where, extra.error);
    py::list result;
    for (int i = nin; i < nall; ++i) {
      if (names[i] == nullptr) {
        throw ValueError("dlarray.custom: " + type_impl->name + "InferType set no dtype for " +
                         "output " + std::to_string(i - nin));
      }
      result.append(py::str(names[i]));
    }
    out_types = result;
  }
  return py::make_tuple(out_shapes, out_types);
}

void AotOp::CheckInputs(const DLArray* const* ins, int nin, DLContext ctx) const {
  if (num_inputs_ >= 0 && nin != num_inputs_) {
    throw DTypeError("dlarray.custom: " + name_ + " takes " + std::to_string(num_inputs_) +
                     " input(s), got " + std::to_string(nin));
  }
  for (int i = 0; i < nin; ++i) {
    CheckCompact(ins[i], name_, "input", i);
    if (ins[i]->ctx != ctx) {
      throw ValueError("dlarray.custom: " + name_ + ": input " + std::to_string(i) + " is on " +
                       ContextToString(ins[i]->ctx) + ", input 0 on " + ContextToString(ctx));
    }
    if (in_dtypes_.empty()) continue;
    const DLArrayDType want = in_dtypes_[in_dtypes_.size() == 1 ? 0 : i];
    if (ins[i]->dtype != want) {
      throw DTypeError("dlarray.custom: " + name_ + ": input " + std::to_string(i) + " is " +
                       DTypeToString(ins[i]->dtype) + ", the op takes " + DTypeToString(want));
    }
  }
}

void AotOp::CheckOutput(const DLArray* a, const OutSpec* spec, DLContext ctx, int k) const {
  CheckCompact(a, name_, "output", k);
  if (a->ctx != ctx) {
    throw ValueError("dlarray.custom: " + name_ + ": output " + std::to_string(k) + " is on " +
                     ContextToString(a->ctx) + ", the inputs on " + ContextToString(ctx));
  }
  if (spec == nullptr) return;
  const bool same_shape = a->ndim == static_cast<int32_t>(spec->shape.size()) &&
                          std::equal(spec->shape.begin(), spec->shape.end(), a->shape);
  if (!same_shape || a->dtype != spec->dtype) {
    throw ValueError("dlarray.custom: " + name_ + ": output " + std::to_string(k) + " is " +
                     ShapeToString(a) + " " + DTypeToString(a->dtype) + ", the op makes " +
                     ShapeText(spec->shape) + " " + DTypeToString(spec->dtype));
  }
}

const std::vector<OutSpec>* AotOp::Specs(py::handle self, const DLArray* const* ins, int nin,
                                         DLContext ctx, bool outs_given) {
  if (specs_fixed_) return &specs_;
  // The key of this call: device type, then per input its dtype, rank and extents. Compared in
  // place with the last one (no allocation when it is the same).
  auto dtype_code = [](DLArrayDType t) {
    return (int64_t{t.code} << 32) | (int64_t{t.bits} << 16) | t.lanes;
  };
  if (specs_valid_) {
    size_t at = 0;
    const size_t size = specs_key_.size();
    bool same = size > 0 && specs_key_[at++] == ctx.device_type;
    for (int i = 0; i < nin && same; ++i) {
      same = at + 2 + static_cast<size_t>(ins[i]->ndim) <= size &&
             specs_key_[at] == dtype_code(ins[i]->dtype) && specs_key_[at + 1] == ins[i]->ndim &&
             std::equal(ins[i]->shape, ins[i]->shape + ins[i]->ndim, specs_key_.begin() + at + 2);
      at += 2 + static_cast<size_t>(ins[i]->ndim);
    }
    if (same && at == size) return &specs_;
  }
  std::vector<int64_t> key{ctx.device_type};
  for (int i = 0; i < nin; ++i) {
    key.push_back(dtype_code(ins[i]->dtype));
    key.push_back(ins[i]->ndim);
    key.insert(key.end(), ins[i]->shape, ins[i]->shape + ins[i]->ndim);
  }
  py::list shapes, dtypes;
  for (int i = 0; i < nin; ++i) {
    shapes.append(
        py::tuple(py::cast(std::vector<int64_t>(ins[i]->shape, ins[i]->shape + ins[i]->ndim))));
    dtypes.append(DTypeToNumpy(ins[i]->dtype));
  }
  py::object result = self.attr("_infer_outputs")(shapes, dtypes, ctx.device_type, outs_given);
  if (result.is_none()) return nullptr;  // unknown: the given outputs are used as they are
  std::vector<OutSpec> specs;
  for (const py::handle& s : result) {
    auto t = s.cast<py::tuple>();
    specs.push_back({t[0].cast<std::vector<int64_t>>(), DTypeFromNumpy(t[1].cast<py::dtype>())});
  }
  if (static_cast<int>(specs.size()) != num_outputs_) {
    throw ValueError("dlarray.custom: " + name_ + ": " + std::to_string(specs.size()) +
                     " output specs for " + std::to_string(num_outputs_) + " outputs");
  }
  specs_ = std::move(specs);
  specs_key_ = std::move(key);
  specs_valid_ = true;
  return &specs_;
}

void AotOp::Run(py::handle self, DLArray* const* ins, int nin, DLArray** outs, bool outs_given,
                std::vector<std::shared_ptr<Array>>* made) {
  if (nin == 0 && !outs_given) {
    throw DTypeError("dlarray.custom: " + name_ + " has no inputs: give its outputs (out=)");
  }
  const DLContext ctx = nin > 0 ? ins[0]->ctx : outs[0]->ctx;
  CheckInputs(ins, nin, ctx);
  AotImpl* impl = Find(ctx.device_type);
  if (impl == nullptr) ThrowNoImpl(ctx);
  const std::vector<OutSpec>* specs = Specs(self, ins, nin, ctx, outs_given);
  for (int k = 0; k < num_outputs_; ++k) {
    if (outs_given) {
      CheckOutput(outs[k], specs == nullptr ? nullptr : &(*specs)[k], ctx, k);
    } else {
      made->push_back(Array::Empty((*specs)[k].shape, ctx, (*specs)[k].dtype));
      outs[k] = made->back()->dl();
    }
  }
  bool release = false;
  for (int i = 0; i < nin && !release; ++i) release = ShouldReleaseGilForOp(ins[i]);
  for (int k = 0; k < num_outputs_ && !release; ++k) release = ShouldReleaseGilForOp(outs[k]);
  if (release) {
    CallGuard in_flight;  // interpreter exit waits for it (see binding.h)
    py::gil_scoped_release unlocked;
    Launch(impl, ctx, ins, nin, outs);
  } else {
    Launch(impl, ctx, ins, nin, outs);
  }
}

void AotOp::Launch(AotImpl* impl, DLContext ctx, const DLArray* const* ins, int nin,
                   DLArray* const* outs) {
  const int nall = nin + num_outputs_;
  SmallBuffer<void*, 8> params(nall);
  SmallBuffer<int, 8> ndims(nall);
  SmallBuffer<int64_t*, 8> shapes(nall);
  SmallBuffer<const char*, 8> dtypes(nall);
  size_t total_dims = 1;
  for (int i = 0; i < nall; ++i) {
    total_dims += static_cast<size_t>((i < nin ? ins[i] : outs[i - nin])->ndim);
  }
  // The shapes are copies: a library writing into them cannot change the arrays.
  SmallBuffer<int64_t, 32> dims(total_dims);
  size_t at = 0;
  for (int i = 0; i < nall; ++i) {
    const DLArray* a = i < nin ? ins[i] : outs[i - nin];
    params[i] = static_cast<char*>(a->data) + a->byte_offset;
    ndims[i] = a->ndim;
    shapes[i] = dims.data() + at;
    for (int d = 0; d < a->ndim; ++d) dims[at++] = a->shape[d];
    dtypes[i] = AotDTypeName(a->dtype);
    if (dtypes[i] == nullptr) {
      throw DTypeError("dlarray.custom: " + name_ + ": dtype " + DTypeToString(a->dtype) +
                       " has no name in MindSpore's AOT convention");
    }
  }
  CallExtra extra{MakeExtra(impl, ctx, nin), {}};
  void* stream = StreamOf(ctx);
  if (const DLArrayCurrentDeviceExtV1* current = CurrentDeviceExt(ctx.device_type)) {
    if (const char* err = current->make_current(ctx.device_id)) {
      throw BackendError("dlarray.custom: " + name_ + ": cannot make " + ContextToString(ctx) +
                         " current: " + err);
    }
  }
  auto call = [&] {
    return CallGuarded(*impl, "", [&] {
      return impl->fn(nall, params.data(), ndims.data(), shapes.data(), dtypes.data(), stream,
                      &extra.c);
    });
  };
  int rc = 0;
  if (impl->init == nullptr) {
    rc = call();
  } else {
    // FuncInit runs once per set of shapes and dtypes. Its workspace is shared by the op's calls
    // on a device, so they run one at a time (on a GPU they are launches on one stream anyway).
    std::lock_guard<std::mutex> lock(impl->mu);
    std::vector<int64_t> key;
    for (int i = 0; i < nall; ++i) {
      key.push_back(ndims[i]);
      key.insert(key.end(), shapes[i], shapes[i] + ndims[i]);
      key.push_back(reinterpret_cast<intptr_t>(dtypes[i]));  // static names: equal when equal
    }
    if (!impl->init_done || key != impl->init_key) {
      // Copies, so that FuncInit cannot change what Func is given.
      std::vector<int> nd(ndims.data(), ndims.data() + nall);
      std::vector<int64_t> dim_copy(dims.data(), dims.data() + total_dims);
      std::vector<int64_t*> ptrs(nall);
      for (int i = 0; i < nall; ++i) ptrs[i] = dim_copy.data() + (shapes[i] - dims.data());
      std::vector<const char*> types(dtypes.data(), dtypes.data() + nall);
      CallExtra init_extra{MakeExtra(impl, ctx, nin), {}};
      const int init_rc = CallGuarded(*impl, "Init", [&] {
        return impl->init(nd.data(), ptrs.data(), types.data(), &init_extra.c);
      });
      CheckReturn(init_rc, impl->name, "Init", ctx, init_extra.error);
      impl->workspace_size = init_extra.c.workspace_size;
      impl->init_key = std::move(key);
      impl->init_done = true;
    }
    extra.c.workspace_size = impl->workspace_size;
    if (impl->workspace_size > 0) {
      auto& ws = impl->workspaces;
      if (ws.size() <= static_cast<size_t>(ctx.device_id)) ws.resize(ctx.device_id + 1);
      std::shared_ptr<Array>& buffer = ws[ctx.device_id];
      if (buffer == nullptr || buffer->nbytes() < impl->workspace_size) {
        buffer.reset();  // back to the device before the larger one is taken
        buffer = Array::Empty({static_cast<int64_t>(impl->workspace_size)}, ctx,
                              DLArrayDType{kDLArrayUInt, 8, 1});
      }
      extra.c.workspace = buffer->dl()->data;
    }
    rc = call();
  }
  CheckReturn(rc, impl->name, "", ctx, extra.error);
}

}  // namespace dlarray
