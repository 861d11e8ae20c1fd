/*!
 * \file dlarray/kernel.h
 * \brief Kernels, op schemas and the registry a plugin fills (plugin SDK).
 */
#ifndef DLARRAY_KERNEL_H_
#define DLARRAY_KERNEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "dlarray/device.h"
#include "dlarray/dlarray.h"

namespace dlarray {

/*! \brief Everything one kernel call sees. Operands are validated by the core before the call. */
struct KernelContext {
  Device* device;                //!< the device API serving the operands
  int device_id;                 //!< id of the operands' device
  void* stream;                  //!< device->stream(device_id)
  const DLArray* const* inputs;  //!< num_inputs arrays, compact row-major
  int num_inputs;                //!< as declared by the op schema
  DLArray* const* outputs;       //!< num_outputs arrays, compact row-major
  int num_outputs;               //!< as declared by the op schema
  const double* attrs;           //!< scalar attributes, in the schema's attr_names order
  int num_attrs;                 //!< as declared by the op schema
};

/*! \brief A kernel: one callable per (op, device type). May throw dlarray::Error. */
using KernelFn = void (*)(const KernelContext& ctx);

/*! \brief What the core checks for an op before any kernel runs. */
struct OpCall {
  const std::string* op_name;    //!< the op's name, for messages
  const DLArray* const* inputs;  //!< the inputs
  int num_inputs;                //!< their count
  DLArray* const* outputs;       //!< the outputs
  int num_outputs;               //!< their count
  const double* attrs;           //!< the attributes
  int num_attrs;                 //!< their count
};

/*!
 * \brief Shape check of an op beyond counts, devices and dtypes (which the core always checks).
 *        Throws ShapeError (or another dlarray::Error) with the shapes in the message.
 */
using ValidateFn = void (*)(const OpCall& call);

/*! \brief The declaration of an op: the core declares its own, an op plugin may add more. */
struct OpSchema {
  std::string name;                     //!< e.g. "relu"
  int num_inputs = 1;                   //!< exact input count
  int num_outputs = 1;                  //!< exact output count
  std::vector<std::string> attr_names;  //!< scalar attributes, in order (e.g. {"trans_a", ...})
  ValidateFn validate = nullptr;        //!< nullptr: every input and output has the same shape
  bool allow_inplace = true;            //!< may an output share memory with an input
  std::vector<DLArrayDType> dtypes;     //!< allowed dtypes (operands alike); empty: float32 only
  std::string doc;                      //!< one line for help texts
};

/*! \brief Formats a shape as "(500, 200)" for messages. */
DLARRAY_EXPORT std::string ShapeToString(const DLArray* array);

/*! \brief Number of elements of an array (1 for ndim == 0). */
DLARRAY_EXPORT int64_t NumElements(const DLArray* array);

/*! \brief The registry a plugin receives in register_kernels. Nothing is committed if it throws. */
class DLARRAY_EXPORT Registry {
 public:
  virtual ~Registry();
  /*! \brief Declares an op the core does not know; an op of the same name must match exactly. */
  virtual void declare_op(const OpSchema& schema) = 0;
  /*! \brief Registers the kernel of (op, device_type); the op must be declared. */
  virtual void register_kernel(const std::string& op, int device_type, KernelFn fn) = 0;
};

}  // namespace dlarray

#endif  // DLARRAY_KERNEL_H_
