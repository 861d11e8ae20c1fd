// The core: arrays, the op table, validation (done once, in the core) and copies.
#include <doctest/doctest.h>

#include <cstdint>

#include "dlarray/errors.h"
#include "dlarray/plugin_api.h"
#include "dlarray/runtime.h"
#include "test_helpers.h"

using dltest::Contains;
using dltest::Cpu;
using dltest::Make;
using dltest::TryInvoke;

TEST_CASE("the CPU backend is discovered next to the core library") {
  bool found = false;
  for (const auto& p : dlarray::Plugins()) {
    if (p.name == "cpu") {
      found = true;
      CHECK(p.status == dlarray::PluginStatus::kLoaded);
      CHECK(p.origin == "plugins folder");
      CHECK(p.abi_version == DLARRAY_PLUGIN_ABI_MAJOR);
      CHECK(p.abi_minor == DLARRAY_PLUGIN_ABI_MINOR);
      CHECK(p.device_count == 1);
    }
  }
  CHECK(found);
  CHECK(dlarray::DeviceCount(kDLArrayCPU) == 1);
}

TEST_CASE("CPU arrays are 64-byte aligned, whatever their size") {
  for (int64_t n : {1, 3, 17, 1000, 4097}) {
    auto a = dlarray::Array::Empty({n}, Cpu());
    CHECK(reinterpret_cast<uintptr_t>(a->dl()->data) % 64 == 0);
    CHECK(a->size() == n);
    CHECK(a->nbytes() == static_cast<size_t>(n) * 4);
  }
}

TEST_CASE("bad shapes and dtypes are refused with their values in the message") {
  CHECK_THROWS_WITH_AS(dlarray::Array::Empty({3, -2}, Cpu()), doctest::Contains("(3, -2)"),
                       dlarray::ShapeError);
  CHECK_THROWS_AS(dlarray::Array::Empty({INT64_MAX / 2, 16}, Cpu()), dlarray::OutOfMemoryError);
  CHECK_THROWS_AS(dlarray::Array::Empty({int64_t{1} << 45}, Cpu()), dlarray::OutOfMemoryError);
  CHECK_THROWS_AS(dlarray::Array::Empty({2}, Cpu(), DLArrayDType{kDLArrayFloat, 12, 1}),
                  dlarray::DTypeError);
}

TEST_CASE("a zero-dimensional array holds one element") {
  auto a = Make({}, {2.5f});
  CHECK(a->size() == 1);
  CHECK(dltest::Read(*a)[0] == 2.5f);
}

TEST_CASE("every core op checks operand counts and shapes") {
  auto a = Make({2, 3}, dltest::Random(6));
  auto b = Make({3, 2}, dltest::Random(6));
  auto c = dlarray::Array::Empty({2, 3}, Cpu());
  auto one = dlarray::Array::Empty({1}, Cpu());
  CHECK(Contains(TryInvoke("matrix_elementwise_add", {a->dl(), b->dl()}, {c->dl()}), "(3, 2)"));
  CHECK(Contains(TryInvoke("matrix_elementwise_multiply", {a->dl(), a->dl()}, {b->dl()}),
                 "same shape"));
  CHECK(Contains(TryInvoke("matrix_elementwise_add_by_const", {a->dl()}, {b->dl()}, {1.0}),
                 "same shape"));
  CHECK(Contains(TryInvoke("matrix_elementwise_multiply_by_const", {a->dl()}, {b->dl()}, {1.0}),
                 "same shape"));
  CHECK(Contains(TryInvoke("relu", {a->dl()}, {b->dl()}), "same shape"));
  CHECK(Contains(TryInvoke("relu_gradient", {a->dl(), b->dl()}, {c->dl()}), "same shape"));
  CHECK(Contains(TryInvoke("copy", {a->dl()}, {b->dl()}), "same shape"));
  CHECK(Contains(TryInvoke("softmax", {a->dl()}, {b->dl()}), "input's shape"));
  CHECK(
      Contains(TryInvoke("softmax_cross_entropy", {a->dl(), b->dl()}, {one->dl()}), "same shape"));
  CHECK(Contains(TryInvoke("softmax_cross_entropy", {a->dl(), a->dl()}, {c->dl()}), "1 element"));
  CHECK(Contains(TryInvoke("reduce_sum_axis_zero", {a->dl()}, {c->dl()}), "without axis 0"));
  CHECK(Contains(TryInvoke("broadcast_to", {b->dl()}, {c->dl()}),
                 "cannot broadcast (3, 2) to (2, 3)"));
  CHECK(Contains(TryInvoke("matrix_multiply", {a->dl(), a->dl()}, {c->dl()}, {0, 0}),
                 "inner dimensions 3 and 2"));
  CHECK(Contains(TryInvoke("matrix_multiply", {a->dl(), b->dl()}, {c->dl()}, {0, 0}),
                 "output must be (2, 2)"));
  CHECK(Contains(TryInvoke("matrix_multiply", {a->dl(), one->dl()}, {c->dl()}, {0, 0}), "2-D"));
  CHECK(Contains(TryInvoke("array_set", {}, {c->dl()}), "attributes"));
  CHECK(Contains(TryInvoke("relu", {a->dl(), a->dl()}, {c->dl()}), "takes 1 input,"));
  CHECK(Contains(TryInvoke("no_such_op", {}, {c->dl()}), "unknown op 'no_such_op'"));
}

TEST_CASE("ops that cannot run in place refuse aliasing") {
  auto a = Make({3, 3}, dltest::Random(9));
  CHECK(Contains(TryInvoke("matrix_multiply", {a->dl(), a->dl()}, {a->dl()}, {0, 0}), "in place"));
  CHECK(TryInvoke("relu", {a->dl()}, {a->dl()}).empty());
}

TEST_CASE("non-float32 operands are refused with the dtype named") {
  auto a = dlarray::Array::Empty({4}, Cpu(), DLArrayDType{kDLArrayInt, 32, 1});
  auto b = dlarray::Array::Empty({4}, Cpu());
  std::string msg = TryInvoke("relu", {a->dl()}, {b->dl()});
  CHECK(Contains(msg, "int32"));
  CHECK(Contains(msg, "float32"));
}

TEST_CASE("strided (non-compact) operands are refused") {
  auto a = Make({2, 2}, {1, 2, 3, 4});
  DLArray view = *a->dl();
  int64_t strides[2] = {1, 2};
  view.strides = strides;
  auto out = dlarray::Array::Empty({2, 2}, Cpu());
  CHECK(Contains(TryInvoke("relu", {&view}, {out->dl()}), "compact"));
  int64_t compact[2] = {2, 1};
  view.strides = compact;
  CHECK(TryInvoke("relu", {&view}, {out->dl()}).empty());
}

TEST_CASE("copies check shape and dtype, and work host to host") {
  auto a = Make({2, 3}, {1, 2, 3, 4, 5, 6});
  auto b = dlarray::Array::Empty({2, 3}, Cpu());
  dlarray::CopyFromTo(a->dl(), b->dl());
  CHECK(dltest::Read(*b) == std::vector<float>{1, 2, 3, 4, 5, 6});
  auto c = dlarray::Array::Empty({3, 2}, Cpu());
  CHECK_THROWS_WITH_AS(dlarray::CopyFromTo(a->dl(), c->dl()), doctest::Contains("(2, 3)"),
                       dlarray::ShapeError);
  auto d = dlarray::Array::Empty({2, 3}, Cpu(), DLArrayDType{kDLArrayInt, 32, 1});
  CHECK_THROWS_AS(dlarray::CopyFromTo(a->dl(), d->dl()), dlarray::DTypeError);
}

TEST_CASE("a device id out of range and an unserved device type are explained") {
  CHECK_THROWS_WITH_AS(dlarray::Array::Empty({2}, DLContext{kDLArrayCPU, 3}),
                       doctest::Contains("cpu(3) does not exist"), dlarray::DeviceError);
  CHECK_THROWS_WITH_AS(dlarray::Array::Empty({2}, DLContext{27, 0}),
                       doctest::Contains("no plugin serving device_type_27"),
                       dlarray::BackendError);
}

TEST_CASE("FillElements repeats an element's bytes and checks the element against the dtype") {
  auto a = Make({2, 3}, {1, 2, 3, 4, 5, 6});
  DLArray tail = *a->dl();  // the last 4 elements: a compact view at byte offset 8
  int64_t four[1] = {4};
  tail.ndim = 1;
  tail.shape = four;
  tail.byte_offset = 8;
  const float v = -2.5f;
  dlarray::FillElements(&tail, &v, sizeof v);
  CHECK(dltest::Read(*a) == std::vector<float>{1, 2, -2.5f, -2.5f, -2.5f, -2.5f});
  const double wide = 1.0;
  CHECK_THROWS_WITH_AS(dlarray::FillElements(a->dl(), &wide, sizeof wide),
                       doctest::Contains("the element has 8 bytes, but one float32 has 4"),
                       dlarray::Error);
  tail.byte_offset = 6;  // between elements
  CHECK_THROWS_WITH_AS(dlarray::FillElements(&tail, &v, sizeof v), doctest::Contains("aligned"),
                       dlarray::Error);
  DLArray strided = *a->dl();
  int64_t strides[2] = {1, 2};
  strided.strides = strides;
  CHECK_THROWS_WITH_AS(dlarray::FillElements(&strided, &v, sizeof v), doctest::Contains("compact"),
                       dlarray::Error);
  auto bytes = dlarray::Array::Empty({5}, Cpu(), DLArrayDType{kDLArrayUInt, 8, 1});
  const uint8_t b = 0xa5;
  dlarray::FillElements(bytes->dl(), &b, 1);
  auto empty = dlarray::Array::Empty({0}, Cpu());
  dlarray::FillElements(empty->dl(), &v, sizeof v);  // nothing to write, no error
}
