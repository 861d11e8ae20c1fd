// NumPy dtypes <-> DLArrayDType, and Python objects as owners of array memory.
#include <array>
#include <string>

#include "binding.h"

namespace dlarray {
namespace {

constexpr DLArrayDType kBFloat16{kDLArrayBfloat, 16, 1};

// ml_dtypes.bfloat16 as a numpy dtype (TypeError when the package is missing).
py::dtype BFloat16Dtype() {
  static py::object* dt = nullptr;  // leaked: outlives the interpreter's teardown
  if (dt == nullptr) {
    try {
      dt = new py::object(py::dtype::from_args(py::module_::import("ml_dtypes").attr("bfloat16")));
    } catch (const py::error_already_set&) {
      throw DTypeError(
          "bfloat16 arrays convert to NumPy through the ml_dtypes package, which is not "
          "installed (pip install ml_dtypes)");
    }
  }
  return dt->cast<py::dtype>();
}

int TableIndex(DLArrayDType t) {
  if (t.lanes != 1) return -1;
  switch (t.code) {
    case kDLArrayInt:
      return t.bits == 8 ? 0 : t.bits == 16 ? 1 : t.bits == 32 ? 2 : t.bits == 64 ? 3 : -1;
    case kDLArrayUInt:
      return t.bits == 8 ? 4 : t.bits == 16 ? 5 : t.bits == 32 ? 6 : t.bits == 64 ? 7 : -1;
    case kDLArrayFloat:
      return t.bits == 16 ? 8 : t.bits == 32 ? 9 : t.bits == 64 ? 10 : -1;
    case kDLArrayBool:
      return t.bits == 8 ? 11 : -1;
    case kDLArrayComplex:
      return t.bits == 64 ? 12 : t.bits == 128 ? 13 : -1;
    default:
      return -1;
  }
}

}  // namespace

std::string TypeName(const py::handle& obj) { return py::str(py::type::of(obj).attr("__name__")); }

// The one dtype parser: every entry point that takes a dtype (empty, array, asarray, astype,
// infer_outputs, __array__, custom ops) comes here, so each accepts the same spellings.
DLArrayDType DTypeFromNumpy(const py::handle& arg) {
  // dlarray's own spelling of bfloat16; numpy.dtype() knows the name only after ml_dtypes is
  // imported, and the runtime needs no ml_dtypes to hold bfloat16 arrays.
  if (py::isinstance<py::str>(arg) && arg.cast<std::string>() == "bfloat16") return kBFloat16;
  py::dtype dt;
  try {
    dt = py::dtype::from_args(py::reinterpret_borrow<py::object>(arg));
  } catch (const py::error_already_set& e) {
    if (!e.matches(PyExc_TypeError) && !e.matches(PyExc_ValueError)) throw;
    throw DTypeError("dtype: " + std::string(py::repr(arg)) +
                     " is not a data type (a numpy dtype, a numpy scalar type, or a name such as "
                     "'float32' or 'bfloat16'; supported: bool, int8-64, uint8-64, "
                     "float16/32/64, bfloat16, complex64/128)");
  }
  const char kind = dt.kind();
  const auto bits = static_cast<uint8_t>(dt.itemsize() * 8);
  if (kind == 'f') return DLArrayDType{kDLArrayFloat, bits, 1};
  if (kind == 'i') return DLArrayDType{kDLArrayInt, bits, 1};
  if (kind == 'u') return DLArrayDType{kDLArrayUInt, bits, 1};
  if (kind == 'b') return DLArrayDType{kDLArrayBool, 8, 1};
  if (kind == 'c' && (bits == 64 || bits == 128)) return DLArrayDType{kDLArrayComplex, bits, 1};
  if (dt.itemsize() == 2 && py::str(dt.attr("name")).cast<std::string>() == "bfloat16") {
    return kBFloat16;
  }
  throw DTypeError("dtype: unsupported dtype " + std::string(py::str(dt)) +
                   " (supported: bool, int8-64, uint8-64, float16/32/64, bfloat16, "
                   "complex64/128)");
}

py::dtype DTypeToNumpy(DLArrayDType t) {
  if (t == kBFloat16) return BFloat16Dtype();
  static std::array<py::object*, 14> table{};  // leaked, like BFloat16Dtype's
  const int i = TableIndex(t);
  if (i < 0) throw DTypeError("dtype " + DTypeToString(t) + " has no NumPy equivalent");
  if (table[i] == nullptr) {
    static const char* const kNames[14] = {"int8",    "int16",  "int32",     "int64",     "uint8",
                                           "uint16",  "uint32", "uint64",    "float16",   "float32",
                                           "float64", "bool",   "complex64", "complex128"};
    table[i] = new py::object(py::dtype(kNames[i]));
  }
  return table[i]->cast<py::dtype>();
}

std::shared_ptr<void> PythonOwner(py::object obj) {
  auto* held = new py::object(std::move(obj));
  return std::shared_ptr<void>(held, [](void* p) {
    auto* o = static_cast<py::object*>(p);
#if PY_VERSION_HEX >= 0x030D0000
    const bool finalizing = Py_IsFinalizing();
#else
    const bool finalizing = _Py_IsFinalizing();
#endif
    if (!Py_IsInitialized() || finalizing) {
      o->release();  // the interpreter is going away: leak the reference rather than touch it
      delete o;
      return;
    }
    py::gil_scoped_acquire gil;
    delete o;
  });
}

}  // namespace dlarray
