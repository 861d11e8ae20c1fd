/*!
 * \file dlarray/kernel.h
 * \brief Kernels, op schemas and the registry, in C++ (header-only plugin SDK layer over the C
 *        structs of dlarray/plugin_api.h).
 */
#ifndef DLARRAY_KERNEL_H_
#define DLARRAY_KERNEL_H_

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "dlarray/device.h"
#include "dlarray/dlarray.h"
#include "dlarray/errors.h"
#include "dlarray/plugin_api.h"

namespace dlarray {

/*!
 * \brief Everything one kernel call sees. Operands are validated by the core before the call:
 *        they are compact row-major (except for the core op copy, whose kernels get any strides,
 *        in elements, on either side), and never zero-size (the core runs no kernel then).
 */
struct KernelContext {
  Device* device;                 //!< this plugin's Device when it serves the operands, else null
  int device_id;                  //!< id of the operands' device
  void* stream;                   //!< the device's stream (nullptr: synchronous device)
  const DLArray* const* inputs;   //!< num_inputs arrays, compact row-major
  int num_inputs;                 //!< as declared by the op schema
  DLArray* const* outputs;        //!< num_outputs arrays, compact row-major
  int num_outputs;                //!< as declared by the op schema
  const double* attrs;            //!< scalar attributes, in the schema's attr_names order
  int num_attrs;                  //!< as declared by the op schema
  int device_type;                //!< DLArrayDeviceType of the operands
  const char* op_name;            //!< the op's name ("" before ABI 2.1 cores)
  const DLArrayKernelCall* call;  //!< the C call: core functions, the device's C table
};

/*! \brief A kernel: one callable per (op, device type). May throw dlarray::Error. */
using KernelFn = void (*)(const KernelContext& ctx);

/*! \brief What a shape check sees. */
struct OpCall {
  const char* op_name;            //!< the op's name, for messages
  const DLArray* const* inputs;   //!< the inputs
  int num_inputs;                 //!< their count
  const DLArray* const* outputs;  //!< the outputs
  int num_outputs;                //!< their count
  const double* attrs;            //!< the attributes
  int num_attrs;                  //!< their count
};

/*!
 * \brief Shape check of an op beyond counts, devices and dtypes (which the core always checks).
 *        Throws ShapeError (or another dlarray::Error) with the shapes in the message.
 */
using ValidateFn = void (*)(const OpCall& call);

/*! \brief Shapes of arrays, e.g. {{500, 200}, {200}}. */
using Shapes = std::vector<std::vector<int64_t>>;

/*!
 * \brief Output shapes from input shapes and attributes; throws ShapeError when they do not fit.
 *        Outputs get input 0's dtype.
 */
using InferShapeFn = Shapes (*)(const Shapes& input_shapes, const std::vector<double>& attrs);

/*! \brief One argument of a gradient op: an input, an output, or an output's gradient. */
struct GradArg {
  DLArrayGradArgKind kind;  //!< which kind of value
  int index;                //!< which input or output
  static GradArg Input(int i) { return {kDLArrayGradInput, i}; }
  static GradArg Output(int i) { return {kDLArrayGradOutput, i}; }
  static GradArg OutputGrad(int i) { return {kDLArrayGradOutputGrad, i}; }
};

/*! \brief How input `input` is differentiated: op(args...) is its gradient (see DLArrayGradient).
 */
struct Gradient {
  int input = 0;              //!< the differentiable input
  std::string op;             //!< the gradient op (one output, shaped like the input)
  std::vector<GradArg> args;  //!< its inputs, in order
  std::string attrs{};        //!< the gradient op's attributes set (DLArrayGradient.attrs)
  std::string when{};         //!< "name" / "!name": when this holds (DLArrayGradient.when)
};

/*! \brief The declaration of an op: the core declares its own, an op plugin may add more. */
struct OpSchema {
  std::string name;                       //!< e.g. "relu"
  int num_inputs = 1;                     //!< exact input count
  int num_outputs = 1;                    //!< exact output count
  std::vector<std::string> attr_names;    //!< scalar attributes, in order (e.g. {"trans_a", ...})
  ValidateFn validate = nullptr;          //!< nullptr: every input and output has the same shape
  bool allow_inplace = true;              //!< may an output share memory with an input
  std::vector<DLArrayDType> dtypes;       //!< allowed dtypes (operands alike); empty: float32 only
  std::string doc;                        //!< one line for help texts
  std::vector<std::string> input_names;   //!< keyword names of the inputs (empty: x, x1, ...)
  std::vector<std::string> output_names;  //!< keyword names of the outputs (empty: out, ...)
  std::vector<Gradient> gradients;        //!< how inputs are differentiated (empty: not)
  InferShapeFn infer_shape = nullptr;     //!< nullptr: outputs shaped like input 0 (see C ABI)
};

/*! \brief Number of elements of an array (1 for ndim == 0). */
inline int64_t NumElements(const DLArray* array) {
  // Saturates instead of overflowing: arrays whose count does not fit are refused by the core
  // before any kernel sees them, but callers may ask first (e.g. to pick a code path).
  int64_t n = 1;
  for (int i = 0; i < array->ndim; ++i) {
    if (__builtin_mul_overflow(n, array->shape[i], &n)) return INT64_MAX;
  }
  return n;
}

/*!
 * \brief The first element of an array as T* (data + byte_offset): `Data<const float>(in)` for
 *        inputs, `Data<float>(out)` for outputs. Works for device pointers too (no access).
 */
template <typename T>
inline T* Data(const DLArray* array) {
  using Byte = typename std::conditional<std::is_const<T>::value, const char, char>::type;
  return reinterpret_cast<T*>(static_cast<Byte*>(array->data) + array->byte_offset);
}

/*! \brief Formats a shape as "(500, 200)" for messages. */
inline std::string ShapeToString(const DLArray* array) {
  std::string s = "(";
  for (int i = 0; i < array->ndim; ++i) s += (i ? ", " : "") + std::to_string(array->shape[i]);
  return s + (array->ndim == 1 ? ",)" : ")");
}

}  // namespace dlarray

#endif  // DLARRAY_KERNEL_H_
