#include "nccl_checks.h"

#include <string>

#include "dlarray/errors.h"
#include "dlarray/ext/collective_util.h"
#include "dlarray/sdk_util.h"

namespace dlarray {
namespace cuda {
namespace nccl {

int NcclType(DLArrayDType t, const char* op) {
  if (t.lanes == 1) {
    if (t.code == kDLArrayFloat && (t.bits == 16 || t.bits == 32 || t.bits == 64)) {
      return t.bits == 16 ? 6 : t.bits == 32 ? 7 : 8;
    }
    if (t.code == kDLArrayBfloat && t.bits == 16) return 9;  // ncclBfloat16 (NCCL 2.10+)
    if (t.code == kDLArrayInt && (t.bits == 8 || t.bits == 32 || t.bits == 64)) {
      return t.bits == 8 ? 0 : t.bits == 32 ? 2 : 4;
    }
    if (t.code == kDLArrayUInt && (t.bits == 8 || t.bits == 32 || t.bits == 64)) {
      return t.bits == 8 ? 1 : t.bits == 32 ? 3 : 5;
    }
  }
  throw DTypeError(std::string(op) + ": NCCL has no " + FormatDType(t) +
                   " (float16/32/64, bfloat16, int8/32/64, uint8/32/64)");
}

size_t CheckArray(const DLArrayNcclComm* c, const DLArray* a, const char* op, const char* which) {
  if (a == nullptr) throw Error(ErrorKind::kValue, std::string(op) + ": the " + which + " is null");
  if (a->ctx.device_type != kDLArrayCUDA || a->ctx.device_id != c->device_id) {
    throw DeviceError(std::string(op) + ": the " + which + " is on " + FormatDevice(a->ctx) +
                      " but this communicator (" + Who(c) + ") serves " +
                      FormatDevice({kDLArrayCUDA, c->device_id}));
  }
  return CheckedCompactSize(a, op, which);
}

void CheckSameDType(const DLArray* send, const DLArray* recv, const char* op) {
  if (send->dtype != recv->dtype) {
    throw DTypeError(std::string(op) + ": input is " + FormatDType(send->dtype) +
                     " but output is " + FormatDType(recv->dtype));
  }
}

void CheckReduceOp(int32_t op, const char* what) {
  if (op < kDLArrayNcclSum || op > kDLArrayNcclAvg) {
    throw Error(ErrorKind::kValue, std::string(what) + ": unknown reduction " + std::to_string(op) +
                                       " (0 sum, 1 prod, 2 max, 3 min, 4 avg)");
  }
}

void RequireSize(size_t got, size_t want, const char* op, const char* which, const char* rule) {
  if (got != want) {
    throw ShapeError(std::string(op) + ": the " + which + " has " + std::to_string(got) +
                     " elements but " + rule + " needs " + std::to_string(want));
  }
}

size_t CheckAllReduce(const DLArrayNcclComm* c, const DLArray* send, const DLArray* recv,
                      int32_t op) {
  const size_t n = CheckArray(c, send, "all_reduce", "input");
  RequireSize(CheckArray(c, recv, "all_reduce", "output"), n, "all_reduce", "output",
              "an input of that size");
  CheckSameDType(send, recv, "all_reduce");
  CheckReduceOp(op, "all_reduce");
  (void)NcclType(send->dtype, "all_reduce");
  return n;
}

}  // namespace nccl
}  // namespace cuda
}  // namespace dlarray
