// The ops the core declares; their ids are fixed, in this order, so the bindings need no lookup.
#ifndef DLARRAY_RUNTIME_SRC_CORE_OPS_H_
#define DLARRAY_RUNTIME_SRC_CORE_OPS_H_

#include <vector>

#include "dlarray/plugin_api.h"
#include "dlarray/runtime.h"

namespace dlarray {

enum CoreOp : int {
  kArraySet = 0,
  kBroadcastTo,
  kReduceSumAxisZero,
  kMatrixElementwiseAdd,
  kMatrixElementwiseAddByConst,
  kMatrixElementwiseMultiply,
  kMatrixElementwiseMultiplyByConst,
  kMatrixMultiply,
  kRelu,
  kReluGradient,
  kSoftmax,
  kSoftmaxCrossEntropy,
  kCopy,
  kAstype,
  kCompare,
  kCompareByConst,
  kMatrixElementwiseDivide,
  kMatrixElementwiseDivideByConst,
  kNumCoreOps,
};

/*! \brief The comparisons of compare and compare_by_const (attribute "cmp"). */
enum CompareKind : int {
  kCompareEqual = 0,
  kCompareNotEqual = 1,
  kCompareLess = 2,
  kCompareLessEqual = 3,
  kCompareGreater = 4,
  kCompareGreaterEqual = 5,
};

/*! \brief Declarations of the core ops, indexed by CoreOp. */
std::vector<OpInfo> CoreOps();

/*! \brief The default shape rule: every input and output has the same shape. */
void ValidateSameShape(const DLArrayOpCall& call);

}  // namespace dlarray

#endif  // DLARRAY_RUNTIME_SRC_CORE_OPS_H_
