// The core's views, zero-size arrays, dtype rules and device strings (issue 10).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "dlarray/errors.h"
#include "dlarray/runtime.h"
#include "test_helpers.h"

using dltest::Contains;
using dltest::Cpu;
using dltest::Make;
using dltest::Read;

namespace {

void Run(const char* op, std::vector<const DLArray*> in, std::vector<DLArray*> out,
         std::vector<double> attrs = {}) {
  dlarray::Invoke(dlarray::RequireOp(op), in.data(), static_cast<int>(in.size()), out.data(),
                  static_cast<int>(out.size()), attrs.data(), static_cast<int>(attrs.size()));
}

std::string ErrorOf(const char* op, std::vector<const DLArray*> in, std::vector<DLArray*> out,
                    std::vector<double> attrs = {}) {
  try {
    Run(op, in, out, attrs);
  } catch (const dlarray::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("views share storage and check their reach") {
  auto a = Make({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  auto col = a->View({3}, {4}, 2 * sizeof(float));  // a[:, 2]
  CHECK(!col->is_compact());
  CHECK((col->storage() == a->storage()));
  CHECK(col->size() == 3);
  auto out = dlarray::Array::Empty({3}, Cpu());
  Run("copy", {col->dl()}, {out->dl()});
  CHECK(Read(*out) == std::vector<float>{2, 6, 10});
  CHECK_THROWS_AS(a->View({3}, {4}, 3 * sizeof(float) + 4), dlarray::Error);  // past the end
  auto row = a->View({4}, {1}, 4 * sizeof(float));                            // a[1]: compact
  CHECK(row->is_compact());
  CHECK(row->dl()->strides == nullptr);
}

TEST_CASE("Subarray: x[i, j] as View gives it, also of strided views and zero-size axes") {
  auto a = Make({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  const int64_t at[2] = {2, 1};
  auto item = a->Subarray(at, 2);  // a[2, 1]: 0-d
  CHECK(item->shape().empty());
  CHECK(item->size() == 1);
  CHECK(item->nbytes() == sizeof(float));
  CHECK(*static_cast<const float*>(item->data_ptr()) == 9);
  CHECK((item->storage() == a->storage()));
  auto row = a->Subarray(at, 1);  // a[2]
  CHECK(row->shape() == std::vector<int64_t>{4});
  CHECK(row->is_compact());
  CHECK(Read(*row) == std::vector<float>{8, 9, 10, 11});
  auto t = a->View({4, 3}, {1, 4}, 0);  // a.T
  auto col = t->Subarray(at, 1);        // a.T[2] == a[:, 2]
  CHECK(!col->is_compact());
  CHECK(col->strides() == std::vector<int64_t>{4});
  auto out = dlarray::Array::Empty({3}, Cpu());
  Run("copy", {col->dl()}, {out->dl()});
  CHECK(Read(*out) == std::vector<float>{2, 6, 10});
  auto column = a->View({3, 1}, {4, 1}, 0);  // a[:, :1]: its rows are compact
  CHECK(column->Subarray(at, 1)->is_compact());
  const int64_t past[2] = {3, 0}, negative[1] = {-1};
  CHECK_THROWS_AS(a->Subarray(past, 1), dlarray::Error);
  CHECK_THROWS_AS(a->Subarray(negative, 1), dlarray::Error);
  CHECK_THROWS_AS(a->Subarray(at, 3), dlarray::Error);  // more indices than axes
  auto empty = dlarray::Array::Empty({2, 0}, Cpu());
  auto none = empty->Subarray(at + 1, 1);  // empty[1]: no element, no memory
  CHECK(none->size() == 0);
  CHECK(none->dl()->data == nullptr);
}

// Issue 26: a DLPack producer's strides [2**61, 1] and byte_offset 2**63 + 8 were accepted
// (the span arithmetic overflowed int64) and the first read crashed.
TEST_CASE("foreign memory: spans that overflow int64 or the address space are refused") {
  std::vector<float> buf{0, 1, 2, 3, 4, 5, 6, 7};
  const DLArrayDType f32{kDLArrayFloat, 32, 1};
  auto from = [&](std::vector<int64_t> shape, std::vector<int64_t> strides, uint64_t offset,
                  void* data) -> std::string {
    try {
      dlarray::Array::FromMemory(data, offset, Cpu(), f32, shape, strides, nullptr, false);
    } catch (const dlarray::Error& e) {
      return e.what();
    }
    return "";
  };
  CHECK(Contains(from({2, 2}, {int64_t{1} << 61, 1}, 0, buf.data()), "strides"));
  CHECK(Contains(from({2, 2}, {-(int64_t{1} << 61), 1}, 0, buf.data()), "strides"));
  CHECK(Contains(from({2, 2}, {int64_t{1} << 60, -(int64_t{1} << 60)}, 0, buf.data()), "strides"));
  CHECK(Contains(from({3}, {}, (uint64_t{1} << 63) + 8, buf.data()), "byte_offset"));
  CHECK(Contains(from({3}, {}, 2, buf.data()), "aligned"));
  CHECK(Contains(from({3}, {-1}, 0, reinterpret_cast<void*>(4)), "address space"));
  CHECK(from({0}, {}, (uint64_t{1} << 63) - 4, buf.data()).empty());  // no element, no span
  // What a producer may send still reads right: an offset, negative strides (via DLPack).
  int64_t shape[2] = {2, 2}, strides[2] = {-2, 1};
  DLArray t{buf.data(), {kDLArrayCPU, 0}, 2, f32, shape, strides, 4 * sizeof(float)};
  auto a = dlarray::ArrayFromDLPack(t, nullptr, false);
  auto out = dlarray::Array::Empty({2, 2}, Cpu());
  Run("copy", {a->dl()}, {out->dl()});
  CHECK(Read(*out) == std::vector<float>{4, 5, 2, 3});
  CHECK(a->data_ptr() == buf.data() + 4);
  t.ndim = 65;
  CHECK_THROWS_AS(dlarray::ArrayFromDLPack(t, nullptr, false), dlarray::Error);
  // Views of it cannot reach further either, however large their strides.
  CHECK_THROWS_AS(a->View({2}, {int64_t{1} << 62}, a->byte_offset()), dlarray::Error);
}

TEST_CASE("ops other than copy refuse strided views and say how to fix it") {
  auto a = Make({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  auto strided = a->View({2, 2}, {4, 2}, 0);
  auto out = dlarray::Array::Empty({2, 2}, Cpu());
  const std::string msg = ErrorOf("relu", {strided->dl()}, {out->dl()});
  CHECK(Contains(msg, "strided"));
  CHECK(Contains(msg, ".copy()"));
  Run("copy", {strided->dl()}, {out->dl()});
  CHECK(Read(*out) == std::vector<float>{1, 3, 5, 7});
  // Copy into a strided output too (how assignment to a view works).
  auto fill = Make({2, 2}, {-1, -2, -3, -4});
  Run("copy", {fill->dl()}, {strided->dl()});
  CHECK(Read(*a) == std::vector<float>{-1, 2, -2, 4, -3, 6, -4, 8});
}

TEST_CASE("a partly overlapping copy is refused") {
  auto a = Make({6}, {0, 1, 2, 3, 4, 5});
  auto head = a->View({5}, {1}, 0);
  auto tail = a->View({5}, {1}, sizeof(float));
  CHECK(Contains(ErrorOf("copy", {tail->dl()}, {head->dl()}), "overlaps"));
}

TEST_CASE("zero-size arrays hold no memory and ops on them run no kernel") {
  auto e = dlarray::Array::Empty({0, 3}, Cpu());
  CHECK(e->size() == 0);
  CHECK(e->nbytes() == 0);
  CHECK(e->dl()->data == nullptr);
  auto out = dlarray::Array::Empty({0, 3}, Cpu());
  Run("relu", {e->dl()}, {out->dl()});
  Run("matrix_elementwise_add", {e->dl(), e->dl()}, {out->dl()});
  auto sum = Make({3}, {7, 7, 7});
  Run("reduce_sum_axis_zero", {e->dl()}, {sum->dl()});  // a sum of nothing
  CHECK(Read(*sum) == std::vector<float>{0, 0, 0});
  CHECK_THROWS_AS(dlarray::Array::Empty({-1}, Cpu()), dlarray::Error);
}

TEST_CASE("dtype rules: astype converts, comparisons give bool, other ops want alike dtypes") {
  auto f = Make({3}, {-1.5f, 0.0f, 2.7f});
  auto i = dlarray::Array::Empty({3}, Cpu(), DLArrayDType{kDLArrayInt, 32, 1});
  Run("astype", {f->dl()}, {i->dl()});
  std::vector<int32_t> got(3);
  std::memcpy(got.data(), i->data_ptr(), sizeof(int32_t) * 3);
  CHECK(got == std::vector<int32_t>{-1, 0, 2});
  auto b = dlarray::Array::Empty({3}, Cpu(), DLArrayDType{kDLArrayBool, 8, 1});
  Run("compare_by_const", {f->dl()}, {b->dl()}, {0.0, 4.0});  // f > 0
  const auto* bits = static_cast<const uint8_t*>(b->data_ptr());
  CHECK((bits[0] == 0 && bits[1] == 0 && bits[2] == 1));
  CHECK(Contains(ErrorOf("compare", {f->dl(), f->dl()}, {f->dl()}, {0.0}), "must be bool"));
  CHECK(Contains(ErrorOf("matrix_elementwise_add", {f->dl(), i->dl()}, {f->dl()}),
                 "operand 0 has float32"));
  CHECK(dlarray::DTypeToString(DLArrayDType{kDLArrayBfloat, 16, 1}) == "bfloat16");
  CHECK(dlarray::DTypeToString(DLArrayDType{kDLArrayBool, 8, 1}) == "bool");
  auto specs = dlarray::InferOutputs(dlarray::RequireOp("compare"), {{2, 3}, {2, 3}},
                                     {dlarray::kFloat32, dlarray::kFloat32}, {1.0});
  CHECK(specs[0].dtype == DLArrayDType{kDLArrayBool, 8, 1});
}

TEST_CASE("device strings") {
  CHECK(dlarray::ParseContext("cpu") == Cpu());
  CHECK(dlarray::ParseContext("cuda:1") == DLContext{kDLArrayCUDA, 1});
  CHECK(dlarray::ParseContext("gpu") == DLContext{kDLArrayCUDA, 0});
  CHECK_THROWS_AS(dlarray::ParseContext("tpu:0"), dlarray::Error);
  CHECK_THROWS_AS(dlarray::ParseContext("cuda:x"), dlarray::Error);
  CHECK(dlarray::DeviceTypeFromName("opencl") == 4);
  // The names printed are the names parsed: DLPack's where it has one, else device_type_<n>.
  CHECK(dlarray::ContextToString(DLContext{4, 1}) == "opencl(1)");
  CHECK(dlarray::DeviceTypeName(7) == "vulkan");
  CHECK(dlarray::DeviceTypeName(30) == "device_type_30");  // no test plugin serves 30
  for (int t = 1; t < DLARRAY_MAX_DEVICE_TYPES; ++t) {
    CHECK(dlarray::DeviceTypeFromName(dlarray::DeviceTypeName(t)) == t);
    CHECK(dlarray::ParseContext(dlarray::DeviceTypeName(t) + ":3") == DLContext{t, 3});
  }
  const dlarray::MemInfo info = dlarray::GetMemInfo(Cpu());
  CHECK(info.total_bytes > 0);
  CHECK(info.free_bytes <= info.total_bytes);
}
