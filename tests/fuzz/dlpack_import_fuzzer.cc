// libFuzzer target: the consumer's side of DLPack (ArrayFromDLPack, what from_dlpack calls on
// every capsule) with managed tensors, versioned and legacy, whose fields are the input's: rank,
// shape, strides, byte_offset, dtype, device, flags, and a data pointer inside a real buffer.
//
// The input is read as fixed fields (see Input) rather than through FuzzedDataProvider, so that
// a seed states a tensor plainly: tests/fuzz/dlpack_seeds.py writes the seed corpus, with
// the audit's two crashes (strides [2**61, 1], byte_offset 2**63 + 8) and ordinary layouts.
//
// Checked on every input: a refusal is a dlarray::Error with a message; the producer's deleter
// runs exactly once, refused or not; an accepted tensor's span is what exact (128-bit) arithmetic
// gives, fits int64 and the address space, and, when it lies inside the buffer, a copy of the
// array holds the elements the fields address (ASan watches every read). A tensor whose fields
// are ordinary and whose elements lie inside the buffer must be accepted.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "dlarray/dlpack.h"
#include "dlarray/errors.h"
#include "dlarray/runtime.h"

namespace {

using int128 = __int128;
constexpr size_t kBufferBytes = 4096;
constexpr int64_t kMaxCopied = int64_t{1} << 16;  // elements copied and compared per input

[[noreturn]] void Abort(const char* what) {
  std::fprintf(stderr, "dlpack_import_fuzzer: %s\n", what);
  std::abort();
}

// Little-endian fields in input order; zeros once the input ends.
class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  template <typename T>
  T Take() {
    uint8_t bytes[sizeof(T)] = {};
    for (size_t i = 0; i < sizeof(T) && pos_ < size_; ++i) bytes[i] = data_[pos_++];
    T v;
    std::memcpy(&v, bytes, sizeof(T));
    return v;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// mode bits of the first byte.
constexpr uint8_t kVersioned = 1, kStrides = 2, kReadOnly = 4, kNullShape = 8, kNullDeleter = 16;

struct Tensor {
  uint8_t mode = 0;
  int32_t ndim = 0;
  std::vector<int64_t> shape, strides;  // at least one entry: a pointer that is never null
  DLArray dl{};
};

Tensor Read(Input& in, char* buffer) {
  Tensor t;
  t.mode = in.Take<uint8_t>();
  t.ndim = in.Take<int32_t>();
  t.dl.dtype.code = in.Take<uint8_t>();
  t.dl.dtype.bits = in.Take<uint8_t>();
  t.dl.dtype.lanes = in.Take<uint16_t>();
  t.dl.ctx.device_type = in.Take<int32_t>();
  t.dl.ctx.device_id = in.Take<int32_t>();
  t.dl.byte_offset = in.Take<uint64_t>();
  t.dl.data = buffer + in.Take<uint16_t>() % kBufferBytes;
  // Exactly ndim entries (one for ndim outside [1, 64]): ASan reports a read past them.
  const size_t n = t.ndim >= 1 && t.ndim <= DLARRAY_MAX_NDIM ? static_cast<size_t>(t.ndim) : 1;
  for (size_t i = 0; i < n; ++i) t.shape.push_back(in.Take<int64_t>());
  for (size_t i = 0; i < n; ++i) t.strides.push_back(in.Take<int64_t>());
  t.dl.ndim = t.ndim;
  t.dl.shape = (t.mode & kNullShape) != 0 ? nullptr : t.shape.data();
  t.dl.strides = (t.mode & kStrides) != 0 ? t.strides.data() : nullptr;
  return t;
}

int deleted = 0;
void DeleteVersioned(DLArrayManagedTensorVersioned* /*self*/) { ++deleted; }
void DeleteLegacy(DLArrayManagedTensor* /*self*/) { ++deleted; }

// What exact arithmetic says about the fields: their element span [lo, hi) from data, in bytes.
struct Expect {
  bool ordinary = false;  // rank, shape, dtype and device any consumer must take
  int128 count = 0;
  int128 lo = 0, hi = 0;
};

Expect Compute(const Tensor& t) {
  Expect e;
  const DLArray& a = t.dl;
  if (a.ndim < 0 || a.ndim > DLARRAY_MAX_NDIM || (a.ndim > 0 && a.shape == nullptr)) return e;
  const DLContext ctx = dlarray::ContextFromDLPack(a.ctx);
  if (!dlarray::IsStorageDType(a.dtype) || ctx.device_type != kDLArrayCPU || ctx.device_id != 0) {
    return e;
  }
  const int128 elem = static_cast<int128>(dlarray::DTypeBytes(a.dtype));
  const int128 big = int128{1} << 100;  // saturation: far outside int64, and * elem still fits
  int128 count = 1;
  bool empty = false;
  for (int i = 0; i < a.ndim; ++i) {
    if (a.shape[i] < 0) return e;
    empty = empty || a.shape[i] == 0;
    count = std::min(count * a.shape[i], int128{1} << 64);  // count <= 2**64: no overflow
  }
  e.count = empty ? 0 : count;
  e.ordinary = e.count * elem <= std::numeric_limits<int64_t>::max() / 2;
  if (!e.ordinary || e.count == 0) return e;
  // Every extent is at most count (<= 2**62), so each reach in elements is below 2**125.
  int128 lo = 0, hi = 0, step = 1;
  for (int i = a.ndim - 1; i >= 0; --i) {
    const int128 stride = a.strides != nullptr ? a.strides[i] : step;
    const int128 reach = (static_cast<int128>(a.shape[i]) - 1) * stride;
    (reach < 0 ? lo : hi) += reach;
    lo = lo < -big ? -big : lo;
    hi = hi > big ? big : hi;
    step *= a.shape[i];
  }
  e.lo = static_cast<int128>(a.byte_offset) + lo * elem;
  e.hi = static_cast<int128>(a.byte_offset) + hi * elem + elem;
  return e;
}

// Whether the elements lie inside the fuzzer's buffer.
bool Inside(const Tensor& t, const Expect& e, const char* buffer) {
  const int128 base = static_cast<int128>(reinterpret_cast<uintptr_t>(t.dl.data));
  const int128 start = static_cast<int128>(reinterpret_cast<uintptr_t>(buffer));
  return e.count > 0 && base + e.lo >= start && base + e.hi <= start + kBufferBytes;
}

// Element `flat` (row-major order) of the tensor as its fields address it.
const char* Element(const Tensor& t, int64_t flat) {
  const DLArray& a = t.dl;
  const int64_t elem = static_cast<int64_t>(dlarray::DTypeBytes(a.dtype));
  int64_t offset = 0, step = 1;
  for (int i = a.ndim - 1; i >= 0; --i) {
    const int64_t index = flat % a.shape[i];
    flat /= a.shape[i];
    offset += index * (a.strides != nullptr ? a.strides[i] : step) * elem;
    step *= a.shape[i];
  }
  return static_cast<const char*>(a.data) + a.byte_offset + offset;
}

void CheckAccepted(const Tensor& t, const Expect& e, const dlarray::Array& a, const char* buffer) {
  if (!e.ordinary) return;  // another device (served by a plugin): nothing to compare
  const int128 base = static_cast<int128>(reinterpret_cast<uintptr_t>(t.dl.data));
  if (a.data_ptr() != static_cast<const char*>(t.dl.data) + t.dl.byte_offset && e.count > 0) {
    Abort("the array's first element is not data + byte_offset");
  }
  if (a.size() != e.count || a.shape() != std::vector<int64_t>(t.dl.shape, t.dl.shape + t.ndim)) {
    Abort("the array's shape or size differs from the tensor's");
  }
  if (e.count == 0) return;
  const int128 top = int128{1} << 64;
  if (e.lo < std::numeric_limits<int64_t>::min() || e.hi > std::numeric_limits<int64_t>::max() ||
      e.hi - e.lo > std::numeric_limits<int64_t>::max() || base + e.lo < 0 || base + e.hi > top) {
    Abort("accepted a tensor whose span overflows int64 or the address space");
  }
  if (static_cast<int128>(a.span_end()) - a.span_begin() != e.hi - e.lo) {
    Abort("the array's span differs from the tensor's");
  }
  if (!Inside(t, e, buffer) || e.count > kMaxCopied) return;
  auto copy = dlarray::Array::Empty(a.shape(), DLContext{kDLArrayCPU, 0}, a.dtype());
  const DLArray* in = a.dl();
  DLArray* out = copy->dl();
  dlarray::Invoke(dlarray::RequireOp("copy"), &in, 1, &out, 1, nullptr, 0);
  const size_t elem = dlarray::DTypeBytes(a.dtype());
  for (int64_t i = 0; i < static_cast<int64_t>(e.count); ++i) {
    if (std::memcmp(static_cast<const char*>(copy->data_ptr()) + i * elem, Element(t, i), elem)) {
      Abort("a copy of the array differs from the elements the tensor's fields address");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("DLARRAY_DISABLE_PLUGINS", "cuda", 1);  // host buffers only: no device memory
  setenv("OMP_NUM_THREADS", "1", 0);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static char* const buffer = [] {
    auto* b = static_cast<char*>(std::aligned_alloc(64, kBufferBytes));
    for (size_t i = 0; i < kBufferBytes; ++i) b[i] = static_cast<char>(i * 31 + 7);
    return b;
  }();
  Input in(data, size);
  Tensor t = Read(in, buffer);
  const uint32_t major = in.Take<uint32_t>();
  DLArrayManagedTensorVersioned versioned{{major, in.Take<uint32_t>()},
                                          nullptr,
                                          (t.mode & kNullDeleter) ? nullptr : &DeleteVersioned,
                                          (t.mode & kReadOnly) ? DLARRAY_DLPACK_FLAG_READ_ONLY : 0,
                                          t.dl};
  DLArrayManagedTensor legacy{t.dl, nullptr, (t.mode & kNullDeleter) ? nullptr : &DeleteLegacy};
  // The owner as from_dlpack makes it: the tensor's deleter, once, when the last view goes.
  std::shared_ptr<void> owner;
  const DLArray* tensor = nullptr;
  bool read_only = false;
  if (t.mode & kVersioned) {
    tensor = &versioned.dl_tensor;
    read_only = (versioned.flags & DLARRAY_DLPACK_FLAG_READ_ONLY) != 0;
    owner = std::shared_ptr<void>(&versioned, [](void* p) {
      auto* m = static_cast<DLArrayManagedTensorVersioned*>(p);
      if (m->deleter != nullptr) m->deleter(m);
    });
  } else {
    tensor = &legacy.dl_tensor;
    owner = std::shared_ptr<void>(&legacy, [](void* p) {
      auto* m = static_cast<DLArrayManagedTensor*>(p);
      if (m->deleter != nullptr) m->deleter(m);
    });
  }
  const int want_deletes = (t.mode & kNullDeleter) ? 0 : 1;
  deleted = 0;
  const Expect e = Compute(t);
  const bool must_accept = e.ordinary && Inside(t, e, buffer) &&
                           (reinterpret_cast<uintptr_t>(t.dl.data) + t.dl.byte_offset) %
                                   dlarray::DTypeBytes(t.dl.dtype) ==
                               0;
  try {
    std::shared_ptr<dlarray::Array> a =
        dlarray::ArrayFromDLPack(*tensor, std::move(owner), read_only);
    if (a->read_only() != read_only) Abort("the read-only flag was lost");
    CheckAccepted(t, e, *a, buffer);
  } catch (const dlarray::Error& err) {
    if (err.what()[0] == '\0') Abort("a refusal without a message");
    if (must_accept) {
      std::fprintf(stderr, "refused: %s\n", err.what());
      Abort("an ordinary tensor inside its buffer was refused");
    }
  }
  if (deleted != want_deletes) Abort("the deleter did not run exactly once");
  return 0;
}
