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

void Require3D(const DLArrayOpCall& c, const DLArray* a, const char* what) {
  if (a->ndim != 3) {
    throw ShapeError(std::string(c.op_name) + ": " + what +
                     " must be 3-D (outer, n, inner), got shape " + ShapeToString(a));
  }
}

// The checks every form shares: both operands 3-D, the same outer and inner sizes, a length
// n >= 1 (`signal` is the operand of length n), a finite scale.
void ValidateCommon(const DLArrayOpCall& c, const DLArray* signal) {
  Require3D(c, c.inputs[0], "x");
  Require3D(c, c.outputs[0], "out");
  if (c.inputs[0]->shape[0] != c.outputs[0]->shape[0] ||
      c.inputs[0]->shape[2] != c.outputs[0]->shape[2]) {
    throw ShapeError(std::string(c.op_name) + ": x " + ShapeToString(c.inputs[0]) + " and out " +
                     ShapeToString(c.outputs[0]) +
                     " must have the same outer and inner sizes (dimensions 0 and 2)");
  }
  if (signal->shape[1] < 1) {
    throw ShapeError(std::string(c.op_name) + ": the transform length must be >= 1, got shape " +
                     ShapeToString(signal));
  }
  if (c.attrs[0] != 0.0 && c.attrs[0] != 1.0) {
    throw Error(ErrorKind::kValue, std::string(c.op_name) + ": forward must be 0 or 1");
  }
  if (!std::isfinite(c.attrs[1])) {
    throw Error(ErrorKind::kValue, std::string(c.op_name) + ": scale must be finite");
  }
}

// r2c and c2r: the real operand and the complex one of the same precision, the complex one
// holding n / 2 + 1 values of a row of n reals.
void ValidateHalfSpectrum(const DLArrayOpCall& c, const DLArray* real, const DLArray* half) {
  if (!IsReal(real->dtype) || !IsComplex(half->dtype) || half->dtype.bits != 2 * real->dtype.bits) {
    throw DTypeError(std::string(c.op_name) +
                     ": the real operand must be float32 or float64 and the complex one complex64 "
                     "or complex128 of the same precision, got " +
                     DTypeToString(real->dtype) + " and " + DTypeToString(half->dtype));
  }
  ValidateCommon(c, real);
  if (half->shape[1] != real->shape[1] / 2 + 1) {
    throw ShapeError(std::string(c.op_name) + ": the complex operand " + ShapeToString(half) +
                     " must have n / 2 + 1 = " + std::to_string(real->shape[1] / 2 + 1) +
                     " columns for the real operand " + ShapeToString(real));
  }
}

}  // namespace

void ValidateFftC2C(const DLArrayOpCall& c) {  // the row's dtypes keep x and out complex, alike
  const DLArray* x = c.inputs[0];
  ValidateCommon(c, x);
  if (x->shape[1] != c.outputs[0]->shape[1]) {
    throw ShapeError(std::string(c.op_name) + ": out must have x's shape " + ShapeToString(x) +
                     ", got " + ShapeToString(c.outputs[0]));
  }
}

void ValidateFftR2C(const DLArrayOpCall& c) { ValidateHalfSpectrum(c, c.inputs[0], c.outputs[0]); }

void ValidateFftC2R(const DLArrayOpCall& c) { ValidateHalfSpectrum(c, c.outputs[0], c.inputs[0]); }

void InferFftR2C(const DLArrayShapeCall& c) {
  if (c.input_ndims[0] != 3) {
    throw ShapeError(std::string(c.op_name) + ": x must be 3-D (outer, n, inner)");
  }
  const DLArrayDType x = c.input_dtypes[0];
  if (!IsReal(x)) {
    throw DTypeError(std::string(c.op_name) + ": x must be float32 or float64, got " +
                     DTypeToString(x));
  }
  c.output_ndims[0] = 3;
  c.output_shapes[0][0] = c.input_shapes[0][0];
  c.output_shapes[0][1] = c.input_shapes[0][1] / 2 + 1;
  c.output_shapes[0][2] = c.input_shapes[0][2];
  c.output_dtypes[0] = DLArrayDType{kDLArrayComplex, static_cast<uint8_t>(2 * x.bits), 1};
}

}  // namespace dlarray
