// libFuzzer target: arbitrary sequences of C API calls (alloc, free, copy, set, ops by name and
// by entry point, synchronize) on arbitrary shapes, dtypes, contexts and handles: live, freed,
// null, and caller-made DLArrays with arbitrary fields. Caller-made arrays never lie about their
// memory in a way the runtime cannot see: a shape the runtime must accept is backed by a buffer
// that large; every other field (counts that overflow, zero or negative dimensions, unsupported
// dtypes, contexts out of range, strides, null data) must be refused before memory is touched.
//
// Every call must return 0 or -1, and -1 with a message; at the end, every live handle frees
// once and every freed handle is refused.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "dlarray/c_runtime_api.h"

namespace {

constexpr int64_t kMaxBytes = int64_t{1} << 20;  // caller buffers and valid allocations

[[noreturn]] void Abort(const char* what) {
  std::fprintf(stderr, "c_api_fuzzer: %s (last error: '%s')\n", what, DLGetLastError());
  std::abort();
}

void CheckReturn(int rc) {
  if (rc != 0 && rc != -1) Abort("a call returned neither 0 nor -1");
  if (rc == -1 && DLGetLastError()[0] == '\0') Abort("a failure without a message");
}

int64_t Dim(FuzzedDataProvider& in) {
  static const int64_t kDims[] = {1,
                                  2,
                                  3,
                                  5,
                                  8,
                                  17,
                                  16,
                                  0,
                                  -1,
                                  -7,
                                  int64_t{1} << 45,
                                  int64_t{1} << 62,
                                  std::numeric_limits<int64_t>::max(),
                                  std::numeric_limits<int64_t>::min()};
  return in.PickValueInArray(kDims);
}

DLArrayDType DType(FuzzedDataProvider& in) {
  if (in.ConsumeBool()) return DLArrayDType{kDLArrayFloat, 32, 1};
  static const uint8_t kBits[] = {0, 1, 8, 16, 24, 32, 64, 128, 255};
  static const uint16_t kLanes[] = {1, 1, 1, 0, 2, 4, 65535};
  return DLArrayDType{in.ConsumeIntegralInRange<uint8_t>(0, 4), in.PickValueInArray(kBits),
                      in.PickValueInArray(kLanes)};
}

DLContext Context(FuzzedDataProvider& in) {
  if (in.ConsumeBool()) return DLContext{kDLArrayCPU, 0};
  static const int32_t kTypes[] = {0, 1, 2, 3, 20, 31, 32, -1, std::numeric_limits<int32_t>::max()};
  static const int32_t kIds[] = {0, 1, 5, -1, std::numeric_limits<int32_t>::min()};
  return DLContext{in.PickValueInArray(kTypes), in.PickValueInArray(kIds)};
}

// The storage dtypes the runtime accepts (IsStorageDType in runtime/src/array.cc): a caller array
// of one of them must be backed by a buffer of its full size, since the runtime will use it.
bool Supported(DLArrayDType t) {
  if (t.lanes != 1) return false;
  if (t.code == kDLArrayFloat) return t.bits == 16 || t.bits == 32 || t.bits == 64;
  if (t.code == kDLArrayInt || t.code == kDLArrayUInt) {
    return t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
  }
  if (t.code == kDLArrayBfloat) return t.bits == 16;
  if (t.code == kDLArrayBool) return t.bits == 8;
  if (t.code == kDLArrayComplex) return t.bits == 64 || t.bits == 128;
  return false;
}

// A DLArray made by the caller, with a buffer as large as every shape the runtime may accept.
struct CallerArray {
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  std::unique_ptr<char[]> buffer;
  DLArray dl{};

  explicit CallerArray(FuzzedDataProvider& in) {
    const int ndim = in.ConsumeBool() ? in.ConsumeIntegralInRange<int>(0, 4)
                                      : in.PickValueInArray({-1, 65, 70, 5, 64});
    const int stored = std::max(0, std::min(ndim, 70));
    for (int i = 0; i < stored; ++i)
      shape.push_back(in.ConsumeBool() ? 1 + in.ConsumeIntegralInRange<int>(0, 9) : Dim(in));
    dl.dtype = DType(in);
    dl.ctx = Context(in);
    dl.ndim = ndim;
    dl.shape = (ndim > 0 && in.ConsumeIntegralInRange<int>(0, 15) != 0) ? shape.data() : nullptr;
    // Would the runtime accept this shape? Then it must be backed; shrink it until it fits.
    bool valid =
        ndim >= 0 && ndim <= 64 && (ndim == 0 || dl.shape != nullptr) && Supported(dl.dtype);
    int64_t count = 1;
    for (int i = 0; valid && i < ndim; ++i) {
      if (shape[i] < 1 || count > std::numeric_limits<int64_t>::max() / shape[i]) valid = false;
      if (valid) count *= shape[i];
    }
    const int64_t elem = valid ? (dl.dtype.bits / 8) : 1;
    if (valid && (count > kMaxBytes / elem)) {
      for (int i = 0; i < ndim; ++i) shape[i] = i < 4 ? std::min<int64_t>(shape[i], 4) : 1;
      count = 1;
      for (int i = 0; i < ndim; ++i) count *= shape[i];
    }
    dl.byte_offset = in.ConsumeBool() ? 0 : in.ConsumeIntegralInRange<uint64_t>(0, 64);
    const bool null_data = in.ConsumeIntegralInRange<int>(0, 15) == 0;
    if (ndim > 0 && ndim <= 64 && in.ConsumeIntegralInRange<int>(0, 3) == 0) {
      strides.assign(static_cast<size_t>(stored), 1);
      const bool compact = in.ConsumeBool();
      int64_t s = 1;
      for (int i = stored - 1; i >= 0; --i) {
        strides[i] = compact ? s : in.ConsumeIntegralInRange<int64_t>(-3, 3);
        if (shape[i] > 0 && s <= std::numeric_limits<int64_t>::max() / shape[i]) s *= shape[i];
      }
      dl.strides = strides.data();
    }
    // The elements a valid array addresses, from `lo` to `hi` relative to data + byte_offset: with
    // strides (which ops such as copy accept) that may be more than count, or before data.
    int64_t lo = 0, hi = count - 1;
    if (valid && dl.strides != nullptr) {
      hi = 0;
      for (int i = 0; i < ndim; ++i) {
        const int64_t reach = (shape[i] - 1) * strides[i];  // |stride| <= 3, shape[i] <= 2^20
        (reach < 0 ? lo : hi) += reach;
      }
    }
    const int64_t bytes =
        (valid ? (hi - lo + 1) * elem : 64) + static_cast<int64_t>(dl.byte_offset);
    buffer.reset(new char[static_cast<size_t>(bytes)]);
    std::memset(buffer.get(), 0x3f, static_cast<size_t>(bytes));
    dl.data = null_data ? nullptr : buffer.get() + (valid ? -lo * elem : 0);
  }
};

struct State {
  std::vector<DLArrayHandle> live, freed;
  std::vector<std::unique_ptr<CallerArray>> caller;

  DLArrayHandle Pick(FuzzedDataProvider& in) {
    switch (in.ConsumeIntegralInRange<int>(0, 7)) {
      case 0:
        return nullptr;
      case 1:
        if (!freed.empty()) return freed[in.ConsumeIntegralInRange<size_t>(0, freed.size() - 1)];
        break;
      case 2:
      case 3:
        if (!caller.empty()) {
          return &caller[in.ConsumeIntegralInRange<size_t>(0, caller.size() - 1)]->dl;
        }
        break;
      default:
        break;
    }
    if (!live.empty()) return live[in.ConsumeIntegralInRange<size_t>(0, live.size() - 1)];
    return nullptr;
  }
};

double Attr(FuzzedDataProvider& in) {
  static const double kValues[] = {0.0,
                                   1.0,
                                   -1.0,
                                   0.5,
                                   2.0,
                                   1e300,
                                   -3.5e38,
                                   3.4028234663852886e38,
                                   std::numeric_limits<double>::quiet_NaN(),
                                   std::numeric_limits<double>::infinity(),
                                   -std::numeric_limits<double>::infinity(),
                                   std::numeric_limits<double>::denorm_min()};
  return in.ConsumeBool() ? in.PickValueInArray(kValues) : in.ConsumeFloatingPoint<double>();
}

const char* OpName(FuzzedDataProvider& in) {
  static const char* kOps[] = {"array_set",
                               "broadcast_to",
                               "reduce_sum_axis_zero",
                               "matrix_elementwise_add",
                               "matrix_elementwise_add_by_const",
                               "matrix_elementwise_multiply",
                               "matrix_elementwise_multiply_by_const",
                               "matrix_multiply",
                               "relu",
                               "relu_gradient",
                               "softmax",
                               "softmax_cross_entropy",
                               "copy",
                               "no_such_op",
                               ""};
  return in.PickValueInArray(kOps);
}

void Step(FuzzedDataProvider& in, State& st) {
  switch (in.ConsumeIntegralInRange<int>(0, 9)) {
    case 0: {  // alloc
      const int ndim = in.ConsumeBool() ? in.ConsumeIntegralInRange<int>(0, 3)
                                        : in.PickValueInArray({-1, 65, 4});
      std::vector<int64_t> shape(static_cast<size_t>(std::max(0, std::min(ndim, 65))));
      for (int64_t& d : shape)
        d = in.ConsumeBool() ? 1 + in.ConsumeIntegralInRange<int>(0, 40) : Dim(in);
      DLArrayHandle h = nullptr;
      const int rc = DLArrayAllocEx(in.ConsumeIntegralInRange<int>(0, 15) ? shape.data() : nullptr,
                                    ndim, DType(in), Context(in), &h);
      CheckReturn(rc);
      if (rc == 0) {
        if (h == nullptr) Abort("DLArrayAlloc succeeded without a handle");
        st.live.push_back(h);
      }
      break;
    }
    case 1: {  // free
      if (!st.live.empty() && in.ConsumeBool()) {
        const size_t i = in.ConsumeIntegralInRange<size_t>(0, st.live.size() - 1);
        DLArrayHandle h = st.live[i];
        if (DLArrayFree(h) != 0) Abort("freeing a live handle failed");
        st.live.erase(st.live.begin() + static_cast<std::ptrdiff_t>(i));
        st.freed.push_back(h);
      } else {
        DLArrayHandle h = st.Pick(in);
        const bool live = std::find(st.live.begin(), st.live.end(), h) != st.live.end();
        const int rc = DLArrayFree(h);
        CheckReturn(rc);
        if (!live && rc == 0) Abort("freed something that is not a live handle");
        if (live && rc != 0) Abort("freeing a live handle failed");
        if (live) {
          st.live.erase(std::find(st.live.begin(), st.live.end(), h));
          st.freed.push_back(h);
        }
      }
      break;
    }
    case 2:
      if (st.caller.size() < 16) st.caller.push_back(std::make_unique<CallerArray>(in));
      break;
    case 3:
      CheckReturn(DLArrayCopyFromTo(st.Pick(in), st.Pick(in), nullptr));
      break;
    case 4: {  // any op by name, with operand lists exactly as long as their counts
      const char* op = OpName(in);
      const int nin = in.ConsumeIntegralInRange<int>(0, 3);
      const int nout = in.ConsumeIntegralInRange<int>(0, 2);
      const int nattr = in.ConsumeIntegralInRange<int>(0, 3);
      std::vector<DLArrayHandle> ins(static_cast<size_t>(nin)), outs(static_cast<size_t>(nout));
      std::vector<double> attrs(static_cast<size_t>(nattr));
      for (auto& h : ins) h = st.Pick(in);
      for (auto& h : outs) h = st.Pick(in);
      for (double& a : attrs) a = Attr(in);
      CheckReturn(DLArrayInvoke(op, ins.data(), nin, outs.data(), nout, attrs.data(), nattr));
      break;
    }
    case 5: {  // the per-op entry points
      DLArrayHandle a = st.Pick(in), b = st.Pick(in), c = st.Pick(in);
      const float v = static_cast<float>(Attr(in));
      switch (in.ConsumeIntegralInRange<int>(0, 11)) {
        case 0:
          CheckReturn(DLArraySet(a, v));
          break;
        case 1:
          CheckReturn(DLArrayBroadcastTo(a, b));
          break;
        case 2:
          CheckReturn(DLArrayReduceSumAxisZero(a, b));
          break;
        case 3:
          CheckReturn(DLArrayMatrixElementwiseAdd(a, b, c));
          break;
        case 4:
          CheckReturn(DLArrayMatrixElementwiseAddByConst(a, v, b));
          break;
        case 5:
          CheckReturn(DLArrayMatrixElementwiseMultiply(a, b, c));
          break;
        case 6:
          CheckReturn(DLGpuMatrixMultiplyByConst(a, v, b));
          break;
        case 7:
          CheckReturn(
              DLArrayMatrixMultiply(a, in.ConsumeIntegral<int>(), b, in.ConsumeIntegral<int>(), c));
          break;
        case 8:
          CheckReturn(DLArrayRelu(a, b));
          break;
        case 9:
          CheckReturn(DLArrayReluGradient(a, b, c));
          break;
        case 10:
          CheckReturn(DLArraySoftmax(a, b));
          break;
        default:
          CheckReturn(DLArraySoftmaxCrossEntropy(a, b, c));
          break;
      }
      break;
    }
    case 6: {
      int count = -1;
      CheckReturn(DLArrayDeviceCount(in.ConsumeIntegral<int>(), &count));
      CheckReturn(DLArraySynchronize(Context(in)));
      break;
    }
    case 7:
      CheckReturn(DLArrayDeviceCount(kDLArrayCPU, nullptr));
      CheckReturn(DLArrayAlloc(nullptr, 1, DLContext{kDLArrayCPU, 0}, nullptr));
      break;
    default: {  // a pointer inside a live handle is not a handle
      if (st.live.empty()) break;
      char* inner = reinterpret_cast<char*>(st.live[0]) + in.ConsumeIntegralInRange<int>(1, 47);
      if (DLArrayFree(reinterpret_cast<DLArrayHandle>(inner)) != -1) {
        Abort("a pointer inside a handle was freed");
      }
      break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("DLARRAY_DISABLE_PLUGINS", "cuda", 1);  // host buffers only: no device memory
  setenv("OMP_NUM_THREADS", "2", 0);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  State st;
  for (int steps = 0; steps < 48 && in.remaining_bytes() > 0; ++steps) Step(in, st);
  for (DLArrayHandle h : st.live) {
    if (DLArrayFree(h) != 0) Abort("a live handle did not free at the end");
  }
  for (DLArrayHandle h : st.freed) {
    if (DLArrayFree(h) != -1) Abort("a freed handle was freed again");
  }
  return 0;
}
