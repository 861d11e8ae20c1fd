// The C API: 0 or -1 with a thread-local message; null and freed handles are reported.
#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <vector>

#include "dlarray/c_runtime_api.h"

TEST_CASE("C API: allocate, fill, compute, copy back, free") {
  int64_t shape[2] = {3, 5};
  DLContext cpu{kDLArrayCPU, 0};
  DLArrayHandle a = nullptr, b = nullptr;
  REQUIRE(DLArrayAlloc(shape, 2, cpu, &a) == 0);
  REQUIRE(DLArrayAlloc(shape, 2, cpu, &b) == 0);
  CHECK(DLArraySet(a, -2.0f) == 0);
  CHECK(DLArrayMatrixElementwiseAddByConst(a, 5.0f, b) == 0);
  std::vector<float> host(15);
  DLArray view{host.data(), cpu, 2, DLArrayDType{kDLArrayFloat, 32, 1}, shape, nullptr, 0};
  CHECK(DLArrayCopyFromTo(b, &view, nullptr) == 0);
  for (float v : host) CHECK(v == 3.0f);
  CHECK(DLGpuRelu(a, b) == 0);  // the seed's name, routed to the cpu
  CHECK(DLArrayCopyFromTo(b, &view, nullptr) == 0);
  for (float v : host) CHECK(v == 0.0f);
  CHECK(DLArrayFree(a) == 0);
  CHECK(DLArrayFree(b) == 0);
}

TEST_CASE("C API: errors return -1 with a message, never throw") {
  int64_t shape[1] = {4};
  int64_t other[1] = {5};
  DLContext cpu{kDLArrayCPU, 0};
  DLArrayHandle a = nullptr, b = nullptr;
  REQUIRE(DLArrayAlloc(shape, 1, cpu, &a) == 0);
  REQUIRE(DLArrayAlloc(other, 1, cpu, &b) == 0);
  CHECK(DLArrayRelu(a, b) == -1);
  CHECK(std::string(DLGetLastError()).find("(4,)") != std::string::npos);
  CHECK(DLGetLastErrorKind() == kDLArrayErrValue);
  CHECK(DLArrayRelu(nullptr, b) == -1);
  CHECK(std::string(DLGetLastError()).find("null") != std::string::npos);
  CHECK(DLArrayFree(nullptr) == -1);
  int64_t bad[1] = {-3};
  DLArrayHandle c = nullptr;
  CHECK(DLArrayAlloc(bad, 1, cpu, &c) == -1);
  CHECK(std::string(DLGetLastError()).find("(-3,)") != std::string::npos);
  CHECK(DLArrayAlloc(shape, 1, DLContext{kDLArrayCUDA + 40, 0}, &c) == -1);
  CHECK(DLArrayFree(b) == 0);
  CHECK(DLArrayFree(b) == -1);
  CHECK(std::string(DLGetLastError()).find("already freed") != std::string::npos);
  CHECK(DLArrayRelu(a, b) == -1);
  CHECK(std::string(DLGetLastError()).find("freed handle") != std::string::npos);
  CHECK(DLArrayFree(a) == 0);
}

TEST_CASE("C API: the last error is per thread") {
  CHECK(DLArrayFree(nullptr) == -1);
  std::string other;
  std::thread t([&] { other = DLGetLastError(); });
  t.join();
  CHECK(other.empty());
  CHECK(!std::string(DLGetLastError()).empty());
}

TEST_CASE("C API: ops by name, including plugin ops") {
  int64_t shape[1] = {2};
  DLContext cpu{kDLArrayCPU, 0};
  DLArrayHandle a = nullptr, b = nullptr;
  REQUIRE(DLArrayAlloc(shape, 1, cpu, &a) == 0);
  REQUIRE(DLArrayAlloc(shape, 1, cpu, &b) == 0);
  double value = 0.0;
  CHECK(DLArrayInvoke("array_set", nullptr, 0, &a, 1, &value, 1) == 0);
  CHECK(DLArrayInvoke("sigmoid", &a, 1, &b, 1, nullptr, 0) == 0);
  float host[2];
  DLArray view{host, cpu, 1, DLArrayDType{kDLArrayFloat, 32, 1}, shape, nullptr, 0};
  CHECK(DLArrayCopyFromTo(b, &view, nullptr) == 0);
  CHECK(host[0] == doctest::Approx(0.5f));
  CHECK(DLArrayInvoke("nope", &a, 1, &b, 1, nullptr, 0) == -1);
  CHECK(std::string(DLGetLastError()).find("unknown op 'nope'") != std::string::npos);
  DLArrayFree(a);
  DLArrayFree(b);
}
