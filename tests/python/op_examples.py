"""Valid operands of the ops that the generic op tests' default call ((2, 2) float32 ones for
every operand) does not fit: the indexing primitives' canonical shapes and dtypes (see
runtime/src/index_ops.cc). Ones as indices and masks are valid for these shapes."""
import numpy as np

import dlarray

_F32, _I64 = np.dtype(np.float32), np.dtype(np.int64)
EXAMPLES = {
    "gather": {"x": ((1, 2, 2), _F32), "indices": ((2,), _I64), "out": ((1, 2, 2), _F32)},
    "gather_along": {"x": ((1, 2, 2), _F32), "indices": ((1, 2, 2), _I64),
                     "out": ((1, 2, 2), _F32)},
    "scatter": {"values": ((1, 2, 2), _F32), "indices": ((2,), _I64), "out": ((1, 2, 2), _F32)},
    "nonzero": {"mask": ((2, 2), np.dtype(np.bool_)), "out": ((5,), _I64)},
    "compress": {"x": ((4,), _F32), "mask": ((4,), np.dtype(np.bool_)), "out": ((4,), _F32),
                 "count": ((1,), _I64)},
    "argsort": {"x": ((2, 2), _F32), "out": ((2, 2), _I64)},
    "reduce": {"x": ((2, 2), _F32), "out": ((2,), _F32)},
    # The elementwise table's integer-only ops, and where's and masked_fill's bool condition.
    **{op: {p: ((2, 2), np.dtype(np.int32)) for p in ("x", "a", "b", "out")}
       for op in ("bitwise_invert", "bitwise_and", "bitwise_or", "bitwise_xor",
                  "bitwise_left_shift", "bitwise_right_shift")},
    "where": {"condition": ((2, 2), np.dtype(np.bool_))},
    "masked_fill": {"condition": ((2, 2), np.dtype(np.bool_)), "out": ((2, 2), _F32)},
    # A dense layer's fused products (runtime/src/linear_ops.cc): the bias vectors are 1-D.
    "linear": {"bias": ((2,), _F32)},
    "linear_weight_grad": {"dbias": ((2,), _F32)},
    # The linalg factorizations (runtime/src/linalg_ops.cc): a stack of one 2 x 2 matrix.
    **{op: {**{p: ((1, 2, 2), _F32) for p in ("a", "rhs", "lu", "x", "l", "v", "u", "vh", "q",
                                              "r")},
            "pivots": ((1, 2), _I64), "info": ((1,), _I64), "w": ((1, 2), _F32),
            "s": ((1, 2), _F32)}
       for op in ("linalg_lu", "linalg_solve", "linalg_cholesky", "linalg_eigh", "linalg_svd",
                  "linalg_qr")},
    # fft: (outer, n, inner) signals; 2 reals <-> 2 // 2 + 1 = 2 complex values.
    "fft_r2c": {"x": ((1, 2, 2), _F32), "out": ((1, 2, 2), np.dtype(np.complex64))},
    "fft_c2r": {"x": ((1, 2, 2), np.dtype(np.complex64)), "out": ((1, 2, 2), _F32)},
    "fft_c2c": {p: ((1, 2, 2), np.dtype(np.complex64)) for p in ("x", "out")},
    # gpulinalg: the _nd forms, (outer, n_1, n_2, inner).
    "fft_r2c_nd": {"x": ((1, 2, 2, 1), _F32), "out": ((1, 2, 2, 1), np.dtype(np.complex64))},
    "fft_c2r_nd": {"x": ((1, 2, 2, 1), np.dtype(np.complex64)), "out": ((1, 2, 2, 1), _F32)},
    "fft_c2c_nd": {p: ((1, 2, 2, 1), np.dtype(np.complex64)) for p in ("x", "out")},
    # The complex-only ops: conj keeps the dtype, the part ops give the parts' real dtype.
    "conj": {p: ((2, 2), np.dtype(np.complex64)) for p in ("x", "out")},
    **{op: {"x": ((2, 2), np.dtype(np.complex64)), "out": ((2, 2), _F32)}
       for op in ("real", "imag", "complex_abs")},
}


def spec(op, operand):
    """(shape, dtype) of a valid operand of op: (2, 2) float32 unless EXAMPLES says otherwise."""
    return EXAMPLES.get(op, {}).get(operand, ((2, 2), _F32))


def ones(op, operand):
    """A valid operand of op on the CPU, filled with ones."""
    shape, dtype = spec(op, operand)
    return dlarray.asarray(np.ones(shape, dtype), dlarray.cpu(0))
