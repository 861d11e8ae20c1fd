// Assignment and host conversions shared by the NDArray bindings (assign.cc).
#ifndef DLARRAY_PYTHON_SRC_ASSIGN_H_
#define DLARRAY_PYTHON_SRC_ASSIGN_H_

#include <string>
#include <vector>

#include "binding.h"

namespace dlarray {

/*! \brief obj as a C-contiguous NumPy array of dtype dt; only numbers convert (TypeError naming
 *         where for None, strings, objects), Python data by NumPy's per-element checks. */
py::array NumericArray(const py::object& obj, const py::object& dt, const std::string& where);

/*! \brief The extents of a, as a tuple. */
py::tuple ShapeTuple(const Array& a);

/*! \brief A DLArray over a compact host NumPy array (shape is its storage). */
DLArray HostView(const py::array& arr, DLArrayDType dtype, std::vector<int64_t>& shape);

/*! \brief target (any layout, any device) = value (NDArray, NumPy array, number or anything
 *         NumPy converts), as NumPy's arr[...] = value. */
void Assign(const NDArray& target, const py::object& value);

}  // namespace dlarray

#endif  // DLARRAY_PYTHON_SRC_ASSIGN_H_
