// Shared declarations of the pybind11 module dlarray._core.
#ifndef DLARRAY_PYTHON_SRC_BINDING_H_
#define DLARRAY_PYTHON_SRC_BINDING_H_

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>

#include "dlarray/runtime.h"

namespace dlarray {
namespace py = pybind11;

/*! \brief The Python NDArray: a shared reference to a runtime array. */
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

/*! \brief numpy dtype <-> DLArrayDType. */
DLArrayDType DTypeFromNumpy(const py::dtype& dt);
py::dtype DTypeToNumpy(DLArrayDType t);

void BindDistributed(py::module_& m);  // distributed.cc: NCCL (dlarray.distributed)
void BindNDArray(py::module_& m);
void BindOps(py::module_& m);

}  // namespace dlarray

#endif  // DLARRAY_PYTHON_SRC_BINDING_H_
