// The pieces of the fast paths (fast_path.cc) that other binding files use.
#ifndef DLARRAY_PYTHON_SRC_FAST_PATH_H_
#define DLARRAY_PYTHON_SRC_FAST_PATH_H_

#include <string>
#include <unordered_map>

#include "binding.h"

namespace dlarray {

/*! \brief A new Python NDArray owning value (a new reference), without py::cast's type look-ups
 *         (instance.cc: an instance kept from a freed one when there is one). */
PyObject* NewInstance(NDArray&& value);

/*! \brief A new Python NDArray of of.Subarray(indices, count, slice), in a kept instance and its
 * kept array when there are (instance.cc). */
PyObject* NewSubarray(const Array& of, const int64_t* indices, int count,
                      const int64_t* slice = nullptr);

/*! \brief Gives NDArray the deallocation that keeps freed instances for NewInstance
 *         (instance.cc); called once the class is bound. */
void SetInstanceDealloc();

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

// --- What the operators' (fast_path.cc) and the functions' (fast_function.cc) fast paths share --

// What an operator does for one key: run op (-1: take the general path) into a new array of
// dtype out; number: an operator's scalar sign (-1: negated), a reduction's kind attribute.
struct Plan {
  int op = -1;
  DLArrayDType out{};
  double number = 1.0;
  int post = -1;  // a reduction's op run afterwards on its result with the count (mean's divide)
  int fold = -1;  // where the device has it: the last reduce call and post in one (reduce_mean)
  bool has_second = false;  // an operator's scalar form takes a second attribute (a comparison's)
  double second = 0.0;
};

// The plans made so far, by key. The last key found is checked first: loops repeat one key, and
// the map's hash costs a division (its nodes stay put, so the pointer stays valid).
template <typename Key>
class Plans {
 public:
  const Plan* Find(Key key) {
    if (last_ != nullptr && key == last_key_) return last_;
    auto found = map_.find(key);
    if (found == map_.end()) return nullptr;
    last_key_ = key;
    return last_ = &found->second;
  }
  const Plan& Add(Key key, Plan plan) { return map_.emplace(key, plan).first->second; }

 private:
  std::unordered_map<Key, Plan> map_;
  Key last_key_{};
  const Plan* last_ = nullptr;
};

inline uint32_t DTypeKey(DLArrayDType t) {
  return static_cast<uint32_t>(t.code) | static_cast<uint32_t>(t.bits) << 8 |
         static_cast<uint32_t>(t.lanes) << 16;
}

// A planner's answer: None, or (op name, result dtype[, number[, post op or second attribute]]).
Plan ReadPlan(const py::object& answer);

// One validated invoke of plan's op into a new array of x's shape; the result as a new reference.
PyObject* Run(const Plan& plan, const Array& x, const DLArray* const* ins, int num_inputs,
              const double* attrs, int num_attrs);

// One invoke of op (without the GIL when x's work is large enough).
void InvokeReleasing(int op, const Array& x, const DLArray* const* ins, int num_inputs,
                     DLArray* const* outs, const double* attrs, int num_attrs);

/*! \brief _core._fast_function (fast_function.cc). */
void BindFastFunction(py::module_& m);

}  // namespace dlarray

#endif  // DLARRAY_PYTHON_SRC_FAST_PATH_H_
