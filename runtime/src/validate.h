// Checks of arrays the runtime did not make (C API callers, NumPy views) and of operand counts,
// shared by Invoke and CopyFromTo: every field is validated before any is used to touch memory.
#ifndef DLARRAY_RUNTIME_SRC_VALIDATE_H_
#define DLARRAY_RUNTIME_SRC_VALIDATE_H_

#include <cstdint>
#include <string>

#include "dlarray/dlarray.h"
#include "dlarray/kernel.h"
#include "dlarray/runtime.h"

namespace dlarray {

/*! \brief The dtypes arrays may have (IsStorageDType: bool, int8-64, uint8-64, float16/32/64,
 *         bfloat16; one lane). */
bool IsSupportedDType(DLArrayDType t);

/*!
 * \brief How an error message names the array being checked: a fixed text, or an op's operand
 *        ("<op>: input 1"). The text is built only when a check fails: Invoke checks every
 *        operand of every call, and building strings there cost more than the checks.
 */
class OperandName {
 public:
  OperandName(const char* text) : text_(text) {}  // NOLINT(runtime/explicit): literals convert
  OperandName(const std::string& op, const char* kind, int index)
      : op_(&op), text_(kind), index_(index) {}
  std::string str() const {
    if (op_ == nullptr) return text_;
    return *op_ + ": " + text_ + " " + std::to_string(index_);
  }

 private:
  const std::string* op_ = nullptr;
  const char* text_;
  int index_ = 0;
};

/*!
 * \brief Validates the fields of an array: ndim in [0, 64], a shape when ndim > 0, every
 *        dimension >= 0, an element count and byte size that fit in int64, a supported dtype,
 *        and, unless the array is zero-size (then data may be null): data (with byte_offset)
 *        aligned to the element size, and compact row-major strides (or none) unless
 *        allow_strided. Throws a dlarray::Error naming `what`.
 *        The context is not checked here (see CheckContext). Returns the element count.
 */
int64_t CheckArrayFields(const DLArray* a, const OperandName& name, bool allow_strided = false);

/*!
 * \brief Throws unless ctx is served by a loaded plugin with that id (for cpu(0) it is enough that
 *        no cpu plugin is loaded: host memory is then copied with memcpy).
 */
void CheckContext(DLContext ctx, const std::string& what);

/*! \brief Throws ValueError "<op>: takes ... got ..." unless the counts match the schema. */
void CheckOperandCounts(const OpInfo& s, int num_inputs, int num_outputs, int num_attrs);

}  // namespace dlarray

#endif  // DLARRAY_RUNTIME_SRC_VALIDATE_H_
