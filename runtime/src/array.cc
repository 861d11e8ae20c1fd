// Array: shape, strides and byte offset over reference-counted storage (own allocations, views,
// and memory of other libraries).
#include <algorithm>
#include <atomic>
#include <limits>
#include <utility>

#include "block_cache.h"
#include "dlarray/dlpack.h"
#include "dlarray/runtime.h"
#include "runtime_state.h"

namespace dlarray {

bool IsStorageDType(DLArrayDType t) {
  if (t.lanes != 1) return false;
  switch (t.code) {
    case kDLArrayInt:
    case kDLArrayUInt:
      return t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
    case kDLArrayFloat:
      return t.bits == 16 || t.bits == 32 || t.bits == 64;
    case kDLArrayBfloat:
      return t.bits == 16;
    case kDLArrayComplex:
      return t.bits == 64 || t.bits == 128;
    case kDLArrayBool:
      return t.bits == 8;
    default:
      return false;
  }
}

bool IsCompact(const DLArray* a) {
  if (a->strides == nullptr) return true;
  int64_t expect = 1;
  for (int i = a->ndim - 1; i >= 0; --i) {
    if (a->shape[i] == 0) return true;  // no element: any layout is compact
    if (a->shape[i] != 1 && a->strides[i] != expect) return false;
    if (__builtin_mul_overflow(expect, a->shape[i], &expect)) expect = INT64_MAX;
  }
  return true;
}

namespace {

void CheckDType(DLArrayDType dtype) {
  if (!IsStorageDType(dtype)) {
    throw DTypeError(
        "unsupported dtype " + DTypeToString(dtype) +
        " (supported: bool, int8-64, uint8-64, float16/32/64, bfloat16, complex64/128; one "
        "lane)");
  }
}

// Element count of shape; throws ShapeError on negative extents, rank > 64 or overflow of the
// byte size.
int64_t CountElements(const std::vector<int64_t>& shape, DLArrayDType dtype, DLContext ctx,
                      const DLArray* for_message) {
  if (shape.size() > DLARRAY_MAX_NDIM) {
    throw ShapeError("shape " + ShapeToString(for_message) + " has more than 64 dimensions");
  }
  const int64_t max_bytes = std::numeric_limits<int64_t>::max() / 2;
  const int64_t elem = static_cast<int64_t>(DTypeBytes(dtype));
  int64_t size = 1, bytes = 0;
  bool too_large = false;
  for (int64_t d : shape) {  // multiplications that check overflow: a division costs 40 cycles
    if (d < 0) {
      throw ShapeError("shape " + ShapeToString(for_message) + ": dimensions must be >= 0");
    }
    if (d == 0 || too_large) continue;
    int64_t next = 0;
    too_large = __builtin_mul_overflow(size, d, &next) ||
                __builtin_mul_overflow(next, elem, &bytes) || bytes > max_bytes;
    if (!too_large) size = next;
  }
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  if (too_large) {
    throw OutOfMemoryError("shape " + ShapeToString(for_message) + " is too large to allocate on " +
                           ContextToString(ctx));
  }
  return size;
}

std::string IntsToString(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i == 0 ? "" : ", ") + std::to_string(v[i]);
  return s + "]";
}

// The bytes [*lo, *hi) from the first element that the elements of shape and strides (in
// elements) reach; false when a product or sum overflows int64 (hi - lo included).
bool ElementSpan(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
                 int64_t elem, int64_t* lo, int64_t* hi) {
  int64_t low = 0, high = elem, extent = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t step = 0;
    if (__builtin_mul_overflow(shape[d] - 1, strides[d], &step) ||
        __builtin_mul_overflow(step, elem, &step) ||
        __builtin_add_overflow(step < 0 ? low : high, step, step < 0 ? &low : &high)) {
      return false;
    }
  }
  *lo = low;
  *hi = high;
  return !__builtin_sub_overflow(high, low, &extent);
}

// Where an array over foreign memory starts and which bytes it spans (from its data pointer).
struct Span {
  void* data;
  uint64_t byte_offset;
  uint64_t begin, end;
};

// Checks a non-empty array's strides and byte_offset against int64 and the address space: the
// audit's DLPack tensors with strides 2**61 overflowed here and asnumpy read anywhere.
Span ForeignSpan(const DLArray* a, const std::vector<int64_t>& strides, void* data,
                 uint64_t byte_offset) {
  const DLContext ctx = a->ctx;
  const std::vector<int64_t> shape(a->shape, a->shape + a->ndim);
  const int64_t elem = static_cast<int64_t>(DTypeBytes(a->dtype));
  const int64_t offset = static_cast<int64_t>(byte_offset);  // <= INT64_MAX: checked before
  const bool pointers = RuntimeState::Get().DeviceFor(ctx)->pointer_arithmetic();
  const std::string layout = "strides " + IntsToString(strides) + " of shape " + ShapeToString(a) +
                             " with byte_offset " + std::to_string(byte_offset);
  int64_t lo = 0, hi = 0, begin = 0, end = 0;
  if (!ElementSpan(shape, strides, elem, &lo, &hi) || __builtin_add_overflow(offset, lo, &begin) ||
      __builtin_add_overflow(offset, hi, &end)) {
    throw Error(ErrorKind::kValue, layout + " reach more bytes than an array can address (2**63)");
  }
  // On devices with pointer arithmetic (host, CUDA) data is an address: the elements must not
  // wrap around the address space, and kernels read whole elements, so the first must be aligned
  // (as the C API requires).
  const uintptr_t base = reinterpret_cast<uintptr_t>(data);
  if (pointers && (base + byte_offset) % static_cast<uint64_t>(elem) != 0) {
    throw Error(ErrorKind::kValue, "data + byte_offset (byte_offset " +
                                       std::to_string(byte_offset) + ") is not aligned to its " +
                                       std::to_string(elem) +
                                       "-byte elements (copy it to aligned memory first)");
  }
  if (pointers && (base > std::numeric_limits<uintptr_t>::max() - static_cast<uintptr_t>(end) ||
                   (begin < 0 && base < static_cast<uintptr_t>(-begin)))) {
    throw Error(ErrorKind::kValue, layout + " reach past the ends of the address space");
  }
  if (begin >= 0) {
    return Span{data, byte_offset, static_cast<uint64_t>(begin), static_cast<uint64_t>(end)};
  }
  // Negative strides reach before data: start the array at the lowest element instead (where
  // pointers may be offset; other devices' handles cannot move).
  if (!pointers) {
    throw ShapeError("an array of shape " + ShapeToString(a) + " on " + ContextToString(ctx) +
                     " whose negative strides reach before its data");
  }
  const uint64_t shift = static_cast<uint64_t>(-begin);
  return Span{static_cast<char*>(data) - shift, byte_offset + shift, 0,
              static_cast<uint64_t>(hi - lo)};
}

}  // namespace

std::shared_ptr<Array> Array::New() {
  // The array and its reference counts in one block, from the thread's cache of such blocks:
  // make_shared cannot call the private constructor, a class local to a member can. Its
  // constructor is user-provided, so the array is not zeroed first (a `rep stos` that was a
  // third of Empty).
  struct Shared : Array {
    Shared() {}
  };
  return std::allocate_shared<Shared>(CachedAllocator<Shared>());
}

void Array::SetLayout(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  shape_ = shape;
  if (strides.empty()) {
    strides_.resize(shape_.size());
  } else {
    strides_ = strides;
  }
  FinishLayout(strides.empty());
}

void Array::FinishLayout(bool compact) {
  dl_.ndim = static_cast<int32_t>(shape_.size());
  dl_.shape = shape_.data();
  dl_.strides = strides_.data();
  if (!compact && !IsCompact(&dl_)) return;
  // A compact array keeps the canonical strides and a null pointer: kernels and consumers see a
  // plain compact array.
  int64_t step = 1;
  for (int i = dl_.ndim - 1; i >= 0; --i) {
    strides_[i] = step;
    // Saturates: a shape this large is refused by the size check that follows (Empty).
    if (__builtin_mul_overflow(step, std::max<int64_t>(shape_[i], 1), &step)) step = INT64_MAX;
  }
  dl_.strides = nullptr;
}

std::shared_ptr<Array> Array::Empty(const std::vector<int64_t>& shape, DLContext ctx,
                                    DLArrayDType dtype) {
  CheckDType(dtype);
  std::shared_ptr<Array> a = New();
  a->dl_.dtype = dtype;
  a->dl_.ctx = ctx;
  a->SetLayout(shape, {});
  const int64_t size = CountElements(shape, dtype, ctx, a->dl());
  a->size_ = size;
  a->nbytes_ = static_cast<size_t>(size) * DTypeBytes(dtype);
  PluginDevice* device = RuntimeState::Get().DeviceFor(ctx);
  if (a->nbytes_ == 0) return a;  // no memory, no kernel will ever touch it
  void* ptr = device->allocate(ctx.device_id, a->nbytes_);
  const size_t nbytes = a->nbytes_;
  const int id = ctx.device_id;
  a->storage_ =
      std::shared_ptr<void>(ptr, [device, id, nbytes](void* p) { device->free(id, p, nbytes); });
  a->dl_.data = ptr;
  a->span_end_ = nbytes;
  return a;
}

std::shared_ptr<Array> Array::FromMemory(void* data, uint64_t byte_offset, DLContext ctx,
                                         DLArrayDType dtype, const std::vector<int64_t>& shape,
                                         const std::vector<int64_t>& strides,
                                         std::shared_ptr<void> owner, bool read_only) {
  CheckDType(dtype);
  std::shared_ptr<Array> a = New();
  a->dl_.dtype = dtype;
  a->dl_.ctx = ctx;
  std::vector<int64_t> steps = strides.size() == shape.size() ? strides : std::vector<int64_t>{};
  // An extent of 1 is never stepped, so producers may give it any stride (DLPack does); kernels
  // that scale strides to bytes would overflow on a huge one (found by dlpack_import_fuzzer).
  for (size_t d = 0; d < steps.size(); ++d) steps[d] = shape[d] == 1 ? 0 : steps[d];
  a->SetLayout(shape, steps);
  if (!strides.empty() && strides.size() != shape.size()) {
    throw ShapeError("an array of shape " + ShapeToString(a->dl()) + " needs " +
                     std::to_string(shape.size()) + " strides, got " +
                     std::to_string(strides.size()));
  }
  const int64_t size = CountElements(shape, dtype, ctx, a->dl());
  if (data == nullptr && size != 0) {
    throw Error(ErrorKind::kValue, "an array of shape " + ShapeToString(a->dl()) +
                                       " over a null pointer (only zero-size arrays may have one)");
  }
  // Spans are signed byte counts from data: an offset past INT64_MAX would turn negative there.
  if (byte_offset > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    throw Error(ErrorKind::kValue, "byte_offset " + std::to_string(byte_offset) +
                                       " is larger than an array can address (2**63 - 1)");
  }
  RuntimeState::Get().DeviceFor(ctx);  // validates ctx
  a->size_ = size;
  a->nbytes_ = static_cast<size_t>(size) * DTypeBytes(dtype);
  a->dl_.data = data;
  a->dl_.byte_offset = byte_offset;
  a->read_only_ = read_only;
  a->storage_ = std::move(owner);
  if (size > 0) {
    const Span span = ForeignSpan(a->dl(), a->strides_, data, byte_offset);
    a->dl_.data = span.data;
    a->dl_.byte_offset = span.byte_offset;
    a->span_begin_ = span.begin;
    a->span_end_ = span.end;
  }
  return a;
}

DLContext ContextFromDLPack(DLContext device) {
  if (device.device_type == kDLArrayPackCUDAHost) return DLContext{kDLArrayCPU, 0};
  if (device.device_type == kDLArrayPackCUDAManaged) {
    return DLContext{kDLArrayCUDA, device.device_id};
  }
  return device;
}

std::shared_ptr<Array> ArrayFromDLPack(const DLArray& t, std::shared_ptr<void> owner,
                                       bool read_only) {
  if (t.ndim < 0 || t.ndim > DLARRAY_MAX_NDIM || (t.ndim > 0 && t.shape == nullptr)) {
    throw ShapeError("ndim " + std::to_string(t.ndim) +
                     (t.ndim > 0 && t.shape == nullptr ? " without a shape" : "") +
                     " (0 to 64 dimensions are supported)");
  }
  const std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
  std::vector<int64_t> strides;
  if (t.strides != nullptr) strides.assign(t.strides, t.strides + t.ndim);
  return Array::FromMemory(t.data, t.byte_offset, ContextFromDLPack(t.ctx), t.dtype, shape, strides,
                           std::move(owner), read_only);
}

std::shared_ptr<Array> Array::View(const std::vector<int64_t>& shape,
                                   const std::vector<int64_t>& strides,
                                   uint64_t byte_offset) const {
  // The new shape as a DLArray for the messages (the view's own layout is set once, valid).
  DLArray described{};
  described.ndim = static_cast<int32_t>(shape.size());
  described.shape = const_cast<int64_t*>(shape.data());
  if (strides.size() != shape.size()) {
    throw ShapeError("a view of shape " + ShapeToString(&described) + " needs " +
                     std::to_string(shape.size()) + " strides, got " +
                     std::to_string(strides.size()));
  }
  const int64_t size = CountElements(shape, dl_.dtype, dl_.ctx, &described);
  const int64_t elem = static_cast<int64_t>(DTypeBytes(dl_.dtype));
  if (size > 0) {
    int64_t lo = 0, hi = 0;
    const bool fits = byte_offset <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) &&
                      ElementSpan(shape, strides, elem, &lo, &hi) &&
                      !__builtin_add_overflow(static_cast<int64_t>(byte_offset), lo, &lo) &&
                      !__builtin_add_overflow(static_cast<int64_t>(byte_offset), hi, &hi);
    if (!fits || lo < static_cast<int64_t>(span_begin_) || hi > static_cast<int64_t>(span_end_)) {
      throw Error(ErrorKind::kValue, "a view of shape " + ShapeToString(&described) +
                                         " would reach outside the memory of its array");
    }
  }
  std::shared_ptr<Array> v = New();
  v->SetLayout(shape, strides);
  v->ShareMemory(*this, size, size > 0 ? byte_offset : 0);
  return v;
}

std::shared_ptr<Array> Array::Subarray(const int64_t* indices, int count,
                                       std::shared_ptr<Array> reuse, const int64_t* slice) const {
  const int ndim = dl_.ndim;
  if (count < 0 || count > ndim - (slice != nullptr ? 1 : 0)) {
    throw ShapeError("a sub-array of " + std::to_string(count) + " indices" +
                     (slice != nullptr ? " and a slice" : "") + " of an array of shape " +
                     ShapeToString(&dl_));
  }
  int64_t offset = 0;  // in elements
  for (int d = 0; d < count; ++d) {
    if (indices[d] < 0 || indices[d] >= shape_[d]) {
      throw Error(ErrorKind::kValue, "index " + std::to_string(indices[d]) +
                                         " is out of range for axis " + std::to_string(d) +
                                         " of shape " + ShapeToString(&dl_));
    }
    offset += indices[d] * strides_[d];
  }
  if (slice != nullptr) {  // start, len, step of axis `count`: its elements in range
    const int64_t start = slice[0], len = slice[1], step = slice[2], extent = shape_[count];
    const int64_t last = start + (len - 1) * step;
    if (len < 0 || step == 0 ||
        (len > 0 && (start < 0 || start >= extent || last < 0 || last >= extent))) {
      throw Error(ErrorKind::kValue, "slice (start " + std::to_string(start) + ", length " +
                                         std::to_string(len) + ", step " + std::to_string(step) +
                                         ") is out of range for axis " + std::to_string(count) +
                                         " of shape " + ShapeToString(&dl_));
    }
    if (len > 0) offset += start * strides_[count];
  }
  // The elements are some of this array's: no extent, overflow or span to check. A recycled
  // array (only its caller holds it) is overwritten field by field, its vectors' capacity kept.
  std::shared_ptr<Array> v = reuse != nullptr && reuse.use_count() == 1 ? std::move(reuse) : New();
  int64_t size = 1;
  if (slice != nullptr) {  // the sliced axis's extent and stride change: compact or not, told
    v->shape_.assign(shape_.begin() + count, shape_.end());
    v->strides_.assign(strides_.begin() + count, strides_.end());
    v->shape_[0] = slice[1];
    v->strides_[0] *= slice[2];
    v->FinishLayout(false);
  } else if (is_compact()) {  // the trailing strides of compact strides are the compact ones
    if (count < ndim || !v->shape_.empty()) {  // (a new 0-d view's stay empty)
      v->shape_.assign(shape_.begin() + count, shape_.end());
      v->strides_.assign(strides_.begin() + count, strides_.end());
    }
    v->dl_.ndim = ndim - count;
    v->dl_.shape = v->shape_.data();
    v->dl_.strides = nullptr;
  } else {
    v->SetLayout({shape_.begin() + count, shape_.end()},
                 {strides_.begin() + count, strides_.end()});
  }
  for (int64_t d : v->shape_) size *= d;
  const int64_t elem = static_cast<int64_t>(DTypeBytes(dl_.dtype));
  v->ShareMemory(
      *this, size,
      size > 0 ? static_cast<uint64_t>(static_cast<int64_t>(dl_.byte_offset) + offset * elem) : 0);
  return v;
}

void Array::Recycle(std::shared_ptr<Array>* a) {
  if (*a == nullptr || a->use_count() != 1) {
    a->reset();
    return;
  }
  // use_count's load is relaxed: order this thread's writes after the last other holder's
  // reads (its release of the count), as the destructor's path does.
  std::atomic_thread_fence(std::memory_order_acquire);
  Array& v = **a;
  v.storage_.reset();  // the memory goes now, with its last array
  v.dl_.data = nullptr;
  v.size_ = 0;
  v.nbytes_ = 0;
}

void Array::ShareMemory(const Array& of, int64_t size, uint64_t byte_offset) {
  dl_.dtype = of.dl_.dtype;
  dl_.ctx = of.dl_.ctx;
  size_ = size;
  nbytes_ = static_cast<size_t>(size) * DTypeBytes(of.dl_.dtype);
  dl_.data = size > 0 ? of.dl_.data : nullptr;  // a view without elements holds no memory
  dl_.byte_offset = byte_offset;
  read_only_ = of.read_only_;
  storage_ = of.storage_;
  span_begin_ = of.span_begin_;
  span_end_ = of.span_end_;
}

Array::~Array() = default;

}  // namespace dlarray
