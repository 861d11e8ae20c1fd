// The shape and dtype rules of the FFT primitives. Python (dlarray.fft) brings every transform to
// one of three canonical forms over axis 1 of a compact (outer, n, inner) layout (any axis of a
// compact array is one, with no transpose), so that a backend implements each once:
//   fft_c2c  x (outer, n, inner) complex            -> out (outer, n, inner), x's dtype
//   fft_r2c  x (outer, n, inner) float32 | float64  -> out (outer, n / 2 + 1, inner) complex
//   fft_c2r  x (outer, n / 2 + 1, inner) complex    -> out (outer, n, inner) real (n from out)
// Attributes: forward (the sign of the exponent: 1 e^{-2 pi i jk/n}, 0 e^{+2 pi i jk/n}) and scale
// (every output multiplied by it), so that the norm modes cost no extra pass. r2c with forward=0
// gives the conjugate half spectrum (ihfft); c2r with forward=1 reads x as the half spectrum of
// a Hermitian signal and gives the forward transform (hfft).
// The _nd forms (fft_c2c_nd, fft_r2c_nd, fft_c2r_nd) transform k = 2 or 3 adjacent axes at once:
// x (outer, n_1, ..., n_k, inner), the real forms halving n_k (the real transform is the last
// axis's, the others are complex), the scale applied once. They let a backend run an
// n-dimensional transform as one library call (cuFFT's rank-2/3 plans) where the 1-D forms cost
// one call per axis, and per outer index when inner > 1.
#include "fft_ops.h"

#include <cmath>
#include <string>

#include "dlarray/errors.h"
#include "dlarray/runtime.h"

namespace dlarray {
namespace {

bool IsComplex(DLArrayDType t) {
  return t.code == kDLArrayComplex && (t.bits == 64 || t.bits == 128);
}
bool IsReal(DLArrayDType t) { return t.code == kDLArrayFloat && (t.bits == 32 || t.bits == 64); }

// The operand ranks of an op: 3 (outer, n, inner) for the 1-D forms, 4 or 5 (outer, n_1, ...,
// n_k, inner) for the _nd forms, which transform axes 1..k at once (k = 2 or 3: cuFFT's ranks).
bool IsNd(const char* op_name) {
  const std::string name(op_name);
  return name.size() > 3 && name.compare(name.size() - 3, 3, "_nd") == 0;
}
std::string Layout(bool nd) {
  return nd ? "4-D or 5-D (outer, n_1, ..., n_k, inner)" : "3-D (outer, n, inner)";
}
bool RankOk(bool nd, int64_t ndim) { return nd ? ndim == 4 || ndim == 5 : ndim == 3; }

void RequireLayout(const DLArrayOpCall& c, const DLArray* a, const char* what) {
  const bool nd = IsNd(c.op_name);
  if (!RankOk(nd, a->ndim)) {
    throw ShapeError(std::string(c.op_name) + ": " + what + " must be " + Layout(nd) +
                     ", got shape " + ShapeToString(a));
  }
}

// The checks every form shares: both operands of the op's rank, the same sizes but for the last
// transformed axis (dimension ndim - 2, which the real forms halve), every transform length
// >= 1 (`signal` is the operand of the full lengths), a finite scale.
void ValidateCommon(const DLArrayOpCall& c, const DLArray* signal) {
  const DLArray* x = c.inputs[0];
  const DLArray* out = c.outputs[0];
  RequireLayout(c, x, "x");
  RequireLayout(c, out, "out");
  bool same = x->ndim == out->ndim;
  for (int d = 0; same && d < x->ndim; ++d) {
    same = d == x->ndim - 2 || x->shape[d] == out->shape[d];
  }
  if (!same) {
    const int k = x->ndim - 2;
    throw ShapeError(std::string(c.op_name) + ": x " + ShapeToString(x) + " and out " +
                     ShapeToString(out) +
                     " must have the same outer and inner sizes (dimensions 0 and " +
                     std::to_string(x->ndim - 1) + ")" +
                     (k > 1 ? " and lengths along dimensions 1 to " + std::to_string(k - 1) : ""));
  }
  for (int d = 1; d + 1 < signal->ndim; ++d) {
    if (signal->shape[d] < 1) {
      throw ShapeError(std::string(c.op_name) + ": the transform lengths must be >= 1, got shape " +
                       ShapeToString(signal));
    }
  }
  if (c.attrs[0] != 0.0 && c.attrs[0] != 1.0) {
    throw Error(ErrorKind::kValue, std::string(c.op_name) + ": forward must be 0 or 1");
  }
  if (!std::isfinite(c.attrs[1])) {
    throw Error(ErrorKind::kValue, std::string(c.op_name) + ": scale must be finite");
  }
}

// r2c and c2r: the real operand and the complex one of the same precision, the complex one
// holding n / 2 + 1 values of a row of n reals along the last transformed axis.
void ValidateHalfSpectrum(const DLArrayOpCall& c, const DLArray* real, const DLArray* half) {
  if (!IsReal(real->dtype) || !IsComplex(half->dtype) || half->dtype.bits != 2 * real->dtype.bits) {
    throw DTypeError(std::string(c.op_name) +
                     ": the real operand must be float32 or float64 and the complex one complex64 "
                     "or complex128 of the same precision, got " +
                     DTypeToString(real->dtype) + " and " + DTypeToString(half->dtype));
  }
  ValidateCommon(c, real);
  const int last = real->ndim - 2;
  if (half->shape[last] != real->shape[last] / 2 + 1) {
    throw ShapeError(std::string(c.op_name) + ": the complex operand " + ShapeToString(half) +
                     " must have n / 2 + 1 = " + std::to_string(real->shape[last] / 2 + 1) +
                     " values along dimension " + std::to_string(last) + " for the real operand " +
                     ShapeToString(real));
  }
}

}  // namespace

void ValidateFftC2C(const DLArrayOpCall& c) {  // the row's dtypes keep x and out complex, alike
  const DLArray* x = c.inputs[0];
  ValidateCommon(c, x);
  if (x->shape[x->ndim - 2] != c.outputs[0]->shape[x->ndim - 2]) {
    throw ShapeError(std::string(c.op_name) + ": out must have x's shape " + ShapeToString(x) +
                     ", got " + ShapeToString(c.outputs[0]));
  }
}

void ValidateFftR2C(const DLArrayOpCall& c) { ValidateHalfSpectrum(c, c.inputs[0], c.outputs[0]); }

void ValidateFftC2R(const DLArrayOpCall& c) { ValidateHalfSpectrum(c, c.outputs[0], c.inputs[0]); }

void InferFftR2C(const DLArrayShapeCall& c) {
  const bool nd = IsNd(c.op_name);
  const int ndim = c.input_ndims[0];
  if (!RankOk(nd, ndim)) {
    throw ShapeError(std::string(c.op_name) + ": x must be " + Layout(nd));
  }
  const DLArrayDType x = c.input_dtypes[0];
  if (!IsReal(x)) {
    throw DTypeError(std::string(c.op_name) + ": x must be float32 or float64, got " +
                     DTypeToString(x));
  }
  c.output_ndims[0] = ndim;
  for (int d = 0; d < ndim; ++d) c.output_shapes[0][d] = c.input_shapes[0][d];
  c.output_shapes[0][ndim - 2] = c.input_shapes[0][ndim - 2] / 2 + 1;
  c.output_dtypes[0] = DLArrayDType{kDLArrayComplex, static_cast<uint8_t>(2 * x.bits), 1};
}

}  // namespace dlarray
