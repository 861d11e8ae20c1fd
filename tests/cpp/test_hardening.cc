// Caller-made arrays through the C++ API: counts that overflow, unsupported dtypes, contexts out
// of range, 0-d copies; Exp of NaN (undefined behaviour before issue 14, caught by UBSan).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "dlarray/errors.h"
#include "dlarray/runtime.h"
#include "env_list.h"
#include "fast_exp.h"
#include "simd.h"
#include "test_helpers.h"

using dltest::Contains;
using dltest::Cpu;
using dltest::TryInvoke;

namespace {

struct HostArray {
  std::vector<float> data;
  std::vector<int64_t> shape;
  DLArray dl{};
  HostArray(std::vector<int64_t> s, size_t n, DLArrayDType dtype = dlarray::kFloat32,
            DLContext ctx = Cpu())
      : data(n, 1.0f), shape(std::move(s)) {
    dl = DLArray{data.data(), ctx, static_cast<int32_t>(shape.size()), dtype, shape.data(),
                 nullptr,     0};
  }
};

std::string TryCopy(const DLArray* from, DLArray* to) {
  try {
    dlarray::CopyFromTo(from, to);
  } catch (const dlarray::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("an element count that overflows int64 is an error, not an empty op") {
  HostArray big({int64_t{1} << 62, 4}, 16);
  HostArray out({int64_t{1} << 62, 4}, 16);
  CHECK(Contains(TryInvoke("relu", {&big.dl}, {&out.dl}), "overflow"));
  CHECK(Contains(TryCopy(&big.dl, &out.dl), "overflow"));
  HostArray product({int64_t{1} << 32, int64_t{1} << 32}, 16);
  CHECK(Contains(TryCopy(&product.dl, &product.dl), "overflow"));
  CHECK(dlarray::NumElements(&product.dl) == std::numeric_limits<int64_t>::max());
}

TEST_CASE("copies refuse dtypes the runtime does not support") {
  for (DLArrayDType t : {DLArrayDType{kDLArrayFloat, 0, 1}, DLArrayDType{kDLArrayFloat, 24, 1},
                         DLArrayDType{kDLArrayFloat, 32, 2}, DLArrayDType{kDLArrayFloat, 32, 0},
                         DLArrayDType{9, 32, 1}}) {
    HostArray a({4}, 16, t), b({4}, 16, t);
    b.data.assign(16, 5.0f);
    const std::string msg = TryCopy(&a.dl, &b.dl);
    CHECK(Contains(msg, "dtype"));
    CHECK(b.data[0] == 5.0f);
  }
}

TEST_CASE("copies validate both contexts") {
  HostArray a({4}, 4), b({4}, 4, dlarray::kFloat32, DLContext{kDLArrayCPU, 5});
  CHECK(Contains(TryCopy(&a.dl, &b.dl), "cpu(5)"));
  CHECK(Contains(TryCopy(&b.dl, &a.dl), "cpu(5)"));
  HostArray c({4}, 4, dlarray::kFloat32, DLContext{0, 0});
  CHECK(!TryCopy(&a.dl, &c.dl).empty());
}

TEST_CASE("zero-dimensional copies") {
  HostArray a({}, 1), b({}, 1);
  a.data[0] = 3.0f;
  CHECK(TryCopy(&a.dl, &b.dl).empty());
  CHECK(b.data[0] == 3.0f);
}

TEST_CASE("Exp of NaN is NaN, for scalars and vectors of either sign") {
  namespace cpu = dlarray::cpu;
  const float qnan = std::numeric_limits<float>::quiet_NaN();
  for (float x : {qnan, -qnan}) {
    CHECK(std::isnan(cpu::Exp(x)));
    cpu::VecF v = cpu::Splat<cpu::VecF>(x);
    v = cpu::Exp(v);
    for (int i = 0; i < cpu::kVecWidth; ++i) CHECK(std::isnan(v[i]));
  }
}

TEST_CASE("environment lists: entries are trimmed, empty ones dropped") {
  using dlarray::SplitEnvList;
  CHECK(SplitEnvList(" cpu", ',') == std::vector<std::string>{"cpu"});
  CHECK(SplitEnvList("cuda , cpu\t,,", ',') == std::vector<std::string>{"cuda", "cpu"});
  CHECK(SplitEnvList("  ", ',').empty());
  CHECK(SplitEnvList("", ',').empty());
  CHECK(SplitEnvList("/a b/:/c", ':') == std::vector<std::string>{"/a b/", "/c"});
}
