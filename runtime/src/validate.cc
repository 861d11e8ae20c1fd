// Array fields and operand counts, checked before anything is read through them.
#include "validate.h"

#include <cstdint>
#include <limits>

#include "dlarray/errors.h"
#include "dlarray/runtime.h"
#include "runtime_state.h"

namespace dlarray {

bool IsSupportedDType(DLArrayDType t) { return IsStorageDType(t); }

int64_t CheckArrayFields(const DLArray* a, const OperandName& name, bool allow_strided) {
  auto what = [&] { return name.str(); };
  if (a == nullptr) throw Error(ErrorKind::kValue, what() + " is null");
  if (a->ndim < 0 || a->ndim > 64) {
    throw ShapeError(what() + " has ndim " + std::to_string(a->ndim) + " (0 to 64 are supported)");
  }
  if (a->ndim > 0 && a->shape == nullptr) {
    throw ShapeError(what() + " has ndim " + std::to_string(a->ndim) + " but no shape");
  }
  if (!IsSupportedDType(a->dtype)) {
    throw DTypeError(what() + " has the unsupported dtype " + DTypeToString(a->dtype) +
                     " (supported: bool, int8-64, uint8-64, float16/32/64, bfloat16; one lane)");
  }
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t elem = static_cast<int64_t>(DTypeBytes(a->dtype));
  int64_t count = 1;
  bool empty = false;
  for (int i = 0; i < a->ndim; ++i) {
    const int64_t d = a->shape[i];
    if (d < 0) {
      throw ShapeError(what() + " has shape " + ShapeToString(a) +
                       ": every dimension must be >= 0");
    }
    if (d == 0) {
      empty = true;
      continue;
    }
    if (count > kMax / d) {
      throw ShapeError(what() + " has shape " + ShapeToString(a) +
                       ": its element count overflows int64");
    }
    count *= d;
  }
  if (count > kMax / elem) {
    throw ShapeError(what() + " has shape " + ShapeToString(a) + ": its size in bytes (" +
                     DTypeToString(a->dtype) + ") overflows int64");
  }
  if (empty) return 0;  // zero-size: no element is read, data may be null, any strides
  if (a->data == nullptr) throw Error(ErrorKind::kValue, what() + " has no data (null pointer)");
  // Kernels read whole elements (and vectors of them): data + byte_offset must be a multiple of
  // the element size.
  if ((reinterpret_cast<uintptr_t>(a->data) + a->byte_offset) % static_cast<uint64_t>(elem) != 0) {
    throw Error(ErrorKind::kValue, what() + ": data + byte_offset is not aligned to its " +
                                       std::to_string(elem) + "-byte elements");
  }
  if (!allow_strided && !IsCompact(a)) {
    throw ShapeError(what() + " of shape " + ShapeToString(a) +
                     " is a strided (non-contiguous) view, and only compact row-major arrays are "
                     "accepted here: make it compact with .copy() first");
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
