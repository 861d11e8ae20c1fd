// DLPack both ways, without copies: NDArray.__dlpack__ / __dlpack_device__ (versioned capsules
// when the consumer asks for DLPack >= 1.0, legacy ones otherwise) and from_dlpack (any
// producer's capsule, with the stream handshake on devices that have streams).
#include "dlarray/dlpack.h"

#include <pybind11/stl.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "binding.h"

namespace dlarray {
namespace {

// What an exported capsule owns: the array (so its memory lives) and the tensor's shape/strides.
struct Export {
  DLArrayManagedTensorVersioned versioned{};
  DLArrayManagedTensor legacy{};
  std::shared_ptr<Array> array;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
};

void DeleteVersioned(DLArrayManagedTensorVersioned* self) {
  delete static_cast<Export*>(self->manager_ctx);
}
void DeleteLegacy(DLArrayManagedTensor* self) { delete static_cast<Export*>(self->manager_ctx); }

bool Finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

// Deletes an export nobody consumed (the capsule still has its unused name).
template <typename T>
void CapsuleDestructor(PyObject* capsule, const char* unused_name) {
  if (!PyCapsule_IsValid(capsule, unused_name)) return;  // consumed: the consumer deletes it
  PyObject *type, *value, *trace;
  PyErr_Fetch(&type, &value, &trace);
  auto* mt = static_cast<T*>(PyCapsule_GetPointer(capsule, unused_name));
  if (mt != nullptr && mt->deleter != nullptr) mt->deleter(mt);
  PyErr_Restore(type, value, trace);
}

void VersionedCapsuleDestructor(PyObject* capsule) {
  CapsuleDestructor<DLArrayManagedTensorVersioned>(capsule, DLARRAY_DLPACK_CAPSULE_VERSIONED);
}
void LegacyCapsuleDestructor(PyObject* capsule) {
  CapsuleDestructor<DLArrayManagedTensor>(capsule, DLARRAY_DLPACK_CAPSULE_LEGACY);
}

// Whether the device's data pointers may be offset on the host (its plugin's capability; others,
// e.g. OpenCL buffers, are handles: their byte_offset is exported as it is).
bool PointerDevice(DLContext ctx) {
  return (DeviceCapabilities(ctx) & DLARRAY_DEVICE_POINTER_ARITHMETIC) != 0;
}

// An int argument that must fit in [lo, hi]: TypeError / OverflowError naming it (pybind11's cast
// would say only "Unable to cast Python instance").
int64_t IntArgument(const py::handle& v, const char* what, int64_t lo, int64_t hi) {
  if (!PyLong_Check(v.ptr()) || PyBool_Check(v.ptr())) {
    throw DTypeError(std::string(what) + " must be an int, got " + TypeName(v));
  }
  int overflow = 0;
  const long long x = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (x == -1 && PyErr_Occurred()) throw py::error_already_set();
  if (overflow != 0 || x < lo || x > hi) {
    PyErr_Format(PyExc_OverflowError, "%s must be in [%lld, %lld], got %R", what,
                 static_cast<long long>(lo), static_cast<long long>(hi), v.ptr());
    throw py::error_already_set();
  }
  return x;
}

// A (first, second) pair of ints that fit in [lo, hi]: max_version, dl_device.
std::pair<int64_t, int64_t> IntPair(const py::handle& v, const char* what, int64_t lo, int64_t hi) {
  if (!PyTuple_Check(v.ptr()) || PyTuple_GET_SIZE(v.ptr()) != 2) {
    throw DTypeError(std::string(what) + " must be a tuple of two ints, got " +
                     (PyTuple_Check(v.ptr()) ? std::string(py::repr(v)) : TypeName(v)));
  }
  return {IntArgument(PyTuple_GET_ITEM(v.ptr(), 0), what, lo, hi),
          IntArgument(PyTuple_GET_ITEM(v.ptr(), 1), what, lo, hi)};
}

// A DLPack stream argument as the device's stream handle: None is the legacy default stream.
void* ConsumerStream(const py::object& stream, DLContext ctx) {
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  if (ctx.device_type == kDLArrayCPU) {
    if (!stream.is_none() && IntArgument(stream, "__dlpack__: stream", kMin, kMax) != -1) {
      throw Error(ErrorKind::kValue, "__dlpack__: stream must be None for cpu arrays, got " +
                                         std::string(py::repr(stream)));
    }
    return nullptr;
  }
  if (stream.is_none()) return reinterpret_cast<void*>(uintptr_t{1});
  const int64_t s = IntArgument(stream, "__dlpack__: stream", kMin, kMax);
  if (s == 0) {
    throw Error(ErrorKind::kValue,
                "__dlpack__: stream 0 is ambiguous (DLPack: 1 is the legacy default stream, 2 "
                "the per-thread default stream)");
  }
  return reinterpret_cast<void*>(static_cast<intptr_t>(s));
}

py::object ExportDLPack(const NDArray& self, const py::object& stream,
                        const py::object& max_version, const py::object& dl_device,
                        const py::object& copy) {
  NDArray src = self;
  bool copied = false;
  const int copy_arg = CopyArgument(copy, "__dlpack__");
  const bool copy_false = copy_arg == 0;
  const bool copy_true = copy_arg == 1;
  // Checked before any work, so that a bad argument never costs a copy.
  bool versioned = false;
  if (!max_version.is_none()) {
    versioned = IntPair(max_version, "__dlpack__: max_version", 0, UINT32_MAX).first >= 1;
  }
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  if (!stream.is_none()) IntArgument(stream, "__dlpack__: stream", kMin, kMax);
  DLContext target = src.array->ctx();
  if (!dl_device.is_none()) {
    const auto dev = IntPair(dl_device, "__dlpack__: dl_device", INT32_MIN, INT32_MAX);
    target = DLContext{static_cast<int>(dev.first), static_cast<int>(dev.second)};
  }
  if (target != src.array->ctx()) {
    if (copy_false) {
      throw py::buffer_error("__dlpack__: the array is on " + ContextToString(src.array->ctx()) +
                             " and copy=False forbids copying it to " + ContextToString(target));
    }
    NDArray compact = src.array->is_compact() ? src : CompactCopy(src);
    NDArray moved{Array::Empty(compact.array->shape(), target, compact.array->dtype())};
    CopyArrays(compact.dl(), moved.dl());
    src = moved;
    copied = true;
  } else if (copy_true) {
    src = CompactCopy(src);
    copied = true;
  }
  const DLContext ctx = src.array->ctx();
  if (ctx.device_type != kDLArrayCPU) {
    void* consumer = ConsumerStream(stream, ctx);
    if (!(py::isinstance<py::int_>(stream) && stream.cast<int64_t>() == -1)) {
      WaitStream(ctx, consumer, DeviceStream(ctx));
    }
  } else {
    ConsumerStream(stream, ctx);
  }
  const bool read_only = src.array->read_only() && !copied;
  if (read_only && !versioned) {
    throw py::buffer_error(
        "__dlpack__: the array is read-only and a legacy (unversioned) DLPack capsule cannot "
        "say so; the consumer must ask for max_version >= (1, 0), or pass copy=True");
  }
  auto* e = new Export();
  e->array = src.array;
  e->shape = src.array->shape();
  e->strides = src.array->strides();
  DLArray t = *src.array->dl();
  t.shape = e->shape.data();
  t.strides = e->strides.data();
  if (PointerDevice(ctx)) {
    t.data = src.array->size() > 0 ? src.array->data_ptr() : nullptr;
    t.byte_offset = 0;
  }
  if (versioned) {
    e->versioned.version = {DLARRAY_DLPACK_MAJOR_VERSION, DLARRAY_DLPACK_MINOR_VERSION};
    e->versioned.manager_ctx = e;
    e->versioned.deleter = &DeleteVersioned;
    e->versioned.flags = (read_only ? DLARRAY_DLPACK_FLAG_READ_ONLY : 0) |
                         (copied ? DLARRAY_DLPACK_FLAG_IS_COPIED : 0);
    e->versioned.dl_tensor = t;
    PyObject* cap =
        PyCapsule_New(&e->versioned, DLARRAY_DLPACK_CAPSULE_VERSIONED, &VersionedCapsuleDestructor);
    if (cap == nullptr) {
      delete e;
      throw py::error_already_set();
    }
    return py::reinterpret_steal<py::object>(cap);
  }
  e->legacy.dl_tensor = t;
  e->legacy.manager_ctx = e;
  e->legacy.deleter = &DeleteLegacy;
  PyObject* cap =
      PyCapsule_New(&e->legacy, DLARRAY_DLPACK_CAPSULE_LEGACY, &LegacyCapsuleDestructor);
  if (cap == nullptr) {
    delete e;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(cap);
}

// Builds the NDArray over a consumed tensor; owner releases the producer's tensor.
NDArray WrapTensor(const DLArray& t, std::shared_ptr<void> owner, bool read_only) {
  if (t.ndim < 0 || t.ndim > DLARRAY_MAX_NDIM || (t.ndim > 0 && t.shape == nullptr)) {
    throw py::buffer_error("from_dlpack: the tensor has an invalid rank " + std::to_string(t.ndim));
  }
  if (!IsStorageDType(t.dtype)) {
    throw DTypeError("from_dlpack: unsupported dtype (code " + std::to_string(t.dtype.code) + ", " +
                     std::to_string(t.dtype.bits) + " bits, " + std::to_string(t.dtype.lanes) +
                     " lanes); supported: bool, int8-64, uint8-64, float16/32/64, bfloat16");
  }
  try {
    return NDArray{ArrayFromDLPack(t, std::move(owner), read_only)};
  } catch (const Error& e) {
    throw Error(e.kind(), std::string("from_dlpack: ") + e.what());
  }
}

// Takes ownership of a capsule's tensor (renaming the capsule so its producer won't free it).
NDArray ConsumeCapsule(const py::handle& capsule) {
  PyObject* cap = capsule.ptr();
  if (PyCapsule_IsValid(cap, DLARRAY_DLPACK_CAPSULE_VERSIONED)) {
    auto* mt = static_cast<DLArrayManagedTensorVersioned*>(
        PyCapsule_GetPointer(cap, DLARRAY_DLPACK_CAPSULE_VERSIONED));
    if (mt->version.major != DLARRAY_DLPACK_MAJOR_VERSION) {
      throw py::buffer_error("from_dlpack: the producer speaks DLPack " +
                             std::to_string(mt->version.major) + "." +
                             std::to_string(mt->version.minor) + "; dlarray reads major version " +
                             std::to_string(DLARRAY_DLPACK_MAJOR_VERSION));
    }
    std::shared_ptr<void> owner(mt, [](void* p) {
      auto* m = static_cast<DLArrayManagedTensorVersioned*>(p);
      if (m->deleter != nullptr && !Finalizing()) m->deleter(m);
    });
    // Ours from here on (also when WrapTensor refuses it: owner then frees it once).
    PyCapsule_SetName(cap, DLARRAY_DLPACK_CAPSULE_VERSIONED_USED);
    return WrapTensor(mt->dl_tensor, owner, (mt->flags & DLARRAY_DLPACK_FLAG_READ_ONLY) != 0);
  }
  if (PyCapsule_IsValid(cap, DLARRAY_DLPACK_CAPSULE_LEGACY)) {
    auto* mt = static_cast<DLArrayManagedTensor*>(
        PyCapsule_GetPointer(cap, DLARRAY_DLPACK_CAPSULE_LEGACY));
    std::shared_ptr<void> owner(mt, [](void* p) {
      auto* m = static_cast<DLArrayManagedTensor*>(p);
      if (m->deleter != nullptr && !Finalizing()) m->deleter(m);
    });
    PyCapsule_SetName(cap, DLARRAY_DLPACK_CAPSULE_LEGACY_USED);
    return WrapTensor(mt->dl_tensor, owner, false);
  }
  throw py::buffer_error(
      "from_dlpack: the capsule is not an unused DLPack tensor (named 'dltensor' or "
      "'dltensor_versioned'); a capsule can be consumed only once");
}

NDArray FromDLPack(const py::object& x, const py::object& device, const py::object& copy) {
  const int copy_arg = CopyArgument(copy, "from_dlpack");
  const bool copy_true = copy_arg == 1;
  const bool copy_false = copy_arg == 0;
  // Checked before the producer is asked: a bad argument must not consume a capsule.
  DLContext want{};
  if (!device.is_none()) {
    py::detail::make_caster<DLContext> caster;
    if (!caster.load(device, true)) {
      throw DTypeError(
          "from_dlpack: device must be a DLContext or a device string ('cpu', "
          "'cuda:0', ...), got " +
          TypeName(device));
    }
    want = py::detail::cast_op<DLContext>(caster);
  }
  NDArray out;
  if (py::isinstance<NDArray>(x)) {
    out = NDArray{x.cast<NDArray>().array};
  } else if (PyCapsule_CheckExact(x.ptr())) {
    out = ConsumeCapsule(x);
  } else {
    // Raw CPython calls on interned names: this is the hot path of every import (method
    // vectorcalls, no bound methods, no kwargs dicts).
    static PyObject* const kDlpack = PyUnicode_InternFromString("__dlpack__");
    static PyObject* const kDevice = PyUnicode_InternFromString("__dlpack_device__");
    PyObject* dev_raw = PyObject_CallMethodNoArgs(x.ptr(), kDevice);
    if (dev_raw == nullptr) {
      if (!PyErr_ExceptionMatches(PyExc_AttributeError)) throw py::error_already_set();
      PyErr_Clear();
      throw DTypeError("from_dlpack: " + TypeName(x) +
                       " has no __dlpack__ / __dlpack_device__ methods (not a DLPack producer)");
    }
    py::object dev = py::reinterpret_steal<py::object>(dev_raw);
    if (!PyTuple_Check(dev_raw) || PyTuple_GET_SIZE(dev_raw) != 2) {
      throw py::buffer_error("from_dlpack: __dlpack_device__ did not return a (type, id) pair");
    }
    // DLPack's device fields are int32: a larger number must not wrap to another device (the
    // audit's 2**32 + 1 read as cpu).
    const auto [type, id] =
        IntPair(dev, "from_dlpack: __dlpack_device__() result", INT32_MIN, INT32_MAX);
    const DLContext ctx =
        ContextFromDLPack(DLContext{static_cast<int32_t>(type), static_cast<int32_t>(id)});
    py::object stream = py::none();
    if (ctx.device_type != kDLArrayCPU) {
      void* ours = DeviceStream(ctx);  // validates that a plugin serves the device
      stream = py::int_(ours == nullptr ? 1 : reinterpret_cast<intptr_t>(ours));
    }
    static PyObject* const versions =
        py::make_tuple(DLARRAY_DLPACK_MAJOR_VERSION, DLARRAY_DLPACK_MINOR_VERSION).release().ptr();
    static PyObject* const kwnames = py::make_tuple("stream", "max_version").release().ptr();
    static PyObject* const kwnames_old = py::make_tuple("stream").release().ptr();
    PyObject* args[3] = {x.ptr(), stream.ptr(), versions};
    const size_t nargs = 1 | PY_VECTORCALL_ARGUMENTS_OFFSET;
    PyObject* result = PyObject_VectorcallMethod(kDlpack, args, nargs, kwnames);
    if (result == nullptr && PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear();  // a producer older than DLPack 1.0: no max_version
      result = PyObject_VectorcallMethod(kDlpack, args, nargs, kwnames_old);
    }
    if (result == nullptr && PyErr_ExceptionMatches(PyExc_AttributeError)) {
      PyErr_Clear();
      throw DTypeError("from_dlpack: " + TypeName(x) +
                       " has no __dlpack__ method (not a DLPack producer)");
    }
    if (result == nullptr) throw py::error_already_set();
    py::object capsule = py::reinterpret_steal<py::object>(result);
    out = ConsumeCapsule(capsule);
  }
  if (!device.is_none()) {
    if (want != out.array->ctx()) {
      if (copy_false) {
        throw Error(ErrorKind::kValue,
                    "from_dlpack: the data is on " + ContextToString(out.array->ctx()) +
                        " and copy=False forbids moving it to " + ContextToString(want));
      }
      NDArray compact = out.array->is_compact() ? out : CompactCopy(out);
      NDArray moved{Array::Empty(compact.array->shape(), want, compact.array->dtype())};
      CopyArrays(compact.dl(), moved.dl());
      return moved;
    }
  }
  return copy_true ? CompactCopy(out) : out;
}

// Keyword arguments of a vectorcall: kwnames[i] names args[nargs + i]. Unknown names raise.
bool TakeKeywords(const char* fn, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                  const char* const* names, py::object* values, int count) {
  const Py_ssize_t nkw = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    const char* key = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, k));
    if (key == nullptr) return false;
    int i = 0;
    while (i < count && std::strcmp(key, names[i]) != 0) ++i;
    if (i == count) {
      PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%s'", fn, key);
      return false;
    }
    values[i] = py::reinterpret_borrow<py::object>(args[nargs + k]);
  }
  return true;
}

// Runs body, turning C++ exceptions into Python ones (the module's translators included).
template <typename Body>
PyObject* Guarded(Body&& body) {
  try {
    CallGuard guard;  // as py::call_guard<CallGuard> on the pybind11 bindings (exit safety)
    return body();
  } catch (...) {
    return RaiseCurrentException();
  }
}

// __dlpack__ and from_dlpack as plain vectorcall functions: pybind11's dispatcher (keyword
// matching, overload resolution) would cost more than the whole exchange.
PyObject* DlpackMethod(PyObject* self, PyObject* const* args, Py_ssize_t nargsf,
                       PyObject* kwnames) {
  return Guarded([&]() -> PyObject* {
    const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != 0) {
      PyErr_SetString(PyExc_TypeError, "__dlpack__() takes keyword arguments only");
      return nullptr;
    }
    static const char* const kNames[4] = {"stream", "max_version", "dl_device", "copy"};
    py::object v[4] = {py::none(), py::none(), py::none(), py::none()};
    if (!TakeKeywords("__dlpack__", args, nargs, kwnames, kNames, v, 4)) return nullptr;
    const NDArray& a = py::handle(self).cast<const NDArray&>();
    return ExportDLPack(a, v[0], v[1], v[2], v[3]).release().ptr();
  });
}

PyObject* DlpackDeviceMethod(PyObject* self, PyObject* /*unused*/) {
  return Guarded([&]() -> PyObject* {
    const DLContext c = py::handle(self).cast<const NDArray&>().array->ctx();
    return Py_BuildValue("(ii)", c.device_type, c.device_id);
  });
}

PyObject* FromDLPackFunction(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargsf,
                             PyObject* kwnames) {
  return Guarded([&]() -> PyObject* {
    const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    static const char* const kNames[3] = {"x", "device", "copy"};
    py::object v[3] = {py::object(), py::none(), py::none()};
    if (nargs > 1) {
      PyErr_SetString(PyExc_TypeError, "from_dlpack() takes 1 positional argument (x)");
      return nullptr;
    }
    if (nargs == 1) v[0] = py::reinterpret_borrow<py::object>(args[0]);
    if (!TakeKeywords("from_dlpack", args, nargs, kwnames, kNames, v, 3)) return nullptr;
    if (!v[0]) {
      PyErr_SetString(PyExc_TypeError, "from_dlpack() missing required argument 'x'");
      return nullptr;
    }
    return py::cast(FromDLPack(v[0], v[1], v[2])).release().ptr();
  });
}

}  // namespace

// A string such as 'no' would be truthy: only None and bools are taken.
int CopyArgument(const py::handle& v, const char* fn) {
  if (v.is_none()) return -1;
  const std::string type = py::str(py::type::handle_of(v).attr("__name__"));
  if (!PyBool_Check(v.ptr()) && type != "bool_" && type != "bool") {
    throw DTypeError(std::string(fn) + ": copy must be True, False or None, got " + TypeName(v));
  }
  return v.cast<bool>() ? 1 : 0;
}

void BindDLPack(py::module_& m, py::class_<NDArray>& cls) {
  static const char* const kDlpackDoc =
      R"doc(Exports the array as a DLPack capsule without copying (array API standard).

Parameters
----------
stream : int, optional
    The consumer's stream (GPU arrays): our pending work is ordered before it with an event.
    None: the legacy default stream; -1: no synchronisation. Must be None for cpu arrays.
max_version : tuple of int, optional
    The highest DLPack version the consumer reads; (1, 0) or higher gives a versioned capsule
    (with the read-only flag), None a legacy one.
dl_device : tuple of int, optional
    (device type, id) to export to; another device than the array's means a copy.
copy : bool, optional
    True: export a copy. False: never copy. None: copy only when needed.

Returns
-------
PyCapsule
    "dltensor_versioned" or "dltensor".

Raises
------
BufferError
    A read-only array asked for as a legacy capsule, or copy=False where a copy is needed.
TypeError
    An argument of the wrong type (stream not an int, max_version or dl_device not a pair of
    ints, copy not a bool).
OverflowError
    A stream past int64, a max_version past uint32 or a dl_device past int32.
ValueError
    A stream that is not allowed (0, or any for cpu arrays).)doc";
  static const char* const kFromDoc =
      R"doc(An NDArray sharing the memory of a DLPack producer, without copying (array API standard).

The producer's pending work is ordered before ours: on a GPU the producer is handed our
stream (an event wait, never a device sync).

Parameters
----------
x : object
    An object with ``__dlpack__`` and ``__dlpack_device__`` (NumPy, PyTorch, CuPy, JAX,
    NDArray, ...), or a DLPack capsule (consumed: it can be used once).
device : DLContext or str, optional
    Where the result must be (a copy when the data is elsewhere).
copy : bool, optional
    True: always copy. False: never copy (ValueError when ``device`` needs one). None: only
    when needed.

Returns
-------
NDArray
    The array; read-only when the producer says so.

Raises
------
BufferError
    The capsule is used or malformed, or the producer cannot export.
TypeError
    ``x`` is not a DLPack producer, its dtype is unsupported, or ``device`` / ``copy`` has the
    wrong type (checked before the producer is asked for a capsule).
OverflowError
    The producer's ``__dlpack_device__`` numbers do not fit DLPack's int32.
ValueError
    ``copy=False`` but ``device`` needs a copy, or the tensor's shape, strides or byte_offset
    reach past what can be addressed (int64 bytes, the address space) or are misaligned.
RuntimeError
    No usable plugin serves the data's device.)doc";
  static PyMethodDef dlpack_def{
      "__dlpack__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&DlpackMethod)),
      METH_FASTCALL | METH_KEYWORDS, kDlpackDoc};
  static PyMethodDef device_def{"__dlpack_device__", &DlpackDeviceMethod, METH_NOARGS,
                                "(DLPack device type, device id): (1, 0) for cpu, (2, i) for "
                                "cuda:i."};
  static PyMethodDef from_def{
      "from_dlpack",
      reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&FromDLPackFunction)),
      METH_FASTCALL | METH_KEYWORDS, kFromDoc};
  auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  for (PyMethodDef* def : {&dlpack_def, &device_def}) {
    py::object descr = py::reinterpret_steal<py::object>(PyDescr_NewMethod(type, def));
    if (!descr) throw py::error_already_set();
    cls.attr(def->ml_name) = descr;
  }
  py::object fn = py::reinterpret_steal<py::object>(
      PyCFunction_NewEx(&from_def, nullptr, m.attr("__name__").ptr()));
  if (!fn) throw py::error_already_set();
  m.attr("from_dlpack") = fn;
}

}  // namespace dlarray
