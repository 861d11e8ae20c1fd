// Out-of-line anchors for the SDK's polymorphic types (one vtable and typeinfo, in the core), and
// the small helpers the SDK declares.
#include "dlarray/errors.h"

#include <cstdint>
#include <sstream>

#include "dlarray/device.h"
#include "dlarray/kernel.h"

namespace dlarray {

Error::~Error() = default;
ShapeError::~ShapeError() = default;
DTypeError::~DTypeError() = default;
DeviceError::~DeviceError() = default;
BackendError::~BackendError() = default;
OutOfMemoryError::~OutOfMemoryError() = default;
Registry::~Registry() = default;
Device::~Device() = default;

MemoryStats Device::memory_stats(int id) {
  (void)id;
  return {};
}

void Device::set_option(const std::string& key, const std::string& value) {
  (void)value;
  throw Error(ErrorKind::kValue,
              "unknown option '" + key + "' for device type " + std::to_string(device_type()));
}

std::string Device::get_option(const std::string& key) {
  throw Error(ErrorKind::kValue,
              "unknown option '" + key + "' for device type " + std::to_string(device_type()));
}

std::string ShapeToString(const DLArray* array) {
  std::ostringstream os;
  os << '(';
  for (int i = 0; i < array->ndim; ++i) {
    if (i) os << ", ";
    os << array->shape[i];
  }
  if (array->ndim == 1) os << ',';
  os << ')';
  return os.str();
}

int64_t NumElements(const DLArray* array) {
  // Saturates instead of overflowing: arrays whose count does not fit are refused by the core
  // before any kernel sees them, but callers may ask first (e.g. to pick a code path).
  int64_t n = 1;
  for (int i = 0; i < array->ndim; ++i) {
    if (__builtin_mul_overflow(n, array->shape[i], &n)) return INT64_MAX;
  }
  return n;
}

}  // namespace dlarray
