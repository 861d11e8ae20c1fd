// Shared declarations of the pybind11 module dlarray._core.
#ifndef DLARRAY_PYTHON_SRC_BINDING_H_
#define DLARRAY_PYTHON_SRC_BINDING_H_

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <vector>

#include "dlarray/runtime.h"

namespace dlarray {
namespace py = pybind11;

/*! \brief The Python NDArray: a shared reference to a runtime array (or a view of one). */
struct NDArray {
  std::shared_ptr<Array> array;
  DLArray* dl() const { return array->dl(); }
};

/*!
 * \brief Wraps every binding function that runs long work or calls back into Python (NumPy,
 *        __index__, __array__), as py::call_guard<CallGuard>. At interpreter exit, daemon
 *        threads are ended by pthread_exit when they next take the GIL; inside such a function
 *        that unwinds C++ frames without the GIL (std::terminate in a destructor, or Py_DECREF
 *        racing the final garbage collection). So the exit hook (RegisterExitHook) waits until
 *        no thread is inside a guarded call, and afterwards a thread other than the exiting one
 *        that enters a guarded call is parked (GIL released, never returning) until the process
 *        ends, as Python 3.14 does with daemon threads.
 */
class CallGuard {
 public:
  CallGuard();
  ~CallGuard();
  CallGuard(const CallGuard&) = delete;
  CallGuard& operator=(const CallGuard&) = delete;
};

/*! \brief The call guard to pass to def(). */
using Guard = py::call_guard<CallGuard>;

/*! \brief Releases the GIL in a scope (inside a CallGuard: the exit hook waits for it). */
class ReleaseGil {
 public:
  ReleaseGil() : state_(PyEval_SaveThread()) {}
  ~ReleaseGil() { PyEval_RestoreThread(state_); }
  ReleaseGil(const ReleaseGil&) = delete;
  ReleaseGil& operator=(const ReleaseGil&) = delete;

 private:
  PyThreadState* state_;
};

/*! \brief The T behind obj when obj is exactly a T (no subclass) made by its constructor, else
 *         nullptr: a C entry point's check of its common case, without pybind11's type lookups
 *         (anything else goes through the caster or the general path). */
template <typename T>
T* ExactInstance(PyObject* obj) {
  static PyTypeObject* const type = py::detail::get_type_info(typeid(T))->type;
  if (Py_TYPE(obj) != type) return nullptr;
  auto* inst = reinterpret_cast<py::detail::instance*>(obj);
  if (inst->simple_layout) {  // the value pointer in the instance: get_value_and_holder's answer
    return inst->simple_holder_constructed ? static_cast<T*>(inst->simple_value_holder[0])
                                           : nullptr;
  }
  auto vh = inst->get_value_and_holder();
  return vh.holder_constructed() ? vh.value_ptr<T>() : nullptr;
}

/*! \brief Registers the exit hook (Python's atexit) described at CallGuard. */
void RegisterExitHook();

/*! \brief Throws TypeError naming type_name: an object made by __new__ without __init__. */
[[noreturn]] void ThrowNotConstructed(const char* type_name);

/*! \brief Throws when obj is a T (a bound class) that was made by __new__ alone. */
template <typename T>
inline void RequireConstructed(py::handle obj, const char* type_name) {
  if (!obj) return;
  const py::detail::type_info* info = py::detail::get_type_info(typeid(T));
  if (info == nullptr || !PyObject_TypeCheck(obj.ptr(), info->type)) return;  // caster says no
  if (!py::detail::is_holder_constructed(obj.ptr())) ThrowNotConstructed(type_name);
}

/*! \brief Ops on arrays this large run with the GIL released; smaller ones are faster without
 *         the hand-off (a CPU kernel that short, or an asynchronous device launch). */
constexpr int64_t kReleaseGilElements = 1 << 15;

inline bool ShouldReleaseGilForOp(const DLArray* a) {
  return NumElements(a) >= kReleaseGilElements;
}

/*! \brief Copies release the GIL when large or when a device is involved (they may wait for
 *         the device's queued work). */
inline bool ShouldReleaseGilForCopy(const DLArray* a) {
  return a->ctx.device_type != kDLArrayCPU || NumElements(a) >= kReleaseGilElements;
}

/*! \brief numpy dtype (or anything numpy.dtype() takes) <-> DLArrayDType. bfloat16 is
 *         ml_dtypes.bfloat16 (TypeError naming the package when it is missing). */
DLArrayDType DTypeFromNumpy(const py::handle& dt);
py::dtype DTypeToNumpy(DLArrayDType t);

/*! \brief The type name of obj, for messages. */
std::string TypeName(const py::handle& obj);

/*! \brief A copy= argument (DLPack, __array__): -1 for None, 1 for True, 0 for False (NumPy's
 *         bool too); TypeError naming fn and copy for anything else. */
int CopyArgument(const py::handle& v, const char* fn);

/*! \brief Runs op (GIL released for large operands); refuses read-only outputs first. */
void RunOp(int op, const std::vector<const DLArray*>& ins, const std::vector<const NDArray*>& outs,
           const std::vector<double>& attrs);

/*! \brief The Python value of an attribute's default, as signatures and op_info show it. */
py::object AttrDefault(DLArrayAttrType type, double v);

/*! \brief A new compact array on src's device with src's elements (the copy op: any strides). */
NDArray CompactCopy(const NDArray& src);

/*! \brief Copies between compact arrays on any devices, GIL released for large or device ones. */
void CopyArrays(const DLArray* from, DLArray* to);

/*! \brief An NDArray over the memory of a NumPy array (no copy), or nullptr when the array's
 *         layout cannot be shared (byte order, alignment, dtype): callers then copy. */
std::shared_ptr<Array> ShareNumpy(const py::array& arr);

/*! \brief A new NumPy array with a copy of self's elements (waits for the device). */
py::array AsNumpy(const NDArray& self);

/*! \brief Keeps a Python object alive as the owner of array memory; releasing it takes the GIL
 *         (and is skipped once the interpreter is finalizing). */
std::shared_ptr<void> PythonOwner(py::object obj);

void BindDistributed(py::module_& m);  // distributed.cc: NCCL (dlarray.distributed)
// distributed_mpi.cc: MPI (dlarray.distributed on CPU arrays)
void BindDistributedMpi(py::module_& m);
void BindNDArray(py::module_& m);
void BindViews(py::class_<NDArray>& cls);
void BindDLPack(py::module_& m, py::class_<NDArray>& cls);
void BindNumpyInterop(py::module_& m, py::class_<NDArray>& cls);
void BindOps(py::module_& m);       // ops.cc: the op functions, invoke; calls BindOpTable
void BindFastPath(py::module_& m);  // fast_path.cc: the arithmetic operators' C++ fast path
void BindOpTable(py::module_& m);   // op_table.cc: op_names, op_info, infer_outputs
void BindDevices(py::module_& m);
void BindCustom(py::module_& m);      // custom.cc: AOT custom ops (dlarray.custom)
void BindRtc(py::module_& m);         // rtc.cc: NVRTC kernels (dlarray.rtc)
void BindGraph(py::module_& m);       // graph.cc: CUDA graphs (the autodiff executor's replays)
void BindFuseOpencl(py::module_& m);  // fuse_opencl.cc: OpenCL objects for dlarray.fuse
void BindFuseFast(py::module_& m);    // fuse_fast.cc: dlarray.fuse's CPU cache hit

// In a catch block of a C entry point that Python calls directly (METH_FASTCALL, vectorcall):
// the exception in flight as the Python error pybind11's dispatcher would make of it (the
// module's translators included); returns nullptr, the entry point's answer to Python.
inline PyObject* RaiseCurrentException() {
  try {
    throw;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (...) {
    py::detail::try_translate_exceptions();
  }
  return nullptr;
}

/*! \brief A builtin function of `module` that calls def's C function with a capsule of `data` as
 *         its self (def and data must outlive it: the made functions live as long as the process).
 */
inline py::object NewBuiltin(PyMethodDef* def, void* data, const char* module) {
  py::object self = py::reinterpret_steal<py::object>(PyCapsule_New(data, nullptr, nullptr));
  if (!self) throw py::error_already_set();
  py::str name(module);
  PyObject* fn = PyCFunction_NewEx(def, self.ptr(), name.ptr());
  if (fn == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(fn);
}

}  // namespace dlarray

namespace pybind11::detail {

// NDArray and DLContext arguments are checked for objects made by Cls.__new__(Cls) without
// __init__: pybind11 would hand out uninitialised memory for them (a segfault at first use).
// A DLContext argument also takes a device string: "cpu", "cuda:1", "gpu:0", or the device type
// name of a loaded plugin (ValueError for anything else).
template <>
class type_caster<dlarray::NDArray> : public type_caster_base<dlarray::NDArray> {
 public:
  bool load(handle src, bool convert) {
    dlarray::RequireConstructed<dlarray::NDArray>(src, "NDArray");
    return type_caster_base<dlarray::NDArray>::load(src, convert);
  }
};

template <>
class type_caster<DLContext> : public type_caster_base<DLContext> {
 public:
  bool load(handle src, bool convert) {
    if (PyUnicode_Check(src.ptr())) {
      parsed_ = dlarray::ParseContext(src.cast<std::string>());
      value = &parsed_;
      return true;
    }
    dlarray::RequireConstructed<DLContext>(src, "DLContext");
    return type_caster_base<DLContext>::load(src, convert);
  }

 private:
  DLContext parsed_{};
};

}  // namespace pybind11::detail

#endif  // DLARRAY_PYTHON_SRC_BINDING_H_
