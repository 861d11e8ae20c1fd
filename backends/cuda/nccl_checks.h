/*!
 * \file nccl_checks.h
 * \brief The argument checks of the "dlarray.nccl.v1" extension's collectives: the arrays on the
 *        communicator's GPU, compact, of one dtype NCCL has, of the sizes the collective needs.
 *        Each throws the dlarray error naming the collective and the argument.
 */
#ifndef DLARRAY_BACKENDS_CUDA_NCCL_CHECKS_H_
#define DLARRAY_BACKENDS_CUDA_NCCL_CHECKS_H_

#include <cstddef>
#include <cstdint>

#include "dlarray/plugin_api.h"
#include "nccl_comm.h"

namespace dlarray {
namespace cuda {
namespace nccl {

/*! \brief ncclDataType_t of a dtype; DTypeError for one NCCL lacks. */
int NcclType(DLArrayDType t, const char* op);
/*! \brief Checks that the array lives on the communicator's GPU and is compact; its size. */
size_t CheckArray(const DLArrayNcclComm* c, const DLArray* a, const char* op, const char* which);
/*! \brief The array's first element. */
inline void* Data(const DLArray* a) { return static_cast<char*>(a->data) + a->byte_offset; }
void CheckSameDType(const DLArray* send, const DLArray* recv, const char* op);
/*! \brief ValueError for a reduction other than kDLArrayNcclSum..kDLArrayNcclAvg. */
void CheckReduceOp(int32_t op, const char* what);
/*! \brief ShapeError unless got == want ("the <which> has <got> elements but <rule> needs"). */
void RequireSize(size_t got, size_t want, const char* op, const char* which, const char* rule);
/*! \brief Checks one all_reduce's arrays; returns the element count. */
size_t CheckAllReduce(const DLArrayNcclComm* c, const DLArray* send, const DLArray* recv,
                      int32_t op);

}  // namespace nccl
}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_NCCL_CHECKS_H_
