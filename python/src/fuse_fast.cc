// dlarray.fuse's cache hit without Python in the loop: a _FuseLauncher holds one traced
// signature of a fused function (each argument's dtype and shape, or a scalar's type and value),
// the generated kernel and its sizes, and per call only checks the arguments against the
// signature, allocates the result and runs the kernel: on the CPU a call of the generated C++
// function (by its address: an elementwise kernel over [0, n), or a trailing reduction's over
// its outputs and reduced range, on one thread), on a GPU whose kernels come from the rtc
// extension (CUDA through NVRTC) a launch of the loaded kernel through the extension's table,
// as dlarray.rtc's launch path does (rtc_kernel.cc), with the grid and the scalar parameters
// Python chose for the signature (a trailing reduction folded in one launch too: its kernel
// takes a second array after the output, the output again or scratch for the partial totals).
// Any difference (another shape, a view, a subclass, on the CPU a large array that the thread
// pool should split) returns None and the Python path (dlarray/_fuse.py) runs the call as
// before, errors included.
//
// Fused's calls reach it through the class's tp_call slot, set here (_fuse_install_call): a
// pybind11 __call__ would cost more than the rest of the call (its argument tuple, kwargs dict
// and overload dispatch).
#include <dlfcn.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "binding.h"
#include "rtc_binding.h"

namespace dlarray {
namespace {

// The generated C++ kernels: dl_fused(pointers: inputs then output, sizes, then the range:
// elementwise begin, end; a trailing reduction's outputs ob, oe and reduced range rb, re).
using FusedKernel = void (*)(void* const*, const long long*, long long, long long);
using ReduceKernel = void (*)(void* const*, const long long*, long long, long long, long long,
                              long long);

// One positional argument of the signature.
struct Argument {
  bool is_array = false;
  bool read = false;     // an array the kernel reads (its pointer goes in)
  DLArrayDType dtype{};  // an array's
  std::vector<int64_t> shape;
  py::object scalar;  // a scalar's value (compared by exact type and ==)
};

// One kernel argument's bytes (a pointer or a long long), where the launch's argument table
// points.
union KernelArg {
  void* pointer;
  long long value;
};

class FuseLauncher {
 public:
  // kernel: the C++ function's address (0 with `function`), called with the range in `scalars`
  // (2 values: FusedKernel's, 4: ReduceKernel's); function: the loaded rtc kernel (an
  // _RtcFunction) or None, launched with grid and block, its parameters the arrays read, the
  // output, with part >= 0 a second array (0: the output again; more: a new array of that many
  // elements of the output's dtype per call), then `scalars`.
  FuseLauncher(uintptr_t kernel, const py::list& signature, std::vector<int64_t> out_shape,
               const py::handle& out_dtype, std::vector<long long> dims, DLContext ctx,
               int64_t max_elements, const py::object& function, std::vector<uint32_t> grid,
               std::vector<uint32_t> block, const std::vector<long long>& scalars, int64_t part)
      : kernel_(kernel),
        out_shape_(std::move(out_shape)),
        out_dtype_(DTypeFromNumpy(out_dtype)),
        dims_(std::move(dims)),
        ctx_(ctx),
        part_(part) {
    if (!function.is_none()) {
      function_ = function.cast<std::shared_ptr<rtc_binding::FunctionHandle>>();
      if (grid.size() != 3 || block.size() != 3) {
        throw py::value_error("_FuseLauncher: grid and block take 3 sizes each");
      }
      std::copy(grid.begin(), grid.end(), grid_);
      std::copy(block.begin(), block.end(), block_);
    } else if (kernel_ == 0) {
      throw py::value_error("_FuseLauncher: neither a kernel address nor a function");
    }
    // signature: per argument (dtype, shape, read) for an array, or (None, value) for a scalar
    for (const py::handle item : signature) {
      const py::tuple t = item.cast<py::tuple>();
      Argument a;
      if (t[0].is_none()) {
        a.scalar = py::reinterpret_borrow<py::object>(t[1]);
      } else {
        a.is_array = true;
        a.dtype = DTypeFromNumpy(t[0]);
        a.shape = t[1].cast<std::vector<int64_t>>();
        a.read = t[2].cast<bool>();
      }
      args_.push_back(std::move(a));
    }
    int64_t n = 1;
    for (int64_t s : out_shape_) n *= s;
    if (n == 0 || n > max_elements) throw py::value_error("_FuseLauncher: not a small call");
    pointers_.reserve(args_.size() + 2);
    if (function_ != nullptr) {
      // The kernel's parameters: the arrays read, the output (and the second array), then the
      // scalars. Their values live in kernel_args_ (sized once: the table's addresses stay
      // valid).
      size_t arrays = part_ >= 0 ? 2 : 1;
      for (const Argument& a : args_) arrays += a.read ? 1 : 0;
      kernel_args_.resize(arrays + scalars.size());
      for (size_t j = 0; j < scalars.size(); ++j) kernel_args_[arrays + j].value = scalars[j];
      for (KernelArg& arg : kernel_args_) arg_table_.push_back(&arg);
    } else if (part_ >= 0 || (scalars.size() != 2 && scalars.size() != 4)) {
      throw py::value_error(
          "_FuseLauncher: a C++ kernel takes no second array, and 2 or 4 range values");
    } else {
      range_ = scalars;
    }
  }

  // The result of the call (a new reference), or None where the arguments differ from the
  // signature; `call` is the arguments' tuple.
  PyObject* Call(PyObject* call) {
    const size_t count = static_cast<size_t>(PyTuple_GET_SIZE(call));
    if (count != args_.size()) Py_RETURN_NONE;
    pointers_.clear();
    for (size_t i = 0; i < count; ++i) {
      PyObject* obj = PyTuple_GET_ITEM(call, i);
      const Argument& a = args_[i];
      if (!a.is_array) {
        if (Py_TYPE(obj) != Py_TYPE(a.scalar.ptr())) Py_RETURN_NONE;
        const int same = PyObject_RichCompareBool(obj, a.scalar.ptr(), Py_EQ);
        if (same < 0) throw py::error_already_set();
        if (same == 0) Py_RETURN_NONE;
        continue;
      }
      const Array* x = Exact(obj);
      if (x == nullptr || !x->is_compact() || x->dtype() != a.dtype || x->ctx() != ctx_ ||
          x->shape() != a.shape) {
        Py_RETURN_NONE;
      }
      if (a.read) pointers_.push_back(x->data_ptr());
    }
    NDArray out{Array::Empty(out_shape_, ctx_, out_dtype_)};
    pointers_.push_back(out.array->data_ptr());
    if (function_ != nullptr) {
      // Scratch of the partial totals: freed when this returns, its memory reused only by work
      // queued after the launch on the same stream.
      std::shared_ptr<Array> part;
      if (part_ > 0) part = Array::Empty({part_}, ctx_, out_dtype_);
      if (part_ >= 0) pointers_.push_back(part ? part->data_ptr() : pointers_.back());
      Launch();
    } else {
      RunCpu();
    }
    // py::cast without its type lookups (a hash of the type's name each time)
    static const py::detail::type_info* const info = py::detail::get_type_info(typeid(NDArray));
    auto move = [](const void* p) -> void* {
      return new NDArray(std::move(*static_cast<NDArray*>(const_cast<void*>(p))));
    };
    return py::detail::type_caster_generic::cast(&out, py::return_value_policy::move, nullptr, info,
                                                 nullptr, move)
        .ptr();
  }

 private:
  // The array behind obj when obj is exactly an NDArray made by its constructor, else nullptr.
  static const Array* Exact(PyObject* obj) {
    const NDArray* a = ExactInstance<NDArray>(obj);
    return a != nullptr ? a->array.get() : nullptr;
  }

  // The C++ kernel over range_ on this thread, the GIL held (under 64Ki elements: microseconds).
  void RunCpu() const {
    const long long* dims = dims_.empty() ? nullptr : dims_.data();
    const long long* r = range_.data();
    if (range_.size() == 2) {
      reinterpret_cast<FusedKernel>(kernel_)(pointers_.data(), dims, r[0], r[1]);
    } else {
      reinterpret_cast<ReduceKernel>(kernel_)(pointers_.data(), dims, r[0], r[1], r[2], r[3]);
    }
  }

  // The rtc kernel on the queue of ctx_'s GPU (the stream its ops use), as _RtcKernel does.
  void Launch() {
    for (size_t j = 0; j < pointers_.size(); ++j) kernel_args_[j].pointer = pointers_[j];
    const DLArrayRtcExtV1* ext = rtc_binding::Rtc();
    rtc_binding::Call("launch", [&] {
      return ext->launch(function_->function, grid_, block_, 0, arg_table_.data(), ctx_.device_id,
                         nullptr);
    });
  }

  uintptr_t kernel_;                                       // the C++ kernel's address, or 0
  std::vector<long long> range_;                           // its range arguments (2 or 4)
  std::shared_ptr<rtc_binding::FunctionHandle> function_;  // keeps the module loaded
  uint32_t grid_[3] = {1, 1, 1};
  uint32_t block_[3] = {1, 1, 1};
  std::vector<KernelArg> kernel_args_;
  std::vector<void*> arg_table_;  // &kernel_args_[j]: what the launch reads
  std::vector<Argument> args_;
  std::vector<int64_t> out_shape_;
  DLArrayDType out_dtype_;
  std::vector<long long> dims_;
  DLContext ctx_;
  int64_t part_ = -1;  // the second array: none (-1), the output (0), or its element count
  std::vector<void*> pointers_;  // scratch of one call (the GIL is held throughout)
};

// The launcher behind obj (a _FuseLauncher), or nullptr (None).
FuseLauncher* AsLauncher(PyObject* obj) {
  static PyTypeObject* const type = py::detail::get_type_info(typeid(FuseLauncher))->type;
  if (Py_TYPE(obj) != type) return nullptr;
  auto vh = reinterpret_cast<py::detail::instance*>(obj)->get_value_and_holder();
  return vh.holder_constructed() ? vh.value_ptr<FuseLauncher>() : nullptr;
}

// Fused's tp_call: self._fast(*args) when it takes them, else self._slow(*args, **kwargs).
PyObject* FusedCall(PyObject* self, PyObject* args, PyObject* kwargs) {
  static PyObject* const fast_name = PyUnicode_InternFromString("_fast");
  static PyObject* const slow_name = PyUnicode_InternFromString("_slow");
  if (kwargs == nullptr || PyDict_GET_SIZE(kwargs) == 0) {
    PyObject* fast = PyObject_GetAttr(self, fast_name);
    if (fast == nullptr) return nullptr;
    py::object owned = py::reinterpret_steal<py::object>(fast);
    if (FuseLauncher* launcher = AsLauncher(fast)) {
      try {
        CallGuard guard;
        PyObject* out = launcher->Call(args);
        if (out != Py_None) return out;
        Py_DECREF(out);
      } catch (...) {
        return RaiseCurrentException();
      }
    }
  }
  PyObject* slow = PyObject_GetAttr(self, slow_name);
  if (slow == nullptr) return nullptr;
  PyObject* out = PyObject_Call(slow, args, kwargs);
  Py_DECREF(slow);
  return out;
}

// The address of `name` in the shared library at `path`, loaded now (RTLD_NOW | RTLD_LOCAL) and
// never unloaded, as ctypes leaves a library; OSError with dlerror()'s text where either fails.
// For a generated CPU kernel: ctypes.CDLL makes a Python class per library, a seventh of a warm
// first call of dlarray.fuse.
uintptr_t LoadSymbol(const std::string& path, const std::string& name) {
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  void* symbol = handle != nullptr ? dlsym(handle, name.c_str()) : nullptr;
  if (symbol == nullptr) {
    const char* err = dlerror();
    const std::string message = "dlarray.fuse: cannot load " + name + " from " + path + ": " +
                                (err != nullptr ? err : "no such symbol");
    if (handle != nullptr) dlclose(handle);
    PyErr_SetString(PyExc_OSError, message.c_str());
    throw py::error_already_set();
  }
  return reinterpret_cast<uintptr_t>(symbol);
}

}  // namespace

void BindFuseFast(py::module_& m) {
  py::class_<FuseLauncher>(
      m, "_FuseLauncher",
      "dlarray.fuse's cache hit for one signature, on the CPU or an rtc GPU (private).")
      .def(py::init<uintptr_t, const py::list&, std::vector<int64_t>, const py::handle&,
                    std::vector<long long>, DLContext, int64_t, const py::object&,
                    std::vector<uint32_t>, std::vector<uint32_t>, const std::vector<long long>&,
                    int64_t>(),
           py::arg("kernel"), py::arg("signature"), py::arg("out_shape"), py::arg("out_dtype"),
           py::arg("dims"), py::arg("ctx"), py::arg("max_elements"),
           py::arg("function") = py::none(), py::arg("grid") = std::vector<uint32_t>{},
           py::arg("block") = std::vector<uint32_t>{},
           py::arg("scalars") = std::vector<long long>{}, py::arg("part") = -1)
      .def(
          "__call__",
          [](FuseLauncher& launcher, const py::args& args) {
            return py::reinterpret_steal<py::object>(launcher.Call(args.ptr()));
          },
          "The result of a call with these arguments, or None: the Python path runs it.");
  m.def(
      "_fuse_install_call",
      [](const py::type& cls) {
        // Set after the class is made (a later assignment to cls.__call__ would undo it); the
        // class keeps its Python __call__ for subclasses and explicit lookups.
        reinterpret_cast<PyTypeObject*>(cls.ptr())->tp_call = &FusedCall;
      },
      py::arg("cls"), "Makes cls's calls go through self._fast, then self._slow (private).");
  m.def("_fuse_load_symbol", &LoadSymbol, py::arg("path"), py::arg("name"),
        "The address of symbol name in the shared library at path, loaded for good (private).");
}

}  // namespace dlarray
