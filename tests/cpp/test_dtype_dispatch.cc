// dlarray/dtype_dispatch.h: the one dtype dispatch of the CPU and CUDA backends (and of plugins),
// with a plugin's own 16-bit float storage types plugged in.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "dlarray/dtype_dispatch.h"

namespace {

using dlarray::DTypeError;

// A plugin's own 16-bit storage: toy fixed-point formats (quarters and eighths, truncated), so a
// value shows which conversion it went through.
struct TestHalf {
  int16_t quarters;
};
struct TestBFloat16 {
  int16_t eighths;
};
struct TestFloat16 {
  using Half = TestHalf;
  using BFloat16 = TestBFloat16;
  static float ToFloat(TestHalf h) { return h.quarters / 4.f; }
  static float ToFloat(TestBFloat16 b) { return b.eighths / 8.f; }
  static TestHalf ToHalf(double v) { return {static_cast<int16_t>(v * 4)}; }
  static TestBFloat16 ToBFloat16(float v) { return {static_cast<int16_t>(v * 8)}; }
};

DLArrayDType DType(int code, int bits, int lanes = 1) {
  return DLArrayDType{static_cast<uint8_t>(code), static_cast<uint8_t>(bits),
                      static_cast<uint16_t>(lanes)};
}

bool Same(DLArrayDType a, DLArrayDType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

const std::vector<DLArrayDType> kEvery = {
    DType(kDLArrayFloat, 32),  DType(kDLArrayFloat, 64),   DType(kDLArrayFloat, 16),
    DType(kDLArrayBfloat, 16), DType(kDLArrayInt, 8),      DType(kDLArrayInt, 16),
    DType(kDLArrayInt, 32),    DType(kDLArrayInt, 64),     DType(kDLArrayUInt, 8),
    DType(kDLArrayUInt, 16),   DType(kDLArrayUInt, 32),    DType(kDLArrayUInt, 64),
    DType(kDLArrayBool, 8),    DType(kDLArrayComplex, 64), DType(kDLArrayComplex, 128)};

// How many of kEvery a set admits, by visiting each.
template <int kSet>
int CountAdmitted() {
  int n = 0;
  for (const DLArrayDType t : kEvery) n += dlarray::VisitDType<kSet, TestFloat16>(t, [](auto) {});
  return n;
}

}  // namespace

TEST_CASE("dtype dispatch: every storage dtype maps to a C++ type of its width, and back") {
  for (const DLArrayDType t : kEvery) {
    CAPTURE(dlarray::FormatDType(t));
    int calls = 0;
    const bool found = dlarray::VisitDType<dlarray::kStorageTypes, TestFloat16>(t, [&](auto tag) {
      using T = typename decltype(tag)::type;
      ++calls;
      CHECK(sizeof(T) * 8 == t.bits);
      CHECK(Same(dlarray::DTypeOf<T, TestFloat16>(), t));
    });
    CHECK(found);
    CHECK(calls == 1);
  }
  CHECK(dlarray::DTypeOf<TestHalf, TestFloat16>().bits == 16);
  CHECK(dlarray::DTypeOf<TestBFloat16, TestFloat16>().code == kDLArrayBfloat);
  CHECK(dlarray::DTypeOf<char*, TestFloat16>().lanes == 0);  // not an element type
}

TEST_CASE("dtype dispatch: a set admits its kinds only") {
  CHECK(CountAdmitted<dlarray::kFloatTypes>() == 4);
  CHECK(CountAdmitted<dlarray::kIntTypes>() == 5);
  CHECK(CountAdmitted<dlarray::kWideUInts>() == 3);
  CHECK(CountAdmitted<dlarray::kBoolType>() == 1);
  CHECK(CountAdmitted<dlarray::kFloatTypes | dlarray::kIntTypes>() == 9);
  CHECK(CountAdmitted<dlarray::kAllTypes>() == 13);  // every real dtype and bool
  CHECK(CountAdmitted<dlarray::kComplexTypes>() == 2);
  CHECK(CountAdmitted<dlarray::kStorageTypes>() == 15);
  // Vector lanes, unknown codes and widths are no element type.
  for (const DLArrayDType t : {DType(kDLArrayFloat, 32, 4), DType(kDLArrayFloat, 8),
                               DType(kDLArrayInt, 128), DType(3, 16), DType(kDLArrayBool, 1)}) {
    CHECK_FALSE(dlarray::VisitDType<dlarray::kAllTypes, TestFloat16>(t, [](auto) {}));
  }
}

TEST_CASE("dtype dispatch: a dtype outside the set raises a DTypeError naming op, device, dtype") {
  const auto dispatch = [](DLArrayDType t) {
    dlarray::DispatchDType<dlarray::kFloatTypes, TestFloat16>(t, "relu", "cpu", [](auto) {});
  };
  CHECK_NOTHROW(dispatch(DType(kDLArrayBfloat, 16)));
  CHECK_THROWS_WITH_AS(dispatch(DType(kDLArrayInt, 8)), "relu on cpu: no kernel for int8",
                       DTypeError);
  CHECK_THROWS_WITH_AS(dispatch(DType(kDLArrayBool, 8)), "relu on cpu: no kernel for bool",
                       DTypeError);
  CHECK_THROWS_WITH_AS(dispatch(DType(kDLArrayFloat, 32, 4)),
                       "relu on cpu: no kernel for float32x4", DTypeError);
}

TEST_CASE("dtype dispatch: compute types, loads and stores go through the plugin's 16-bit types") {
  static_assert(std::is_same_v<dlarray::ComputeType<TestHalf, TestFloat16>, float>);
  static_assert(std::is_same_v<dlarray::ComputeType<TestBFloat16, TestFloat16>, float>);
  static_assert(std::is_same_v<dlarray::ComputeType<double, TestFloat16>, double>);
  static_assert(std::is_same_v<dlarray::ComputeType<uint8_t, TestFloat16>, uint8_t>);
  static_assert(std::is_same_v<dlarray::ComputeType<bool, TestFloat16>, bool>);
  CHECK(dlarray::StoreAs<TestFloat16, TestHalf>(2.0).quarters == 8);
  CHECK(dlarray::StoreAs<TestFloat16, TestBFloat16>(2).eighths == 16);
  CHECK(dlarray::LoadAs<TestFloat16>(TestHalf{6}) == 1.5f);
  CHECK(dlarray::LoadAs<TestFloat16>(TestBFloat16{-3}) == -0.375f);
  CHECK(dlarray::LoadAs<TestFloat16>(int16_t{-7}) == -7);
  // A scalar attribute is rounded to the dtype: through the plugin's store and load.
  CHECK(dlarray::ScalarAs<TestFloat16, TestHalf>(1.1) == 1.f);
  CHECK(dlarray::ScalarAs<TestFloat16, TestBFloat16>(1.1) == 1.f);
  CHECK(dlarray::ScalarAs<TestFloat16, float>(0.1) == 0.1f);
  CHECK(dlarray::ScalarAs<TestFloat16, double>(0.1) == 0.1);
}

TEST_CASE("dtype dispatch: casts as NumPy's (saturating where NumPy is undefined)") {
  const double nan = std::nan("");
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(dlarray::StoreAs<TestFloat16, int8_t>(-3.9) == -3);  // truncated
  CHECK(dlarray::StoreAs<TestFloat16, int8_t>(1e9) == 127);
  CHECK(dlarray::StoreAs<TestFloat16, int8_t>(-1e9) == -128);
  CHECK(dlarray::StoreAs<TestFloat16, uint8_t>(-1.5) == 0);
  CHECK(dlarray::StoreAs<TestFloat16, int32_t>(nan) == 0);
  CHECK(dlarray::StoreAs<TestFloat16, int64_t>(inf) == std::numeric_limits<int64_t>::max());
  CHECK(dlarray::StoreAs<TestFloat16, int64_t>(-inf) == std::numeric_limits<int64_t>::min());
  CHECK(dlarray::StoreAs<TestFloat16, uint64_t>(inf) == std::numeric_limits<uint64_t>::max());
  CHECK(dlarray::StoreAs<TestFloat16, uint8_t>(300) == 44);  // integers wrap
  CHECK(dlarray::StoreAs<TestFloat16, int16_t>(int64_t{70000}) == 4464);
  CHECK(dlarray::StoreAs<TestFloat16, bool>(0.25) == true);
  CHECK(dlarray::StoreAs<TestFloat16, bool>(nan) == true);
  CHECK(dlarray::StoreAs<TestFloat16, bool>(-0.0) == false);
  CHECK(dlarray::StoreAs<TestFloat16, float>(0.1) == 0.1f);
}

TEST_CASE("dtype dispatch: integer arithmetic and scalars wrap as in NumPy") {
  CHECK(dlarray::AddOf<int8_t>(127, 1) == -128);
  CHECK(dlarray::AddOf<uint8_t>(250, 10) == 4);
  CHECK(dlarray::MulOf<int32_t>(65536, 65536) == 0);
  CHECK(dlarray::MulOf<int64_t>(std::numeric_limits<int64_t>::min(), -1) ==
        std::numeric_limits<int64_t>::min());
  CHECK(dlarray::AddOf(0.5, 0.25) == 0.75);
  CHECK(dlarray::MulOf(1.5f, 2.f) == 3.f);
  // x + (-5) on uint8 is x - 5; 300 on int8 is 44; 2.9 truncates; NaN is 0; 1e30 saturates to
  // int64 first.
  CHECK(dlarray::ScalarAs<TestFloat16, uint8_t>(-5.0) == 251);
  CHECK(dlarray::ScalarAs<TestFloat16, int8_t>(300.0) == 44);
  CHECK(dlarray::ScalarAs<TestFloat16, int32_t>(-2.9) == -2);
  CHECK(dlarray::ScalarAs<TestFloat16, int16_t>(std::nan("")) == 0);
  CHECK(dlarray::ScalarAs<TestFloat16, int64_t>(1e30) == std::numeric_limits<int64_t>::max());
  CHECK(dlarray::ScalarAs<TestFloat16, uint64_t>(-1.0) == std::numeric_limits<uint64_t>::max());
  CHECK(dlarray::ScalarAs<TestFloat16, bool>(0.5) == true);
}

TEST_CASE("dtype dispatch: IsFloat32") {
  CHECK(dlarray::IsFloat32(DType(kDLArrayFloat, 32)));
  CHECK_FALSE(dlarray::IsFloat32(DType(kDLArrayFloat, 32, 2)));
  CHECK_FALSE(dlarray::IsFloat32(DType(kDLArrayFloat, 64)));
  CHECK_FALSE(dlarray::IsFloat32(DType(kDLArrayInt, 32)));
}

TEST_CASE("dtype dispatch: complex values convert as NumPy casts them") {
  using C64 = dlarray::Complex<float>;
  using C128 = dlarray::Complex<double>;
  const auto c = dlarray::StoreAs<TestFloat16, C64>(2.5);  // real -> complex: imaginary 0
  CHECK(c.re == 2.5f);
  CHECK(c.im == 0.0f);
  const auto w = dlarray::StoreAs<TestFloat16, C128>(C64{1.5f, -3.0f});
  CHECK(w.re == 1.5);
  CHECK(w.im == -3.0);
  const auto n = dlarray::StoreAs<TestFloat16, C64>(C128{1e300, 1.0});  // rounds as a float
  CHECK(n.re == std::numeric_limits<float>::infinity());
  // complex -> real: the real part (NumPy's cast); bool: either part non-zero.
  CHECK(dlarray::StoreAs<TestFloat16, int8_t>(C64{-7.9f, 4.0f}) == -7);
  CHECK(dlarray::StoreAs<TestFloat16, bool>(C64{0.0f, 1.0f}));
  CHECK_FALSE(dlarray::StoreAs<TestFloat16, bool>(C128{0.0, -0.0}));
  CHECK(dlarray::StoreAs<TestFloat16, bool>(C64{1.0f, 0.0f}) == true);
  const auto s = dlarray::ScalarAs<TestFloat16, C128>(-4.0);
  CHECK(s.re == -4.0);
  CHECK(s.im == 0.0);
}

TEST_CASE("dtype dispatch: VisitElementSize gives a type of the element's size, 16 bytes too") {
  for (const DLArrayDType t : kEvery) {
    CAPTURE(dlarray::FormatDType(t));
    size_t bytes = 0;
    CHECK(dlarray::VisitElementSize(
        t, [&](auto tag) { bytes = sizeof(typename decltype(tag)::type); }));
    CHECK(bytes * 8 == t.bits);
  }
  CHECK_FALSE(dlarray::VisitElementSize(DType(kDLArrayInt, 24), [](auto) {}));
}
