// Unit tests of the OpenCL plugin's parts that need no device: device selection, the disk cache
// (keys as Python's dlarray._cache makes them, atomic stores, corruption), SHA-256, error texts and
// buffer addresses.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "buffer_table.h"
#include "cl_check.h"
#include "device_selection.h"
#include "disk_cache.h"
#include "dlarray/errors.h"
#include "sha256.h"

using namespace dlarray::opencl;  // NOLINT(build/namespaces)

namespace {

std::vector<DeviceCandidate> Machine() {
  return {{"Portable Computing Language", "The pocl project", "pthread-cpu"},
          {"NVIDIA CUDA", "NVIDIA Corporation", "H100"},
          {"NVIDIA CUDA", "NVIDIA Corporation", "A100"},
          {"Intel(R) OpenCL", "Intel(R) Corporation", "Xeon"}};
}

std::string TempDir() {
  char pattern[] = "/tmp/dlarray_opencl_unitsXXXXXX";
  REQUIRE(mkdtemp(pattern) != nullptr);
  return pattern;
}

}  // namespace

TEST_CASE("device selection: all devices by default, in platform order") {
  const DeviceSelection s = SelectDevices("", Machine());
  CHECK(s.error.empty());
  CHECK(s.chosen == std::vector<size_t>{0, 1, 2, 3});
  CHECK(SelectDevices("  ", Machine()).chosen.size() == 4);
  CHECK(SelectDevices("*", Machine()).chosen.size() == 4);
  CHECK(SelectDevices("all", Machine()).chosen.size() == 4);
}

TEST_CASE("device selection: platform:index, platform:*, platform, index, in the order given") {
  CHECK(SelectDevices("pocl:0", Machine()).chosen == std::vector<size_t>{0});
  CHECK(SelectDevices("nvidia:1", Machine()).chosen == std::vector<size_t>{2});
  CHECK(SelectDevices("NVIDIA:*", Machine()).chosen == std::vector<size_t>{1, 2});
  CHECK(SelectDevices("intel", Machine()).chosen == std::vector<size_t>{3});
  CHECK(SelectDevices("nvidia:1, pocl:0,3", Machine()).chosen == std::vector<size_t>{2, 0, 3});
  // Vendor text matches too, and a device named twice is served once.
  CHECK(SelectDevices("corporation:0,nvidia:0", Machine()).chosen == std::vector<size_t>{1});
}

TEST_CASE("device selection: mistakes select nothing and say why, listing the devices") {
  DeviceSelection s = SelectDevices("amd:*", Machine());
  CHECK(s.chosen.empty());
  CHECK(s.error.find("DLARRAY_OPENCL_DEVICES='amd:*'") != std::string::npos);
  CHECK(s.error.find("pocl:0 (pthread-cpu") != std::string::npos);
  CHECK(s.error.find("nvidia:1 (A100") != std::string::npos);
  s = SelectDevices("nvidia:2", Machine());
  CHECK(s.chosen.empty());
  CHECK(s.error.find("have 2 device(s)") != std::string::npos);
  s = SelectDevices("7", Machine());
  CHECK(s.error.find("no device 7") != std::string::npos);
  CHECK(SelectDevices("pocl:x", Machine()).error.find("not a selector") != std::string::npos);
  CHECK(SelectDevices("pocl:0,,", Machine()).error.find("empty selector") != std::string::npos);
  CHECK(SelectDevices(":0", Machine()).error.find("not a selector") != std::string::npos);
  CHECK(SelectDevices("pocl:0", {}).chosen.empty());
}

TEST_CASE("sha256 gives FIPS 180-4's test vectors") {
  CHECK(Sha256Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(Sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  Sha256 h;  // the same bytes in pieces that cross the 64-byte blocks
  const std::string million(1000000, 'a');
  for (size_t i = 0; i < million.size(); i += 999) h.update(million.substr(i, 999));
  CHECK(h.hexdigest() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("JSON strings are written as Python's json.dumps writes them") {
  using disk_cache::JsonString;
  CHECK(JsonString("abc") == "\"abc\"");
  CHECK(JsonString("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(JsonString("\n\r\t\b\f") == "\"\\n\\r\\t\\b\\f\"");
  CHECK(JsonString(std::string("\x01\x1f\x7f", 3)) == "\"\\u0001\\u001f\x7f\"");
  CHECK(JsonString("caf\xc3\xa9") == "\"caf\\u00e9\"");
  CHECK(JsonString("\xf0\x9f\x98\x80") == "\"\\ud83d\\ude00\"");  // U+1F600: a surrogate pair
  CHECK(JsonString("\xff") == "\"\\u00ff\"");                     // not UTF-8: byte by byte
}

TEST_CASE("cache keys: 32 hex digits, every part counted with its length") {
  const std::string k = disk_cache::MakeKey({"a", "b"});
  CHECK(k.size() == 32);
  CHECK(k.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(k != disk_cache::MakeKey({"ab"}));
  CHECK(k != disk_cache::MakeKey({"a", "b", ""}));
  CHECK(k == disk_cache::MakeKey({"a", "b"}));
}

TEST_CASE("the disk cache stores atomically, verifies, and drops corrupt files") {
  const std::string root = TempDir();
  REQUIRE(setenv("DLARRAY_CACHE_DIR", (root + "/nested/cache").c_str(), 1) == 0);
  CHECK(disk_cache::CacheDir() == root + "/nested/cache");
  const std::string entry = disk_cache::EntryDir("opencl", disk_cache::MakeKey({"x"}));
  const std::string path = entry + "/program.bin";
  CHECK_FALSE(disk_cache::LoadBytes(path).has_value());
  {
    disk_cache::FolderLock lock(entry);
    disk_cache::StoreBytes(path, std::string("bin\0ary", 7));
  }
  REQUIRE(disk_cache::LoadBytes(path).has_value());
  CHECK(*disk_cache::LoadBytes(path) == std::string("bin\0ary", 7));
  std::ifstream manifest(path + ".sha256");
  std::string digest;
  manifest >> digest;
  CHECK(digest == Sha256Hex(std::string("bin\0ary", 7)));
  {
    std::ofstream damage(path, std::ios::binary | std::ios::trunc);
    damage << "bin";
  }
  CHECK_FALSE(disk_cache::LoadBytes(path).has_value());
  CHECK(access(path.c_str(), F_OK) != 0);
  CHECK(access((path + ".sha256").c_str(), F_OK) != 0);
  REQUIRE(setenv("DLARRAY_CACHE_DIR", "/proc/dlarray-cannot-be-here", 1) == 0);
  CHECK_THROWS_WITH_AS(disk_cache::CacheDir(), doctest::Contains("DLARRAY_CACHE_DIR"),
                       dlarray::BackendError);
  unsetenv("DLARRAY_CACHE_DIR");
  std::string cmd = "rm -rf '" + root + "'";
  CHECK(std::system(cmd.c_str()) == 0);
}

TEST_CASE("OpenCL error codes are named") {
  CHECK(ClErrorText(-5) == "CL_OUT_OF_RESOURCES (-5)");
  CHECK(ClErrorText(-1001) == "CL_PLATFORM_NOT_FOUND_KHR (-1001)");
  CHECK(ClErrorText(-9999) == "unknown OpenCL error (-9999)");
  CHECK(IsOutOfMemory(CL_MEM_OBJECT_ALLOCATION_FAILURE));
  CHECK_FALSE(IsOutOfMemory(CL_INVALID_VALUE));
  CHECK_THROWS_WITH_AS(ThrowClError(-54, "clEnqueueNDRangeKernel(relu)", "/x/y/launch.cc", 7),
                       "clEnqueueNDRangeKernel(relu) failed: CL_INVALID_WORK_GROUP_SIZE (-54) at "
                       "launch.cc:7",
                       dlarray::BackendError);
  CHECK_THROWS_AS(ThrowClError(-4, "clCreateBuffer", "b.cc", 1), dlarray::OutOfMemoryError);
}

TEST_CASE("buffer handles: offsets resolve, foreign and stale handles are refused") {
  BufferTable table;
  cl_mem fake1 = reinterpret_cast<cl_mem>(uintptr_t{0x1000});
  cl_mem fake2 = reinterpret_cast<cl_mem>(uintptr_t{0x2000});
  table.Insert(fake1, 0, 4096);
  table.Insert(fake2, 1, 100);
  BufferRef r = table.Resolve(fake1, 1000, 0, 96, "x");
  CHECK(r.mem == fake1);
  CHECK(r.offset == 1000);
  CHECK(r.size == 4096);
  CHECK(table.Resolve(fake1, 4096, 0, 0, "x").offset == 4096);
  CHECK_THROWS_WITH_AS(table.Resolve(fake1, 4000, 0, 100, "x"),
                       doctest::Contains("run past the end"), dlarray::DeviceError);
  CHECK_THROWS_WITH_AS(table.Resolve(fake1, UINT64_MAX, 0, 1, "x"),
                       doctest::Contains("run past the end"), dlarray::DeviceError);
  CHECK_THROWS_WITH_AS(table.Resolve(fake2, 0, 0, 4, "y"), doctest::Contains("lives on opencl(1)"),
                       dlarray::DeviceError);
  int host = 0;
  CHECK_THROWS_WITH_AS(table.Resolve(&host, 0, 0, 4, "z"), doctest::Contains("is not memory of"),
                       dlarray::DeviceError);
  CHECK(table.Erase(reinterpret_cast<char*>(fake1) + 8).mem == nullptr);  // not a handle
  CHECK(table.Erase(fake1).mem == fake1);
  CHECK(table.Erase(fake1).mem == nullptr);  // twice: unknown
  CHECK_THROWS_AS(table.Resolve(fake1, 0, 0, 4, "stale"), dlarray::DeviceError);
}
