// NumPy's protocols: __array__ (NumPy 2's copy contract), the buffer protocol on the CPU,
// __cuda_array_interface__ (v3) on the GPU, and zero-copy imports of NumPy arrays and of
// __cuda_array_interface__ producers.
#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#include "binding.h"

namespace dlarray {
namespace {

// NumPy flag bits (numpy/ndarraytypes.h); pybind11 exposes the same values.
constexpr int kNpyAligned = py::detail::npy_api::NPY_ARRAY_ALIGNED_;
constexpr int kNpyWriteable = py::detail::npy_api::NPY_ARRAY_WRITEABLE_;

std::vector<py::ssize_t> ByteStrides(const Array& a) {
  std::vector<py::ssize_t> out;
  const auto item = static_cast<py::ssize_t>(DTypeBytes(a.dtype()));
  for (int64_t s : a.strides()) out.push_back(static_cast<py::ssize_t>(s) * item);
  return out;
}

// A NumPy array over a cpu array's memory; keeps self alive through its base.
py::array SharedNumpy(const py::object& self_obj, const NDArray& self) {
  const Array& a = *self.array;
  py::dtype dt = DTypeToNumpy(a.dtype());
  if (a.size() == 0) return py::array(dt, a.shape());
  std::vector<py::ssize_t> shape(a.shape().begin(), a.shape().end());
  py::array out(dt, shape, ByteStrides(a), a.data_ptr(), self_obj);
  auto* proxy = py::detail::array_proxy(out.ptr());
  if (a.read_only()) {
    proxy->flags &= ~kNpyWriteable;
  } else {
    proxy->flags |= kNpyWriteable;
  }
  return out;
}

// __array__(dtype=None, copy=None): NumPy 2's contract. cpu: share memory unless a copy or
// another dtype is asked for; other devices: a host copy, refused when copy=False.
py::object ArrayProtocol(const py::object& self_obj, const py::object& dtype,
                         const py::object& copy) {
  const NDArray& self = self_obj.cast<const NDArray&>();
  const Array& a = *self.array;
  const int copy_arg = CopyArgument(copy, "__array__");
  const bool copy_false = copy_arg == 0;
  const bool copy_true = copy_arg == 1;
  // The one dtype parser: 'bfloat16' and friends mean what they mean everywhere else, and NumPy
  // gets the dtype object (it knows the name 'bfloat16' only once ml_dtypes is imported).
  const DLArrayDType want = dtype.is_none() ? a.dtype() : DTypeFromNumpy(dtype);
  const bool same_dtype = want == a.dtype();
  if (a.ctx().device_type != kDLArrayCPU) {
    if (copy_false) {
      throw Error(ErrorKind::kValue, "__array__: the array is on " + ContextToString(a.ctx()) +
                                         "; NumPy can use it only through a host copy, which "
                                         "copy=False forbids");
    }
    py::array host = AsNumpy(self);
    return same_dtype ? py::object(host) : host.attr("astype")(DTypeToNumpy(want));
  }
  if (!same_dtype) {
    if (copy_false) {
      throw Error(ErrorKind::kValue, "__array__: converting " + DTypeToString(a.dtype()) + " to " +
                                         DTypeToString(want) +
                                         " needs a copy, which copy=False forbids");
    }
    return SharedNumpy(self_obj, self).attr("astype")(DTypeToNumpy(want));
  }
  py::array shared = SharedNumpy(self_obj, self);
  return copy_true ? shared.attr("copy")() : py::object(shared);
}

const char* BufferFormat(DLArrayDType t) {
  switch (t.code) {
    case kDLArrayFloat:
      return t.bits == 16 ? "e" : t.bits == 32 ? "f" : "d";
    case kDLArrayInt:
      return t.bits == 8 ? "b" : t.bits == 16 ? "h" : t.bits == 32 ? "i" : "q";
    case kDLArrayUInt:
      return t.bits == 8 ? "B" : t.bits == 16 ? "H" : t.bits == 32 ? "I" : "Q";
    case kDLArrayBool:
      return "?";
    case kDLArrayComplex:
      return t.bits == 64 ? "Zf" : "Zd";
    default:
      return nullptr;
  }
}

py::buffer_info BufferOf(const NDArray& self) {
  const Array& a = *self.array;
  if (a.ctx().device_type != kDLArrayCPU) {
    throw py::buffer_error("the buffer protocol serves host memory; this array is on " +
                           ContextToString(a.ctx()) + " (use asnumpy() or DLPack)");
  }
  const char* format = BufferFormat(a.dtype());
  if (format == nullptr) {
    throw py::buffer_error("dtype " + DTypeToString(a.dtype()) +
                           " has no buffer format; use numpy.asarray() (ml_dtypes) or DLPack");
  }
  std::vector<py::ssize_t> shape(a.shape().begin(), a.shape().end());
  return py::buffer_info(
      a.size() > 0 ? a.data_ptr() : nullptr, static_cast<py::ssize_t>(DTypeBytes(a.dtype())),
      format, static_cast<py::ssize_t>(shape.size()), shape, ByteStrides(a), a.read_only());
}

// __cuda_array_interface__ (version 3) of a GPU array.
py::dict CudaArrayInterface(const NDArray& self) {
  const Array& a = *self.array;
  if (a.ctx().device_type != kDLArrayCUDA) {
    throw py::attribute_error("__cuda_array_interface__: the array is on " +
                              ContextToString(a.ctx()) + ", not on a CUDA device");
  }
  if (a.dtype().code == kDLArrayBfloat) {
    throw DTypeError(
        "__cuda_array_interface__ has no type string for bfloat16; exchange it through DLPack");
  }
  py::dict d;
  d["shape"] = py::tuple(py::cast(a.shape()));
  d["typestr"] = DTypeToNumpy(a.dtype()).attr("str");
  d["data"] = py::make_tuple(reinterpret_cast<uintptr_t>(a.size() > 0 ? a.data_ptr() : nullptr),
                             a.read_only());
  d["strides"] =
      a.is_compact() ? py::object(py::none()) : py::object(py::tuple(py::cast(ByteStrides(a))));
  void* stream = DeviceStream(a.ctx());
  d["stream"] = stream == nullptr ? py::object(py::int_(1))
                                  : py::object(py::int_(reinterpret_cast<uintptr_t>(stream)));
  d["version"] = 3;
  return d;
}

// A field of a producer's __cuda_array_interface__ as T: ValueError when it is missing, TypeError
// naming it (instead of pybind11's cast error) when it is not `what`.
template <typename T>
T InterfaceField(const py::dict& cai, const char* key, const char* what) {
  if (!cai.contains(key)) {
    throw Error(ErrorKind::kValue, std::string("__cuda_array_interface__ has no '") + key + "'");
  }
  py::object v = cai[key];
  try {
    return v.cast<T>();
  } catch (const py::cast_error&) {
    throw DTypeError(std::string("__cuda_array_interface__['") + key + "'] must be " + what +
                     ", got " + TypeName(v));
  }
}

// An NDArray over a __cuda_array_interface__ producer's memory on ctx (the interface does not
// name the GPU), ordered after the producer's stream.
NDArray FromCudaArrayInterface(const py::object& obj, const DLContext& ctx) {
  py::object interface = py::getattr(obj, "__cuda_array_interface__", py::none());
  if (!py::isinstance<py::dict>(interface)) {
    throw DTypeError("from_cuda_array_interface: obj (" + TypeName(obj) +
                     ") has no __cuda_array_interface__ dict");
  }
  py::dict cai = interface.cast<py::dict>();
  if (cai.contains("mask") && !cai["mask"].is_none()) {
    throw Error(ErrorKind::kValue, "__cuda_array_interface__: masked arrays are not supported");
  }
  const DLArrayDType dtype = DTypeFromNumpy(InterfaceField<py::object>(cai, "typestr", "a str"));
  const auto shape = InterfaceField<std::vector<int64_t>>(cai, "shape", "a tuple of ints");
  const auto data =
      InterfaceField<std::pair<uintptr_t, bool>>(cai, "data", "a (pointer, read_only) pair");
  std::vector<int64_t> strides;
  if (cai.contains("strides") && !cai["strides"].is_none()) {
    const int64_t item = static_cast<int64_t>(DTypeBytes(dtype));
    for (int64_t s : InterfaceField<std::vector<int64_t>>(cai, "strides", "a tuple of ints")) {
      if (s % item != 0) {
        throw Error(ErrorKind::kValue, "__cuda_array_interface__: stride " + std::to_string(s) +
                                           " is not a multiple of the item size");
      }
      strides.push_back(s / item);
    }
  }
  // The interface's pointers are CUDA addresses: on any other device an integer from the
  // producer would be taken as that device's memory (on cpu: read at a made-up address).
  if (ctx.device_type != kDLArrayCUDA) {
    throw Error(ErrorKind::kValue, "from_cuda_array_interface: ctx must be a cuda device, got " +
                                       ContextToString(ctx));
  }
  if (cai.contains("stream") && !cai["stream"].is_none()) {
    const auto stream = InterfaceField<intptr_t>(cai, "stream", "an int");
    WaitStream(ctx, DeviceStream(ctx), reinterpret_cast<void*>(stream));
  }
  return NDArray{Array::FromMemory(reinterpret_cast<void*>(data.first), 0, ctx, dtype, shape,
                                   strides, PythonOwner(obj), data.second)};
}

}  // namespace

std::shared_ptr<Array> ShareNumpy(const py::array& arr) {
  const DLArrayDType dtype = DTypeFromNumpy(arr.dtype());
  const int flags = py::detail::array_proxy(arr.ptr())->flags;
  const char order = arr.dtype().attr("byteorder").cast<std::string>()[0];
  if ((flags & kNpyAligned) == 0 || order == '>') return nullptr;
  const int64_t item = static_cast<int64_t>(DTypeBytes(dtype));
  std::vector<int64_t> shape(arr.shape(), arr.shape() + arr.ndim());
  std::vector<int64_t> strides;
  for (py::ssize_t d = 0; d < arr.ndim(); ++d) {
    if (arr.strides()[d] % item != 0) return nullptr;
    strides.push_back(arr.strides()[d] / item);
  }
  return Array::FromMemory(const_cast<void*>(arr.data()), 0, DLContext{kDLArrayCPU, 0}, dtype,
                           shape, strides, PythonOwner(arr), (flags & kNpyWriteable) == 0);
}

void BindNumpyInterop(py::module_& m, py::class_<NDArray>& cls) {
  cls.def("__array__", &ArrayProtocol, py::arg("dtype") = py::none(), py::arg("copy") = py::none(),
          "NumPy's conversion: shares cpu memory unless a copy or another dtype is asked for.",
          Guard())
      .def_buffer(&BufferOf)
      .def_property_readonly("__cuda_array_interface__", &CudaArrayInterface,
                             "The CUDA array interface (version 3) of a GPU array.");
  m.def(
      "share_numpy",
      [](const py::array& arr) {
        std::shared_ptr<Array> a = ShareNumpy(arr);
        if (!a) return py::object(py::none());
        return py::cast(NDArray{a});
      },
      py::arg("arr"),
      "A cpu NDArray over a NumPy array's memory (no copy), or None when its layout cannot be "
      "shared (byte order, alignment).",
      Guard());
  m.def("from_cuda_array_interface", &FromCudaArrayInterface, py::arg("obj"), py::arg("ctx"),
        "An NDArray on ctx over the memory of a __cuda_array_interface__ producer (no copy).",
        Guard());
}

}  // namespace dlarray
