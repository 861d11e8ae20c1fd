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

/*! \brief Runs op (GIL released for large operands); refuses read-only outputs first. */
void RunOp(int op, const std::vector<const DLArray*>& ins, const std::vector<const NDArray*>& outs,
           const std::vector<double>& attrs);

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

void BindNDArray(py::module_& m);
void BindViews(py::class_<NDArray>& cls);
void BindDLPack(py::module_& m, py::class_<NDArray>& cls);
void BindNumpyInterop(py::module_& m, py::class_<NDArray>& cls);
void BindOps(py::module_& m);
void BindDevices(py::module_& m);

}  // namespace dlarray

namespace pybind11::detail {

// A DLContext argument also takes a device string: "cpu", "cuda:1", "gpu:0", or the device type
// name of a loaded plugin (ValueError for anything else).
template <>
class type_caster<DLContext> : public type_caster_base<DLContext> {
 public:
  bool load(handle src, bool convert) {
    if (PyUnicode_Check(src.ptr())) {
      parsed_ = dlarray::ParseContext(src.cast<std::string>());
      value = &parsed_;
      return true;
    }
    return type_caster_base<DLContext>::load(src, convert);
  }

 private:
  DLContext parsed_{};
};

}  // namespace pybind11::detail

#endif  // DLARRAY_PYTHON_SRC_BINDING_H_
