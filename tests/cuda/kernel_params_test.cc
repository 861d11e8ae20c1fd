// Parameter counts read from compiled code (backends/cuda/kernel_params.h), on a cubin and PTX
// that nvcc made from param_kernels.cu at build time: no GPU needed.
#include "kernel_params.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

namespace {

std::string ReadFile(const char* path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f.good());
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

}  // namespace

using dlarray::cuda::CubinParamCount;
using dlarray::cuda::PtxParamCount;

TEST_CASE("a cubin says how many parameters each kernel takes") {
  const std::string cubin = ReadFile(PARAM_KERNELS_CUBIN);
  CHECK(CubinParamCount(cubin.data(), cubin.size(), "none") == 0);
  CHECK(CubinParamCount(cubin.data(), cubin.size(), "three") == 3);
  CHECK(CubinParamCount(cubin.data(), cubin.size(), "three_more") == 5);
  // A name that only starts like a kernel's, or none at all: unknown, not a guess.
  CHECK(CubinParamCount(cubin.data(), cubin.size(), "thre") == -1);
  CHECK(CubinParamCount(cubin.data(), cubin.size(), "missing") == -1);
}

TEST_CASE("a damaged or foreign image gives -1 and reads nothing outside it") {
  const std::string cubin = ReadFile(PARAM_KERNELS_CUBIN);
  uint64_t table = 0;  // where the section headers start (ELF64: e_shoff at 0x28)
  std::memcpy(&table, cubin.data() + 0x28, sizeof table);
  uint16_t sections = 0;
  std::memcpy(&sections, cubin.data() + 0x3c, sizeof sections);
  REQUIRE(table + 64u * sections <= cubin.size());
  const size_t end = static_cast<size_t>(table) + 64u * sections;  // the table cut short
  const size_t cuts[] = {0, 16, 64, static_cast<size_t>(table) + 70, end - 1};
  for (size_t cut : cuts) {
    CAPTURE(cut);
    CHECK(CubinParamCount(cubin.data(), cut, "three") == -1);
  }
  const std::string text = "not an ELF file at all, but long enough to have a header of 64 bytes";
  CHECK(CubinParamCount(text.data(), text.size(), "three") == -1);
  CHECK(CubinParamCount(nullptr, 100, "three") == -1);
  std::string bad = cubin;
  bad[0x3c] = '\xff';  // section count past the table
  bad[0x3d] = '\xff';
  CHECK(CubinParamCount(bad.data(), bad.size(), "three") == -1);
}

TEST_CASE("PTX entries say how many parameters each kernel takes") {
  const std::string ptx = ReadFile(PARAM_KERNELS_PTX);
  CHECK(PtxParamCount(ptx, "none") == 0);
  CHECK(PtxParamCount(ptx, "three") == 3);
  CHECK(PtxParamCount(ptx, "three_more") == 5);
  CHECK(PtxParamCount(ptx, "thre") == -1);
  CHECK(PtxParamCount(".visible .entry k(\n.param .u64 k_param_0\n", "k") == -1);  // unclosed
}
