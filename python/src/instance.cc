// The Python NDArray instances of the fast paths (x + y, x[0], the functions): made and freed
// without pybind11's generic instance machinery, and kept for reuse as CPython keeps its floats.
// What that machinery cost a 1-element x[0] (callgrind, instructions of ~1,830 per call):
// py::cast's and init_instance's type lookups (hashes of the type's name); make_new_instance's and
// clear_instance's look-ups of the type's pybind11 bases (a hash-map search each); the registry
// of live instances (a hash-map node and two hashed searches); the save and restore of the Python
// error around every destructor; malloc and free of the object and of its NDArray value.
#include <new>
#include <utility>

#include "fast_path.h"

namespace dlarray {
namespace {

using Holder = py::class_<NDArray>::holder_type;
static_assert(sizeof(Holder) <= sizeof(void*) * py::detail::instance_simple_holder_in_ptrs(),
              "NDArray's holder fits pybind11's simple layout");

PyTypeObject* NDArrayType() {
  static PyTypeObject* const type = py::detail::get_type_info(typeid(NDArray))->type;
  return type;
}

// Whether NDArray instances have pybind11's simple layout (one pybind11 type, a one-pointer
// holder: the value pointer and the holder in the instance), which the code below writes and
// reads directly. So it is; the generic path remains for a change of the class.
bool SimpleLayout() {
  static const bool simple = py::detail::all_type_info(NDArrayType()).size() == 1;
  return simple;
}

// Instances that Dealloc kept, their Array's memory released, for NewInstance and NewSubarray:
// each keeps its memory, its NDArray value (with the emptied Array, if unshared) and its
// reference to the type. Both run with the GIL held (they make and free
// Python objects), which guards the cache. Builds that count references or track objects get no
// cache (an object taken from it would miss their bookkeeping).
#if defined(Py_REF_DEBUG) || defined(Py_TRACE_REFS) || defined(Py_GIL_DISABLED)
constexpr int kCachedInstances = 0;
#else
constexpr int kCachedInstances = 64;
#endif
PyObject* g_cached[kCachedInstances > 0 ? kCachedInstances : 1];
int g_num_cached = 0;

NDArray* Value(PyObject* obj) {
  return static_cast<NDArray*>(
      reinterpret_cast<py::detail::instance*>(obj)->simple_value_holder[0]);
}

// A kept instance made live again: one reference, the caller's (as tp_alloc gives it).
void Revive(PyObject* obj) {
#if PY_VERSION_HEX >= 0x03090000
  Py_SET_REFCNT(obj, 1);
#else
  Py_REFCNT(obj) = 1;
#endif
}

// pybind11's way: make_new_instance, then the value and its holder.
PyObject* NewGenericInstance(NDArray&& value) {
  auto inst = py::reinterpret_steal<py::object>(py::detail::make_new_instance(NDArrayType()));
  if (!inst) throw py::error_already_set();
  auto* wrapper = reinterpret_cast<py::detail::instance*>(inst.ptr());
  py::detail::value_and_holder v_h = wrapper->get_value_and_holder();
  v_h.value_ptr() = new NDArray(std::move(value));
  new (std::addressof(v_h.holder<Holder>())) Holder(v_h.value_ptr<NDArray>());
  v_h.set_holder_constructed();
  return inst.release().ptr();
}

// Lets go of a freed instance's array; one the instance kept keeps it too, emptied, when nothing
// else holds it (NewSubarray's next view is made in it).
void Release(NDArray* value, bool kept) {
  if (kept) {
    Array::Recycle(&value->array);
  } else {
    value->array.reset();
  }
}

destructor g_pybind11_dealloc = nullptr;  // pybind11_object_dealloc: for every other instance

// NDArray's tp_dealloc. For an instance of the simple layout with a constructed holder, not
// registered, without weak references or patients (NewInstance's, and pybind11's unregistered
// ones): releases its Array's memory and keeps the instance (and the Array object, when nothing
// else holds it) for NewInstance and NewSubarray while the cache has room, else frees it as
// pybind11_object_dealloc would. Anything else (a subclass's instance, a
// registered one) goes to pybind11.
void Dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  auto* inst = reinterpret_cast<py::detail::instance*>(self);
  if (type != NDArrayType() || !inst->simple_layout || !inst->simple_holder_constructed ||
      inst->simple_instance_registered || inst->weakrefs != nullptr || inst->has_patients) {
    g_pybind11_dealloc(self);
    return;
  }
  // Releasing the Array may release foreign memory (a NumPy array's): Python code, which must
  // not see or clobber an error in flight and leaves none (pybind11's error_scope does this
  // for every destructor; a save and restore cost more than the check).
  NDArray* value = Value(self);
  const bool keep = g_num_cached < kCachedInstances;
  if (PyErr_Occurred() != nullptr) {
    py::error_scope scope;
    Release(value, keep);
  } else {
    Release(value, keep);
    if (PyErr_Occurred() != nullptr) PyErr_Clear();
  }
  // (Releasing may have run Python code that freed and kept other instances.)
  if (keep && g_num_cached < kCachedInstances) {
    g_cached[g_num_cached++] = self;
    return;
  }
  value->array.reset();
  reinterpret_cast<Holder*>(&inst->simple_value_holder[1])->~Holder();
  inst->simple_holder_constructed = false;
  inst->simple_value_holder[0] = nullptr;
  type->tp_free(self);
  Py_DECREF(type);
}

}  // namespace

// What py::cast of a new NDArray gives (a Python instance owning it through its holder). The
// instance is not entered in pybind11's registry of live instances: that registry only lets a
// C++ pointer or reference to this very NDArray value be cast back to this instance, and no
// binding returns one (py::cast(self) of a method's `const NDArray&` then gives an NDArray of
// the same Array). pybind11 deregisters at deallocation only instances marked registered.
PyObject* NewInstance(NDArray&& value) {
  if (g_num_cached > 0) {
    PyObject* obj = g_cached[--g_num_cached];
    Value(obj)->array = std::move(value.array);
    Revive(obj);
    return obj;
  }
  PyTypeObject* type = NDArrayType();
  if (!SimpleLayout()) return NewGenericInstance(std::move(value));
  // tp_alloc zeroes the instance: no weak references, patients, registration or holder yet.
  auto inst = py::reinterpret_steal<py::object>(type->tp_alloc(type, 0));
  if (!inst) throw py::error_already_set();
  auto* wrapper = reinterpret_cast<py::detail::instance*>(inst.ptr());
  wrapper->simple_layout = true;
  wrapper->owned = true;
  auto* held = new NDArray(std::move(value));
  wrapper->simple_value_holder[0] = held;
  new (&wrapper->simple_value_holder[1]) Holder(held);
  wrapper->simple_holder_constructed = true;
  return inst.release().ptr();
}

PyObject* NewSubarray(const Array& of, const int64_t* indices, int count, const int64_t* slice) {
  if (g_num_cached == 0) return NewInstance(NDArray{of.Subarray(indices, count, nullptr, slice)});
  PyObject* obj = g_cached[g_num_cached - 1];
  NDArray* value = Value(obj);
  // May throw: obj stays kept.
  value->array = of.Subarray(indices, count, std::move(value->array), slice);
  --g_num_cached;
  Revive(obj);
  return obj;
}

void SetInstanceDealloc() {
  PyTypeObject* type = NDArrayType();
  // Dealloc frees no instance dictionary and untracks nothing from the garbage collector:
  // NDArray has neither.
  if (!SimpleLayout() || PyType_HasFeature(type, Py_TPFLAGS_HAVE_GC) || type->tp_dictoffset != 0 ||
      type->tp_dealloc == &Dealloc) {
    return;
  }
  g_pybind11_dealloc = type->tp_dealloc;
  type->tp_dealloc = &Dealloc;
}

}  // namespace dlarray
