// The pieces of the fast paths (fast_path.cc) that other binding files use.
#ifndef DLARRAY_PYTHON_SRC_FAST_PATH_H_
#define DLARRAY_PYTHON_SRC_FAST_PATH_H_

#include "binding.h"

namespace dlarray {

/*! \brief A new Python NDArray owning value (a new reference), without py::cast's type look-ups. */
PyObject* NewInstance(NDArray&& value);

/*! \brief A METH_FASTCALL method: self, the arguments and their count. */
using FastMethod = PyObject* (*)(PyObject*, PyObject* const*, Py_ssize_t);

/*! \brief The C function of the operator method `dunder` that _fast_operator made (its fast
 *         path, else the general path), or nullptr where it made none. */
FastMethod FastOperatorMethod(const char* dunder);

/*! \brief Puts the fast paths in NDArray's slots (fast_slots.cc): _core._fast_slots, called once
 *         the methods are set (setting one again makes Python write its own slot back). */
void SetSlots();

/*! \brief Puts the fast x[i] (views.cc) in NDArray's subscript slot; called by _fast_slots once
 *         __getitem__ is set (setting it again makes Python write its own slot back). */
void SetSubscriptSlot();

}  // namespace dlarray

#endif  // DLARRAY_PYTHON_SRC_FAST_PATH_H_
