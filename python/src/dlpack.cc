// DLPack both ways, without copies: NDArray.__dlpack__ / __dlpack_device__ (versioned capsules
// when the consumer asks for DLPack >= 1.0, legacy ones otherwise) and from_dlpack (any
// producer's capsule, with the stream handshake on devices that have streams).
#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#include "binding.h"
#include "dlarray/dlpack.h"

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

// Device types whose data pointers may be offset on the host (others, e.g. OpenCL buffers, are
// handles: their byte_offset is exported as it is).
bool PointerDevice(int device_type) {
  return device_type == kDLArrayCPU || device_type == kDLArrayCUDA;
}

// A DLPack stream argument as the device's stream handle: None is the legacy default stream.
void* ConsumerStream(const py::object& stream, DLContext ctx) {
  if (ctx.device_type == kDLArrayCPU) {
    if (!stream.is_none() && !(py::isinstance<py::int_>(stream) && stream.cast<int64_t>() == -1)) {
      throw Error(ErrorKind::kValue, "__dlpack__: stream must be None for cpu arrays, got " +
                                         std::string(py::repr(stream)));
    }
    return nullptr;
  }
  if (stream.is_none()) return reinterpret_cast<void*>(uintptr_t{1});
  if (!py::isinstance<py::int_>(stream)) {
    throw DTypeError("__dlpack__: stream must be an int or None, got " + TypeName(stream));
  }
  const int64_t s = stream.cast<int64_t>();
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
  const bool copy_false = !copy.is_none() && !copy.cast<bool>();
  const bool copy_true = !copy.is_none() && copy.cast<bool>();
  DLContext target = src.array->ctx();
  if (!dl_device.is_none()) {
    const auto dev = dl_device.cast<std::pair<int, int>>();
    target = DLContext{dev.first, dev.second};
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
  bool versioned = false;
  if (!max_version.is_none()) {
    const auto v = max_version.cast<std::pair<int, int>>();
    versioned = v.first >= 1;
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
  if (PointerDevice(ctx.device_type)) {
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
    PyObject* cap = PyCapsule_New(&e->versioned, DLARRAY_DLPACK_CAPSULE_VERSIONED,
                                  &VersionedCapsuleDestructor);
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

// The context a DLPack device is read as: cpu, cuda; pinned host memory is cpu, managed memory
// is the GPU's. Anything else must be served by a plugin of that device type.
DLContext ContextOfDLPack(int32_t type, int32_t id) {
  if (type == kDLArrayPackCUDAHost) return DLContext{kDLArrayCPU, 0};
  if (type == kDLArrayPackCUDAManaged) return DLContext{kDLArrayCUDA, id};
  return DLContext{type, id};
}

// Builds the NDArray over a consumed tensor; owner releases the producer's tensor.
NDArray WrapTensor(const DLArray& t, std::shared_ptr<void> owner, bool read_only) {
  if (t.ndim < 0 || t.ndim > DLARRAY_MAX_NDIM || (t.ndim > 0 && t.shape == nullptr)) {
    throw py::buffer_error("from_dlpack: the tensor has an invalid rank " +
                           std::to_string(t.ndim));
  }
  if (!IsStorageDType(t.dtype)) {
    throw DTypeError("from_dlpack: unsupported dtype (code " + std::to_string(t.dtype.code) +
                     ", " + std::to_string(t.dtype.bits) + " bits, " +
                     std::to_string(t.dtype.lanes) +
                     " lanes); supported: bool, int8-64, uint8-64, float16/32/64, bfloat16");
  }
  std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
  std::vector<int64_t> strides;
  if (t.strides != nullptr) strides.assign(t.strides, t.strides + t.ndim);
  const DLContext ctx = ContextOfDLPack(t.ctx.device_type, t.ctx.device_id);
  return NDArray{Array::FromMemory(t.data, t.byte_offset, ctx, t.dtype, shape, strides,
                                   std::move(owner), read_only)};
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
    auto* mt =
        static_cast<DLArrayManagedTensor*>(PyCapsule_GetPointer(cap, DLARRAY_DLPACK_CAPSULE_LEGACY));
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
  const bool copy_true = !copy.is_none() && copy.cast<bool>();
  const bool copy_false = !copy.is_none() && !copy.cast<bool>();
  NDArray out;
  if (py::isinstance<NDArray>(x)) {
    out = NDArray{x.cast<NDArray>().array};
  } else if (PyCapsule_CheckExact(x.ptr())) {
    out = ConsumeCapsule(x);
  } else {
    if (!py::hasattr(x, "__dlpack__")) {
      throw DTypeError("from_dlpack: " + TypeName(x) +
                       " has no __dlpack__ method (not a DLPack producer)");
    }
    const auto dev = x.attr("__dlpack_device__")().cast<std::pair<int, int>>();
    const DLContext ctx = ContextOfDLPack(dev.first, dev.second);
    py::object stream = py::none();
    if (ctx.device_type != kDLArrayCPU) {
      void* ours = DeviceStream(ctx);  // validates that a plugin serves the device
      stream = py::int_(ours == nullptr ? 1 : reinterpret_cast<intptr_t>(ours));
    }
    static py::object* versions = new py::object(py::make_tuple(DLARRAY_DLPACK_MAJOR_VERSION,
                                                                DLARRAY_DLPACK_MINOR_VERSION));
    py::object dlpack = x.attr("__dlpack__");
    py::object capsule;
    try {
      capsule = dlpack(py::arg("stream") = stream, py::arg("max_version") = *versions);
    } catch (py::error_already_set& e) {
      if (!e.matches(PyExc_TypeError)) throw;
      capsule = dlpack(py::arg("stream") = stream);  // a producer older than DLPack 1.0
    }
    out = ConsumeCapsule(capsule);
  }
  if (!device.is_none()) {
    const DLContext want = device.cast<DLContext>();
    if (want != out.array->ctx()) {
      if (copy_false) {
        throw Error(ErrorKind::kValue, "from_dlpack: the data is on " +
                                           ContextToString(out.array->ctx()) +
                                           " and copy=False forbids moving it to " +
                                           ContextToString(want));
      }
      NDArray compact = out.array->is_compact() ? out : CompactCopy(out);
      NDArray moved{Array::Empty(compact.array->shape(), want, compact.array->dtype())};
      CopyArrays(compact.dl(), moved.dl());
      return moved;
    }
  }
  return copy_true ? CompactCopy(out) : out;
}

}  // namespace

void BindDLPack(py::module_& m, py::class_<NDArray>& cls) {
  cls.def("__dlpack__", &ExportDLPack, py::kw_only(), py::arg("stream") = py::none(),
          py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(),
          py::arg("copy") = py::none(),
          "Exports the array as a DLPack capsule without copying (array API standard).")
      .def(
          "__dlpack_device__",
          [](const NDArray& s) {
            return py::make_tuple(s.array->ctx().device_type, s.array->ctx().device_id);
          },
          "(DLPack device type, device id): (1, 0) for cpu, (2, i) for cuda:i.");
  m.def("from_dlpack", &FromDLPack, py::arg("x"), py::kw_only(), py::arg("device") = py::none(),
        py::arg("copy") = py::none(),
        "An NDArray sharing the memory of a DLPack producer (or capsule), without copying.");
}

}  // namespace dlarray
