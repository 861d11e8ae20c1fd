// Array fields and operand counts, checked before anything is read through them.
#include "validate.h"

#include <cstdint>
#include <limits>

#include "dlarray/errors.h"
#include "dlarray/runtime.h"
#include "runtime_state.h"

namespace dlarray {

bool IsSupportedDType(DLArrayDType t) {
  if (t.lanes != 1) return false;
  switch (t.code) {
    case kDLArrayInt:
    case kDLArrayUInt:
      return t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
    case kDLArrayFloat:
      return t.bits == 16 || t.bits == 32 || t.bits == 64;
    default:
      return false;
  }
}

int64_t CheckArrayFields(const DLArray* a, const std::string& what) {
  if (a == nullptr) throw Error(ErrorKind::kValue, what + " is null");
  if (a->ndim < 0 || a->ndim > 64) {
    throw ShapeError(what + " has ndim " + std::to_string(a->ndim) + " (0 to 64 are supported)");
  }
  if (a->ndim > 0 && a->shape == nullptr) {
    throw ShapeError(what + " has ndim " + std::to_string(a->ndim) + " but no shape");
  }
  if (!IsSupportedDType(a->dtype)) {
    throw DTypeError(what + " has the unsupported dtype " + DTypeToString(a->dtype) +
                     " (supported: int8-64, uint8-64, float16/32/64, one lane)");
  }
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t elem = static_cast<int64_t>(DTypeBytes(a->dtype));
  int64_t count = 1;
  for (int i = 0; i < a->ndim; ++i) {
    const int64_t d = a->shape[i];
    if (d < 1) {
      throw ShapeError(what + " has shape " + ShapeToString(a) + ": every dimension must be >= 1");
    }
    if (count > kMax / d) {
      throw ShapeError(what + " has shape " + ShapeToString(a) +
                       ": its element count overflows int64");
    }
    count *= d;
  }
  if (count > kMax / elem) {
    throw ShapeError(what + " has shape " + ShapeToString(a) + ": its size in bytes (" +
                     DTypeToString(a->dtype) + ") overflows int64");
  }
  if (a->data == nullptr) throw Error(ErrorKind::kValue, what + " has no data (null pointer)");
  // Kernels read whole elements (and vectors of them): data + byte_offset must be a multiple of
  // the element size.
  if ((reinterpret_cast<uintptr_t>(a->data) + a->byte_offset) % static_cast<uint64_t>(elem) != 0) {
    throw Error(ErrorKind::kValue, what + ": data + byte_offset is not aligned to its " +
                                       std::to_string(elem) + "-byte elements");
  }
  if (a->strides != nullptr) {
    int64_t expect = 1;
    for (int i = a->ndim - 1; i >= 0; --i) {
      if (a->shape[i] != 1 && a->strides[i] != expect) {
        throw ShapeError(what + " is not compact row-major (strides are not supported)");
      }
      expect *= a->shape[i];
    }
  }
  return count;
}

void CheckContext(DLContext ctx, const std::string& what) {
  if (ctx.device_type == kDLArrayCPU && ctx.device_id == 0 && DeviceCount(kDLArrayCPU) == 0) {
    return;  // host memory without a cpu plugin
  }
  try {
    RuntimeState::Get().DeviceFor(ctx);
  } catch (const Error& e) {
    throw Error(e.kind(), what + ": " + e.what());
  }
}

void CheckOperandCounts(const OpInfo& s, int num_inputs, int num_outputs, int num_attrs) {
  const int want_attrs = static_cast<int>(s.attr_names.size());
  if (num_inputs == s.num_inputs && num_outputs == s.num_outputs && num_attrs == want_attrs) return;
  auto plural = [](int n, const char* word) {
    return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
  };
  std::string msg = s.name + ": takes " + plural(s.num_inputs, "input") + ", " +
                    plural(s.num_outputs, "output") + " and " + plural(want_attrs, "attribute") +
                    "; got " + plural(num_inputs, "input") + ", " + plural(num_outputs, "output") +
                    " and " + plural(num_attrs, "attribute");
  if (num_inputs < 0 || num_outputs < 0 || num_attrs < 0) msg += " (a count is negative)";
  throw Error(ErrorKind::kValue, msg);
}

}  // namespace dlarray
