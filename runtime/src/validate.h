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

/*! \brief int8..64, uint8..64, float16/32/64, one lane: the dtypes arrays may have. */
bool IsSupportedDType(DLArrayDType t);

/*!
 * \brief Validates the fields of an array: ndim in [0, 64], a shape when ndim > 0, every
 *        dimension >= 1, an element count and byte size that fit in int64, a supported dtype,
 *        data (with byte_offset) aligned to the element size, and compact row-major strides (or
 *        none). Throws a dlarray::Error naming `what`.
 *        The context is not checked here (see CheckContext). Returns the element count.
 */
int64_t CheckArrayFields(const DLArray* a, const std::string& what);

/*!
 * \brief Throws unless ctx is served by a loaded plugin with that id (for cpu(0) it is enough that
 *        no cpu plugin is loaded: host memory is then copied with memcpy).
 */
void CheckContext(DLContext ctx, const std::string& what);

/*! \brief Throws ValueError "<op>: takes ... got ..." unless the counts match the schema. */
void CheckOperandCounts(const OpInfo& s, int num_inputs, int num_outputs, int num_attrs);

}  // namespace dlarray

#endif  // DLARRAY_RUNTIME_SRC_VALIDATE_H_
