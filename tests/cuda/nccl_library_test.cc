// The CUDA plugin's NCCL loader (backends/cuda/nccl_library.cc) against fake libraries and, where
// one is installed, the real libnccl.so.2. Needs no GPU.
#include "nccl_library.h"

#include <doctest/doctest.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "dlarray/errors.h"

namespace nccl = dlarray::cuda::nccl;

namespace {

// Sets (or unsets, for nullptr) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_.c_str(), old_.c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

std::string OpenError(const std::vector<std::string>& candidates) {
  try {
    (void)nccl::Open(candidates);
  } catch (const dlarray::BackendError& e) {
    return e.what();
  }
  return "";
}

std::string RealPath(const std::string& p) {
  char buf[PATH_MAX];
  return realpath(p.c_str(), buf) != nullptr ? buf : p;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("NCCL versions print like NCCL's own") {
  CHECK(nccl::VersionText(22809) == "2.28.9");
  CHECK(nccl::VersionText(21400) == "2.14.0");
  CHECK(nccl::VersionText(2804) == "2.8.4");
}

TEST_CASE("DLARRAY_NCCL_LIBRARY is the only place tried when set") {
  ScopedEnv env("DLARRAY_NCCL_LIBRARY", "/opt/x/libnccl.so.2");
  CHECK(nccl::SearchPath({"/wheel/libnccl.so.2"}) ==
        std::vector<std::string>{"/opt/x/libnccl.so.2"});
  ScopedEnv folder("DLARRAY_NCCL_LIBRARY", "/tmp");
  CHECK(nccl::SearchPath({}) == std::vector<std::string>{"/tmp/libnccl.so.2"});
}

TEST_CASE("without the variable: candidates, the loader's search, then the CUDA toolkit") {
  ScopedEnv env("DLARRAY_NCCL_LIBRARY", nullptr);
  ScopedEnv home("CUDA_HOME", "/opt/cuda-x");
  const std::vector<std::string> path = nccl::SearchPath({"/wheel/libnccl.so.2", "/tmp"});
  REQUIRE(path.size() >= 5);
  CHECK(path[0] == "/wheel/libnccl.so.2");
  CHECK(path[1] == "/tmp/libnccl.so.2");  // a folder stands for the library inside it
  CHECK(path[2] == "libnccl.so.2");
  CHECK(path[3] == "/opt/cuda-x/lib64/libnccl.so.2");
  CHECK(path.back() == "/usr/local/cuda/lib/libnccl.so.2");
}

TEST_CASE("a missing library is reported with every place tried and what to do") {
  ScopedEnv env("DLARRAY_NCCL_LIBRARY", "/nonexistent/dir/libnccl.so.2");
  const std::string e = OpenError({});
  CHECK(Contains(e, "NCCL was not found: tried /nonexistent/dir/libnccl.so.2 (no such file)"));
  CHECK(Contains(e, "DLARRAY_NCCL_LIBRARY names the only place tried"));
}

TEST_CASE("a library that is not NCCL, or too old, is named with the reason") {
  {
    ScopedEnv env("DLARRAY_NCCL_LIBRARY", FAKE_NCCL_PARTIAL);
    const std::string e = OpenError({});
    CHECK(Contains(e, FAKE_NCCL_PARTIAL));
    CHECK(Contains(e, "not a usable NCCL: it has no ncclCommFinalize"));
  }
  {
    ScopedEnv env("DLARRAY_NCCL_LIBRARY", FAKE_NCCL_OLD);
    const std::string e = OpenError({});
    CHECK(Contains(e, "NCCL 2.12.0 is too old (dlarray needs 2.14.0 or newer)"));
  }
  {
    ScopedEnv env("DLARRAY_NCCL_LIBRARY", "/etc/hostname");
    CHECK(Contains(OpenError({}), "/etc/hostname ("));  // dlopen's own text follows
  }
}

TEST_CASE("a folder holding libnccl.so.2, and candidates before the system's") {
  char dir[] = "/tmp/dlarray_nccl_XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  const std::string link = std::string(dir) + "/libnccl.so.2";
  REQUIRE(symlink(FAKE_NCCL_GOOD, link.c_str()) == 0);
  {
    ScopedEnv env("DLARRAY_NCCL_LIBRARY", dir);
    const nccl::Library lib = nccl::Open({});
    CHECK(lib.version == 22800);
    CHECK(lib.path == RealPath(FAKE_NCCL_GOOD));
  }
  {
    ScopedEnv env("DLARRAY_NCCL_LIBRARY", nullptr);
    // The partial fake comes first and is skipped with its reason; the folder's library wins.
    const nccl::Library lib = nccl::Open({FAKE_NCCL_PARTIAL, dir});
    CHECK(lib.path == RealPath(FAKE_NCCL_GOOD));
    CHECK((lib.GroupEnd != nullptr));
  }
  unlink(link.c_str());
  rmdir(dir);
}

TEST_CASE("the installed NCCL, where there is one, opens and makes ids without a GPU") {
  ScopedEnv env("DLARRAY_NCCL_LIBRARY", nullptr);
  std::string error;
  nccl::Library lib;
  try {
    lib = nccl::Open({});
  } catch (const dlarray::BackendError& e) {
    error = e.what();
  }
  if (!error.empty()) {
    MESSAGE("no NCCL installed here: " << error);
    CHECK(Contains(error, "NCCL was not found: tried libnccl.so.2 ("));
    CHECK(Contains(error, "/usr/local/cuda/lib64/libnccl.so.2"));
    return;
  }
  CHECK(lib.version >= nccl::kMinVersion);
  CHECK(lib.path.front() == '/');
  nccl::UniqueId a{}, b{};
  CHECK(lib.GetUniqueId(&a) == nccl::kSuccess);
  CHECK(lib.GetUniqueId(&b) == nccl::kSuccess);
  CHECK(std::string(a.internal, sizeof a.internal) != std::string(b.internal, sizeof b.internal));
  CHECK(Contains(nccl::ErrorText(lib, 6), "ncclRemoteError ("));
}
