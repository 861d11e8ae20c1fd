// NDArray's type slots for x + y, x - y, x * y and x / y (and, through views.cc, x[i]): the
// interpreter's way to the fast paths of fast_path.cc without looking the methods up.
#include <array>
#include <utility>

#include "fast_path.h"

namespace dlarray {
namespace {

// The number slots of the forward operators. Once __add__ is set, NDArray's slot for x + y is
// Python's slot_nb_add, which looks __add__ up in the type and calls it through its descriptor
// (a sixth of a 1-element x + y). SetSlots puts Slot<k> in its place, which does what Python's
// slot does in its stead: an NDArray on the left calls the method itself (its fast path first);
// on the right (the interpreter asks the right operand's slot after the left's) its reflected
// method. Python's own slot recognises itself on the other operand's type to call a reflected
// method; the interpreter's second call, to our slot, takes that part. Setting a method again
// (NDArray.__add__ = ...) makes Python write its own slot back.
struct NumberSlot {
  const char* dunder;     // the method with the fast path
  const char* reflected;  // the method for an NDArray on the right
  binaryfunc PyNumberMethods::*slot;
};
constexpr NumberSlot kNumberSlots[] = {
    {"__add__", "__radd__", &PyNumberMethods::nb_add},
    {"__sub__", "__rsub__", &PyNumberMethods::nb_subtract},
    {"__mul__", "__rmul__", &PyNumberMethods::nb_multiply},
    {"__truediv__", "__rtruediv__", &PyNumberMethods::nb_true_divide}};
constexpr int kNumSlots = sizeof(kNumberSlots) / sizeof(kNumberSlots[0]);
FastMethod g_slot_methods[kNumSlots] = {};
PyObject* g_reflected[kNumSlots] = {};  // interned names

template <int kSlot>
PyObject* Slot(PyObject* a, PyObject* b) {
  static PyTypeObject* const type = py::detail::get_type_info(typeid(NDArray))->type;
  if (Py_TYPE(a) == type) return g_slot_methods[kSlot](a, &b, 1);
  if (Py_TYPE(b) != type) Py_RETURN_NOTIMPLEMENTED;  // not ours (no type inherits this slot)
  PyObject* args[2] = {b, a};
  return PyObject_VectorcallMethod(g_reflected[kSlot], args, 2, nullptr);
}

template <int... kSlots>
constexpr std::array<binaryfunc, sizeof...(kSlots)> Slots(std::integer_sequence<int, kSlots...>) {
  return {&Slot<kSlots>...};
}

}  // namespace

void SetSlots() {
  SetSubscriptSlot();
  static const auto slots = Slots(std::make_integer_sequence<int, kNumSlots>());
  PyTypeObject* type = py::detail::get_type_info(typeid(NDArray))->type;
  for (int k = 0; k < kNumSlots; ++k) {
    const FastMethod method = FastOperatorMethod(kNumberSlots[k].dunder);
    binaryfunc& slot = type->tp_as_number->*kNumberSlots[k].slot;
    if (method == nullptr || slot == nullptr) continue;
    if (g_reflected[k] == nullptr) {
      g_reflected[k] = PyUnicode_InternFromString(kNumberSlots[k].reflected);
      if (g_reflected[k] == nullptr) throw py::error_already_set();
    }
    g_slot_methods[k] = method;
    slot = slots[k];
  }
  PyType_Modified(type);
}

}  // namespace dlarray
