// dlarray.rtc's launch path: _RtcKernel.__call__ turns (grid, block, args) into a launch in C++,
// typing Python numbers by the kernel's signature (CuPy's rules for the rest).
#include <array>
#include <climits>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "rtc_binding.h"

namespace dlarray {
namespace rtc_binding {
namespace {

Error ValueError(const std::string& message) { return Error(ErrorKind::kValue, message); }

enum class ParamKind : int { kUnknown = 0, kPointer = 1, kScalar = 2 };

/*! \brief What the kernel's signature says about one parameter (bits 0: any dtype). */
struct ParamSpec {
  ParamKind kind = ParamKind::kUnknown;
  DLArrayDType dtype{kDLArrayFloat, 0, 1};
  std::string label;        // "float* x"
  bool const_data = false;  // a pointer to const data (const float* x): may take read-only arrays
};

constexpr size_t kInlineArgs = 16;

/*! \brief The bytes of one argument, aligned for any scalar or pointer. */
struct alignas(8) ArgSlot {
  unsigned char bytes[8];
};

std::string TypeName(const py::handle& h) { return Py_TYPE(h.ptr())->tp_name; }

class RtcKernel {
 public:
  RtcKernel(std::string name, const py::object& params) : name_(std::move(name)) {
    if (params.is_none()) return;
    known_ = true;
    for (const py::handle& p : params) {
      auto t = p.cast<py::tuple>();
      ParamSpec s;
      s.kind = static_cast<ParamKind>(t[0].cast<int>());
      s.dtype.code = static_cast<uint8_t>(t[1].cast<int>());
      s.dtype.bits = static_cast<uint8_t>(t[2].cast<int>());
      s.label = t[3].cast<std::string>();
      s.const_data = t.size() > 4 && t[4].cast<bool>();
      params_.push_back(std::move(s));
    }
  }

  const std::string& name() const { return name_; }

  void SetFunction(int device_id, std::shared_ptr<FunctionHandle> f) {
    if (device_id < 0 || device_id > 4096) throw ValueError("bad device id");
    if (functions_.size() <= static_cast<size_t>(device_id)) functions_.resize(device_id + 1);
    functions_[device_id] = std::move(f);
  }

  void Launch(const py::object& self, const py::handle& grid, const py::handle& block,
              const py::handle& args, int64_t shared_mem, const py::handle& ctx) {
    uint32_t g[3];
    uint32_t b[3];
    Dims(grid, "grid", g);
    Dims(block, "block", b);
    if (shared_mem < 0 || shared_mem > UINT32_MAX) {
      throw ValueError(Who() + ": shared_mem must be 0 or more bytes, got " +
                       std::to_string(shared_mem));
    }
    if (!PyTuple_Check(args.ptr()) && !PyList_Check(args.ptr())) {
      throw DTypeError(Who() + ": args must be a tuple or list of arguments, got " +
                       TypeName(args));
    }
    py::sequence seq = py::reinterpret_borrow<py::sequence>(args);
    const size_t n = static_cast<size_t>(PySequence_Fast_GET_SIZE(seq.ptr()));
    PyObject** items = PySequence_Fast_ITEMS(seq.ptr());
    if (known_ && n != params_.size()) {
      std::string sig;
      for (const ParamSpec& p : params_) sig += (sig.empty() ? "" : ", ") + p.label;
      throw DTypeError(Who() + " takes " + std::to_string(params_.size()) + " argument" +
                       (params_.size() == 1 ? "" : "s") + " (" + sig + "), got " +
                       std::to_string(n));
    }
    std::array<ArgSlot, kInlineArgs> inline_slots;
    std::array<void*, kInlineArgs> inline_ptrs;
    std::vector<ArgSlot> heap_slots;
    std::vector<void*> heap_ptrs;
    ArgSlot* slots = inline_slots.data();
    void** ptrs = inline_ptrs.data();
    if (n > kInlineArgs) {
      heap_slots.resize(n);
      heap_ptrs.resize(n);
      slots = heap_slots.data();
      ptrs = heap_ptrs.data();
    }
    int device = -1;
    int device_from = -1;
    if (!ctx.is_none()) {
      const DLContext c = ctx.cast<DLContext>();
      if (c.device_type != rtc_binding::RtcDeviceType()) {
        throw ValueError(Who() + ": ctx must be a " + DeviceTypeName(rtc_binding::RtcDeviceType()) +
                         " device (the device type offering " DLARRAY_EXT_RTC_V1 "), got " +
                         ContextToString(c));
      }
      device = c.device_id;
    }
    for (size_t i = 0; i < n; ++i) {
      ptrs[i] = &slots[i];
      Pack(py::handle(items[i]), i, &slots[i], &device, &device_from);
    }
    if (device < 0) device = 0;  // no GPU array and no ctx: the first GPU
    const std::shared_ptr<FunctionHandle> f = FunctionFor(self, device);
    if (!known_ && f->info.num_params >= 0 && static_cast<size_t>(f->info.num_params) != n) {
      throw DTypeError(Who() + " takes " + std::to_string(f->info.num_params) +
                       " arguments (as the driver reports), got " + std::to_string(n));
    }
    const DLArrayRtcExtV1* ext = Rtc();
    Call("launch", [&] {
      return ext->launch(f->function, g, b, static_cast<uint32_t>(shared_mem), ptrs, device,
                         nullptr);
    });
  }

 private:
  std::string Who() const { return "dlarray.rtc: kernel '" + name_ + "'"; }

  std::string Arg(size_t i) const {
    std::string s = "argument " + std::to_string(i);
    if (known_ && i < params_.size()) s += " (" + params_[i].label + ")";
    return s;
  }

  void Dims(const py::handle& h, const char* what, uint32_t out[3]) const {
    out[0] = out[1] = out[2] = 1;
    auto one = [&](const py::handle& v, int i) {
      if (!PyLong_Check(v.ptr()) || PyBool_Check(v.ptr())) {
        throw DTypeError(Who() + ": " + what + " sizes must be ints, got " + TypeName(v));
      }
      const long long x = PyLong_AsLongLong(v.ptr());
      if (x == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        throw ValueError(Who() + ": " + what + " size out of range");
      }
      if (x < 1 || x > UINT32_MAX) {
        throw ValueError(Who() + ": " + what + " sizes must be at least 1, got " +
                         std::to_string(x) + " in " + std::string(py::repr(h)));
      }
      out[i] = static_cast<uint32_t>(x);
    };
    if (PyTuple_Check(h.ptr()) || PyList_Check(h.ptr())) {
      py::sequence s = py::reinterpret_borrow<py::sequence>(h);
      const size_t n = s.size();
      if (n < 1 || n > 3) {
        throw ValueError(Who() + ": " + what + " must have 1 to 3 sizes, got " +
                         std::string(py::repr(h)));
      }
      for (size_t i = 0; i < n; ++i) one(s[i], static_cast<int>(i));
      return;
    }
    one(h, 0);
  }

  void Pack(const py::handle& h, size_t i, ArgSlot* slot, int* device, int* device_from) const {
    const ParamSpec* p = known_ ? &params_[i] : nullptr;
    std::memset(slot->bytes, 0, sizeof slot->bytes);
    static PyTypeObject* ndarray_type =
        reinterpret_cast<PyTypeObject*>(py::type::of<NDArray>().ptr());
    PyObject* o = h.ptr();
    if (Py_TYPE(o) == ndarray_type || PyType_IsSubtype(Py_TYPE(o), ndarray_type)) {
      if (p != nullptr && p->kind == ParamKind::kScalar) {
        throw DTypeError(Who() + ": " + Arg(i) + " is a scalar, got an NDArray");
      }
      const NDArray& nd = h.cast<const NDArray&>();
      RequireWritable(nd, p, i);
      const DLArray* dl = nd.dl();
      if (dl->strides != nullptr) {
        throw ValueError(Who() + ": " + Arg(i) +
                         " is a strided view: kernels take compact arrays (pass a compact copy)");
      }
      if (p != nullptr && p->kind == ParamKind::kPointer && p->dtype.bits != 0 &&
          (p->dtype.code != dl->dtype.code || p->dtype.bits != dl->dtype.bits)) {
        throw DTypeError(Who() + ": " + Arg(i) + " points to " + DTypeToString(p->dtype) +
                         ", got an array of " + DTypeToString(dl->dtype));
      }
      if (dl->ctx.device_type != rtc_binding::RtcDeviceType()) {
        throw ValueError(Who() + ": " + Arg(i) + " is on " + ContextToString(dl->ctx) +
                         ": rtc kernels take arrays on " +
                         DeviceTypeName(rtc_binding::RtcDeviceType()) +
                         " devices (the device type offering " DLARRAY_EXT_RTC_V1 ")");
      }
      if (*device < 0) {
        *device = dl->ctx.device_id;
        *device_from = static_cast<int>(i);
      } else if (dl->ctx.device_id != *device) {
        throw ValueError(Who() + ": " + Arg(i) + " is on " + ContextToString(dl->ctx) +
                         (*device_from >= 0 ? " but " + Arg(static_cast<size_t>(*device_from))
                                            : std::string(" but ctx")) +
                         " is on " + ContextToString(DLContext{dl->ctx.device_type, *device}));
      }
      void* ptr = static_cast<char*>(dl->data) + dl->byte_offset;
      std::memcpy(slot->bytes, &ptr, sizeof ptr);
      return;
    }
    if (h.is_none()) {
      if (p != nullptr && p->kind == ParamKind::kScalar) {
        throw DTypeError(Who() + ": " + Arg(i) + " is a scalar, got None");
      }
      return;  // a null pointer
    }
    if (p != nullptr && p->kind == ParamKind::kPointer) {
      throw DTypeError(Who() + ": " + Arg(i) + " takes an NDArray on a GPU (or None), got " +
                       TypeName(h));
    }
    const bool is_bool = PyBool_Check(o);
    if (is_bool || PyLong_Check(o) || PyFloat_Check(o)) {
      DLArrayDType t = p != nullptr && p->kind == ParamKind::kScalar && p->dtype.bits != 0
                           ? p->dtype
                       : is_bool          ? DLArrayDType{kDLArrayUInt, 8, 1}
                       : PyFloat_Check(o) ? DLArrayDType{kDLArrayFloat, 64, 1}
                                          : DLArrayDType{kDLArrayInt, 64, 1};
      StorePython(h, i, t, slot);
      return;
    }
    DLArrayDType t{};
    if (NumpyScalar(o, &t, slot)) {
      if (p != nullptr && p->kind == ParamKind::kScalar && p->dtype.bits != 0 &&
          (p->dtype.code != t.code || p->dtype.bits != t.bits)) {
        throw DTypeError(Who() + ": " + Arg(i) + " is " + DTypeToString(p->dtype) + ", got numpy." +
                         DTypeToString(t) + ": pass numpy." + DTypeToString(p->dtype) +
                         "(...) or a Python number");
      }
      return;
    }
    throw DTypeError(Who() + ": " + Arg(i) + ": cannot pass " + TypeName(h) +
                     " (NDArray, int, float, bool, a NumPy scalar or None)");
  }

  // NVRTC kernels write through any pointer whose data is not const, and nothing says which
  // they do: a read-only array (over a read-only NumPy array or DLPack import) is passed only to a
  // parameter declared as a pointer to const data (const float* x), never to one whose
  // signature is unknown (templates, macros, modules from files).
  void RequireWritable(const NDArray& nd, const ParamSpec* p, size_t i) const {
    if (!nd.array->read_only()) return;
    if (p != nullptr && p->kind == ParamKind::kPointer && p->const_data) return;
    throw ValueError(Who() + ": " + Arg(i) + " is given a read-only array, which the kernel " +
                     (p == nullptr ? "may write (its signature is not known)"
                                   : "may write (not a pointer to const data)") +
                     ": declare the parameter const (const T*) or pass a writable copy (.copy())");
  }

  // A NumPy scalar (np.float32(1), ...): its dtype and bytes, read through the buffer protocol.
  static bool NumpyScalar(PyObject* o, DLArrayDType* t, ArgSlot* slot) {
    static PyObject* generic =
        py::object(py::module_::import("numpy").attr("generic")).release().ptr();
    if (PyObject_IsInstance(o, generic) != 1) {
      PyErr_Clear();
      return false;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(o, &view, PyBUF_FORMAT) != 0) {
      PyErr_Clear();
      return false;
    }
    const char f = view.format != nullptr && view.format[0] != '\0' ? view.format[0] : '?';
    const size_t size = static_cast<size_t>(view.len);
    uint8_t code = kDLArrayInt;
    if (f == 'f' || f == 'd' || f == 'e') {
      code = kDLArrayFloat;
    } else if (f == 'B' || f == 'H' || f == 'I' || f == 'L' || f == 'Q' || f == '?') {
      code = kDLArrayUInt;
    } else if (f != 'b' && f != 'h' && f != 'i' && f != 'l' && f != 'q') {
      PyBuffer_Release(&view);
      return false;  // complex, strings, ...: not a kernel scalar
    }
    const bool fits = size >= 1 && size <= sizeof slot->bytes;
    if (fits) std::memcpy(slot->bytes, view.buf, size);
    PyBuffer_Release(&view);
    if (!fits) return false;
    *t = DLArrayDType{code, static_cast<uint8_t>(size * 8), 1};
    return true;
  }

  // A Python bool, int or float as a scalar of dtype t.
  void StorePython(const py::handle& h, size_t i, DLArrayDType t, ArgSlot* slot) const {
    PyObject* o = h.ptr();
    if (t.code == kDLArrayFloat) {
      const double v = PyFloat_AsDouble(o);
      if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        throw ValueError(Who() + ": " + Arg(i) + ": " + std::string(py::repr(h)) +
                         " is too large for " + DTypeToString(t));
      }
      if (t.bits == 32) {
        const float f = static_cast<float>(v);
        std::memcpy(slot->bytes, &f, sizeof f);
      } else if (t.bits == 64) {
        std::memcpy(slot->bytes, &v, sizeof v);
      } else {
        throw DTypeError(Who() + ": " + Arg(i) + " is " + DTypeToString(t) +
                         ": pass a NumPy scalar of that type");
      }
      return;
    }
    if (PyFloat_Check(o)) {
      throw DTypeError(Who() + ": " + Arg(i) + " is " + DTypeToString(t) + ", got float " +
                       std::string(py::repr(h)));
    }
    const int bits = t.bits;
    if (t.code == kDLArrayUInt) {
      const unsigned long long v = PyLong_AsUnsignedLongLong(o);
      const bool bad = (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) ||
                       (bits < 64 && v >> bits != 0);
      if (bad) {
        PyErr_Clear();
        throw ValueError(Who() + ": " + Arg(i) + ": " + std::string(py::repr(h)) +
                         " does not fit " + DTypeToString(t));
      }
      std::memcpy(slot->bytes, &v, static_cast<size_t>(bits / 8));  // little-endian
      return;
    }
    const long long v = PyLong_AsLongLong(o);
    const long long lo = bits >= 64 ? LLONG_MIN : -(1LL << (bits - 1));
    const long long hi = bits >= 64 ? LLONG_MAX : (1LL << (bits - 1)) - 1;
    if ((v == -1 && PyErr_Occurred()) || v < lo || v > hi) {
      PyErr_Clear();
      throw ValueError(Who() + ": " + Arg(i) + ": " + std::string(py::repr(h)) + " does not fit " +
                       DTypeToString(t));
    }
    std::memcpy(slot->bytes, &v, static_cast<size_t>(bits / 8));  // little-endian
  }

  std::shared_ptr<FunctionHandle> FunctionFor(const py::object& self, int device) {
    if (static_cast<size_t>(device) < functions_.size() && functions_[device]) {
      return functions_[device];
    }
    // First launch on this GPU: the Python side compiles (or finds in its caches) and loads.
    auto f = self.attr("_load")(device).cast<std::shared_ptr<FunctionHandle>>();
    SetFunction(device, f);
    return f;
  }

  std::string name_;
  bool known_ = false;
  std::vector<ParamSpec> params_;
  std::vector<std::shared_ptr<FunctionHandle>> functions_;
};

}  // namespace

void BindRtcKernel(py::module_& m) {
  py::class_<RtcKernel>(m, "_RtcKernel", py::dynamic_attr(),
                        "Base of dlarray.rtc's kernels: the launch path.")
      .def(py::init<std::string, py::object>(), py::arg("name"), py::arg("params"))
      .def("_set_function", &RtcKernel::SetFunction, py::arg("device_id"), py::arg("function"))
      .def(
          "__call__",
          [](const py::object& self, const py::handle& grid, const py::handle& block,
             const py::handle& args, int64_t shared_mem, const py::handle& ctx) {
            self.cast<RtcKernel&>().Launch(self, grid, block, args, shared_mem, ctx);
          },
          py::arg("grid"), py::arg("block"), py::arg("args"), py::kw_only(),
          py::arg("shared_mem") = 0, py::arg("ctx") = py::none(),
          R"doc(Launches the kernel on the stream of its arguments' GPU.

Parameters
----------
grid : int or tuple of int
    Blocks in x (and y, z).
block : int or tuple of int
    Threads per block in x (and y, z).
args : tuple or list
    One value per kernel parameter: NDArrays on one GPU (device pointers), None (a null
    pointer), Python ints, floats and bools (converted to the parameter's type from the
    kernel's signature) or NumPy scalars (their own type).
shared_mem : int, optional
    Bytes of dynamic shared memory per block (default 0).
ctx : DLContext, optional
    The GPU, for kernels that take no array (default: the arrays' GPU, else gpu(0)).

Raises
------
TypeError
    A wrong number of arguments, or an argument of the wrong type.
ValueError
    A grid, block or shared memory size out of the kernel's or the device's range, or arrays
    on different devices or on the CPU.
RuntimeError
    NVRTC, the driver or the GPU is not available, or the launch failed (with CUDA's error
    name). A fault inside the kernel is reported at the next synchronisation.
)doc");
}

}  // namespace rtc_binding
}  // namespace dlarray
