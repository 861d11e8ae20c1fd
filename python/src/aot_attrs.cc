// AotAttrs (aot_op.h): Custom's attributes as the C structs a library reads. Every value is
// checked here, where it is converted: C reads names and strings up to their first NUL byte, and an
// int that does not fit int64 must not reach it wrapped.
#include <string>
#include <utility>
#include <vector>

#include "aot_op.h"

namespace dlarray {
namespace {

std::string Repr(const py::handle& h) { return py::repr(h).cast<std::string>(); }

[[noreturn]] void Raise(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw py::error_already_set();
}

std::string Who(const std::string& name) { return "dlarray.custom: attribute '" + name + "'"; }

bool IsInt(const py::handle& v) { return PyLong_Check(v.ptr()) != 0; }  // bool included
bool IsFloat(const py::handle& v) { return PyFloat_Check(v.ptr()) != 0; }

int64_t ToInt(const std::string& name, const py::handle& v) {
  int overflow = 0;
  const long long x = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow != 0) {
    Raise(PyExc_OverflowError,
          Who(name) + ": " + Repr(v) + " does not fit a 64-bit signed integer (int64)");
  }
  if (x == -1 && PyErr_Occurred()) throw py::error_already_set();
  return x;
}

// A list's ints keep the int64 rule, also among floats: one rule for every int an op is given.
double ToFloat(const std::string& name, const py::handle& v) {
  return IsFloat(v) ? PyFloat_AS_DOUBLE(v.ptr()) : static_cast<double>(ToInt(name, v));
}

[[noreturn]] void WrongType(const std::string& name, const py::handle& v) {
  Raise(PyExc_TypeError, Who(name) + " must be a bool, int, float, str or a list of numbers, got " +
                             std::string(Py_TYPE(v.ptr())->tp_name) + " (" + Repr(v) + ")");
}

}  // namespace

void AotAttrs::Add(const py::handle& name_obj, const py::handle& value) {
  if (!PyUnicode_Check(name_obj.ptr())) {
    Raise(PyExc_TypeError, "dlarray.custom: attribute names must be strings, got " +
                               std::string(Py_TYPE(name_obj.ptr())->tp_name) + " (" +
                               Repr(name_obj) + ")");
  }
  const std::string name = name_obj.cast<std::string>();
  if (name.find('\0') != std::string::npos) {
    Raise(PyExc_ValueError, "dlarray.custom: attribute name " + Repr(name_obj) +
                                " holds a NUL byte (C would read it cut short)");
  }
  DLArrayAotAttr a{};
  if (IsInt(value)) {
    a.kind = kDLArrayAotInt;
    a.int_value = ToInt(name, value);
    a.float_value = static_cast<double>(a.int_value);
  } else if (IsFloat(value)) {
    a.kind = kDLArrayAotFloat;
    a.float_value = ToFloat(name, value);
  } else if (PyUnicode_Check(value.ptr())) {
    std::string s = value.cast<std::string>();
    if (s.find('\0') != std::string::npos) {
      Raise(
          PyExc_ValueError,
          Who(name) + ": the string holds a NUL byte (C would read it cut short): " + Repr(value));
    }
    a.kind = kDLArrayAotString;
    a.string_value = strings_.emplace_back(std::move(s)).c_str();
    a.length = static_cast<int64_t>(strings_.back().size());
  } else if (PyList_Check(value.ptr()) || PyTuple_Check(value.ptr())) {
    AddList(name, value, &a);
  } else {
    WrongType(name, value);
  }
  a.name = names_.emplace_back(name).c_str();
  attrs_.push_back(a);
}

void AotAttrs::AddList(const std::string& name, const py::handle& value, DLArrayAotAttr* a) {
  auto seq = py::reinterpret_borrow<py::sequence>(value);
  bool floats = false;
  for (const py::handle& v : seq) {
    if (!IsInt(v) && !IsFloat(v)) WrongType(name, value);
    floats = floats || IsFloat(v);
  }
  if (floats) {
    std::vector<double> xs;
    for (const py::handle& v : seq) xs.push_back(ToFloat(name, v));
    a->kind = kDLArrayAotFloats;
    a->floats = float_lists_.emplace_back(std::move(xs)).data();
  } else {
    std::vector<int64_t> xs;
    for (const py::handle& v : seq) xs.push_back(ToInt(name, v));
    a->kind = kDLArrayAotInts;
    a->ints = int_lists_.emplace_back(std::move(xs)).data();
  }
  a->length = static_cast<int64_t>(py::len(seq));
}

}  // namespace dlarray
