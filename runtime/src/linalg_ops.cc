// The factorization primitives of dlarray.linalg. Each takes a compact stack (batch, m, n) of
// row-major float32, float64, complex64 or complex128 matrices and, besides its results, returns
// `info` (batch,) int64:
// LAPACK's code for each matrix (> 0: singular, not positive definite, did not converge). Kernels
// never fail for such a matrix; Python reads `info` and raises LinAlgError naming the batch index.
// Shapes (b batch, k = min(m, n)):
//   linalg_lu        a (b, n, n)                -> lu (b, n, n), pivots (b, n) int64 1-based, info
//   linalg_solve     a (b, n, n), rhs (b, n, r) -> x (b, n, r), info
//   linalg_cholesky  a (b, n, n)                -> l (b, n, n) lower (zeros above), info
//   linalg_eigh      a (b, n, n) lower triangle -> w (b, n) ascending, v (b, n, n) columns, info;
//                                                  compute_v = 0: v is (b, 0, 0)
//   linalg_svd       a (b, m, n)                -> u (b, m, m|k), s (b, k) descending,
//                                                  vh (b, n|k, n) = V^H, info; full_matrices picks
//                                                  m and n; compute_uv = 0: u, vh (b, 0, 0)
//   linalg_qr        a (b, m, n)                -> q (b, m, m|k), r (b, m|k, n); complete picks m
// For complex a, eigh's w and svd's s are real of a's precision (Hermitian eigenvalues, singular
// values); every other matrix output has a's dtype.
#include "linalg_ops.h"

#include <algorithm>
#include <climits>
#include <limits>
#include <string>
#include <vector>

#include "core_api.h"
#include "core_ops.h"
#include "dlarray/errors.h"
#include "dlarray/kernel.h"
#include "dlarray/runtime.h"

namespace dlarray {
namespace {

constexpr DLArrayDType kInt64{kDLArrayInt, 64, 1};
struct LinalgRow {
  const char* name;
  std::vector<const char*> inputs, attrs, outputs;
  std::vector<double> defaults;  // of the attributes
  const char* doc;
};

const LinalgRow kRows[] = {
    {"linalg_lu", {"a"}, {}, {"lu", "pivots", "info"}, {}, "LU factors of each matrix (getrf)"},
    {"linalg_solve", {"a", "rhs"}, {}, {"x", "info"}, {}, "x = solve(a, rhs) per matrix (gesv)"},
    {"linalg_cholesky", {"a"}, {}, {"l", "info"}, {}, "lower Cholesky factor (potrf)"},
    {"linalg_eigh",
     {"a"},
     {"compute_v"},
     {"w", "v", "info"},
     {1.0},
     "eigenvalues and vectors of the symmetric matrices, lower triangle (syevd)"},
    {"linalg_svd",
     {"a"},
     {"compute_uv", "full_matrices"},
     {"u", "s", "vh", "info"},
     {1.0, 1.0},
     "singular value decomposition (gesdd)"},
    {"linalg_qr", {"a"}, {"complete"}, {"q", "r"}, {0.0}, "QR decomposition (geqrf + orgqr)"},
};

// " for compute_v=1": the attributes the output shapes depend on, for messages.
std::string AttrText(const std::string& op, const double* attrs) {
  std::string out;
  for (const LinalgRow& row : kRows) {
    if (op != row.name) continue;
    for (size_t i = 0; i < row.attrs.size(); ++i) {
      out += (i ? ", " : " for ") + std::string(row.attrs[i]) + "=" + (attrs[i] != 0.0 ? "1" : "0");
    }
  }
  return out;
}

// Per operand: the matrices in float32, float64, complex64 or complex128 (all alike, checked
// below), real values of complex matrices in the real dtype of their precision, indices int64.
constexpr DLArrayDType kDTypes[] = {{kDLArrayFloat, 32, 1},
                                    {kDLArrayFloat, 64, 1},
                                    {kDLArrayComplex, 64, 1},
                                    {kDLArrayComplex, 128, 1},
                                    kInt64};
constexpr int kNumDTypes = static_cast<int>(sizeof(kDTypes) / sizeof(kDTypes[0]));

bool Is(DLArrayDType a, DLArrayDType b) { return a.code == b.code && a.bits == b.bits; }

std::string Shape(std::vector<int64_t> s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

// The sizes LAPACK takes are 32-bit.
void CheckLapackSize(const char* op, int64_t size) {
  if (size > INT_MAX) {
    throw ShapeError(std::string(op) + ": a matrix dimension of " + std::to_string(size) +
                     " exceeds LAPACK's 32-bit sizes");
  }
}

// The attributes' values (flags); the op's name says which each is.
bool FlagAt(const char* op, const double* attrs, int i) {
  if (attrs[i] != 0.0 && attrs[i] != 1.0) {
    throw Error(ErrorKind::kValue,
                std::string(op) + ": attribute " + std::to_string(i) + " must be 0 or 1");
  }
  return attrs[i] == 1.0;
}

// The output shapes of an op from its input shapes (b, m, n) [, (b, n, r)] and attributes.
std::vector<std::vector<int64_t>> OutputShapes(const std::string& op, const int64_t* a,
                                               const int64_t* rhs, const double* attrs) {
  const int64_t b = a[0], m = a[1], n = a[2], k = std::min(m, n);
  if (op != "linalg_svd" && op != "linalg_qr" && m != n) {
    throw ShapeError(op + ": a must be a stack of square matrices, got " + Shape({b, m, n}));
  }
  CheckLapackSize(op.c_str(), std::max(m, n));
  if (op == "linalg_lu") return {{b, n, n}, {b, n}, {b}};
  if (op == "linalg_solve") {
    if (rhs[0] != b || rhs[1] != n) {
      throw ShapeError(op + ": rhs " + Shape({rhs[0], rhs[1], rhs[2]}) + " does not fit a " +
                       Shape({b, m, n}) + ": it must be (" + std::to_string(b) + ", " +
                       std::to_string(n) + ", r)");
    }
    CheckLapackSize(op.c_str(), rhs[2]);
    return {{b, n, rhs[2]}, {b}};
  }
  if (op == "linalg_cholesky") return {{b, n, n}, {b}};
  if (op == "linalg_eigh") {
    const int64_t v = FlagAt(op.c_str(), attrs, 0) ? n : 0;
    return {{b, n}, {b, v, v}, {b}};
  }
  if (op == "linalg_svd") {
    const bool uv = FlagAt(op.c_str(), attrs, 0), full = FlagAt(op.c_str(), attrs, 1);
    if (!uv) return {{b, 0, 0}, {b, k}, {b, 0, 0}, {b}};
    return {{b, m, full ? m : k}, {b, k}, {b, full ? n : k, n}, {b}};
  }
  const int64_t q = FlagAt(op.c_str(), attrs, 0) ? m : k;  // linalg_qr
  return {{b, m, q}, {b, q, n}};
}

// The operands' dtypes: matrices alike in a's dtype, pivots and info int64, eigenvalues and
// singular values real (float32 for complex64, float64 for complex128).
bool IsIndexOutput(const std::string& op, int o, int num_outputs) {
  return o == num_outputs - 1 ? op != "linalg_qr" : (op == "linalg_lu" && o == 1);
}

DLArrayDType OutputDType(const std::string& op, int o, int num_outputs, DLArrayDType a) {
  if (IsIndexOutput(op, o, num_outputs)) return kInt64;
  const bool real_values = (op == "linalg_eigh" && o == 0) || (op == "linalg_svd" && o == 1);
  if (real_values && a.code == kDLArrayComplex) {
    return DLArrayDType{kDLArrayFloat, static_cast<uint8_t>(a.bits / 2), 1};
  }
  return a;
}

void Validate(const DLArrayOpCall& c) {
  const std::string op = c.op_name;
  const DLArray* a = c.inputs[0];
  if (Is(a->dtype, kInt64)) {
    throw DTypeError(op + ": a must be float32, float64, complex64 or complex128, got int64");
  }
  for (int i = 0; i < c.num_inputs; ++i) {
    if (c.inputs[i]->ndim != 3) {
      throw ShapeError(op + ": input " + std::to_string(i) +
                       " must be 3-D (batch, rows, "
                       "columns), got " +
                       ShapeToString(c.inputs[i]));
    }
    if (!Is(c.inputs[i]->dtype, a->dtype)) {
      throw DTypeError(op + ": the inputs' dtypes differ (" + DTypeToString(a->dtype) + " and " +
                       DTypeToString(c.inputs[i]->dtype) + ")");
    }
  }
  const auto shapes =
      OutputShapes(op, a->shape, c.num_inputs > 1 ? c.inputs[1]->shape : nullptr, c.attrs);
  for (int o = 0; o < c.num_outputs; ++o) {
    const DLArray* out = c.outputs[o];
    const DLArrayDType want = OutputDType(op, o, c.num_outputs, a->dtype);
    if (!Is(out->dtype, want)) {
      throw DTypeError(op + ": output " + std::to_string(o) + " must be " + DTypeToString(want) +
                       ", got " + DTypeToString(out->dtype));
    }
    if (std::vector<int64_t>(out->shape, out->shape + out->ndim) != shapes[o]) {
      throw ShapeError(op + ": output " + std::to_string(o) + " must have shape " +
                       Shape(shapes[o]) + AttrText(op, c.attrs) + ", got " + ShapeToString(out));
    }
  }
}

void Infer(const DLArrayShapeCall& c) {
  const std::string op = c.op_name;
  for (int i = 0; i < c.num_inputs; ++i) {
    if (c.input_ndims[i] != 3) throw ShapeError(op + ": the inputs must be 3-D");
  }
  const auto shapes =
      OutputShapes(op, c.input_shapes[0], c.num_inputs > 1 ? c.input_shapes[1] : nullptr, c.attrs);
  for (int o = 0; o < c.num_outputs; ++o) {
    c.output_ndims[o] = static_cast<int32_t>(shapes[o].size());
    for (size_t d = 0; d < shapes[o].size(); ++d) c.output_shapes[o][d] = shapes[o][d];
    c.output_dtypes[o] = OutputDType(op, o, c.num_outputs, c.input_dtypes[0]);
  }
}

}  // namespace

void DeclareLinalgOps(DLArrayRegistry* registry) {
  for (const LinalgRow& row : kRows) {
    const std::vector<int32_t> types(row.attrs.size(), kDLArrayAttrBool);
    DLArrayOpSchema s{};
    s.struct_size = sizeof(DLArrayOpSchema);
    s.name = row.name;
    s.doc = row.doc;
    s.attr_names = row.attrs.empty() ? nullptr : row.attrs.data();
    s.dtypes = kDTypes;
    s.num_dtypes = kNumDTypes;
    s.input_names = row.inputs.data();
    s.output_names = row.outputs.data();
    s.validate = &Guarded<DLArrayOpCall, Validate>;
    s.infer_shape = &Guarded<DLArrayShapeCall, Infer>;
    s.num_inputs = static_cast<int32_t>(row.inputs.size());
    s.num_outputs = static_cast<int32_t>(row.outputs.size());
    s.num_attrs = static_cast<int32_t>(row.attrs.size());
    s.attr_types = types.empty() ? nullptr : types.data();
    s.attr_defaults = row.defaults.empty() ? nullptr : row.defaults.data();
    s.dtype_rule = kDLArrayDTypesPerArray;
    s.fills_when_empty = 1;  // n = 0 with a batch: info (and pivots) are 0
    if (CoreApi()->declare_op(registry, &s) != 0) {
      ThrowPluginError(std::string("declaring ") + row.name);
    }
  }
}

}  // namespace dlarray
