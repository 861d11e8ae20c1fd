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

/*! \brief Arrays this large run their kernels with the GIL released (smaller ones are faster
 *         without the hand-off). Work on devices other than the CPU always releases it. */
constexpr int64_t kReleaseGilElements = 1 << 15;

inline bool ShouldReleaseGil(const DLArray* a) {
  return a->ctx.device_type != kDLArrayCPU || NumElements(a) >= kReleaseGilElements;
}

/*! \brief numpy dtype <-> DLArrayDType. */
DLArrayDType DTypeFromNumpy(const py::dtype& dt);
py::dtype DTypeToNumpy(DLArrayDType t);

void BindNDArray(py::module_& m);
void BindOps(py::module_& m);

}  // namespace dlarray

#endif  // DLARRAY_PYTHON_SRC_BINDING_H_
