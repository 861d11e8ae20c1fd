// libFuzzer target: DLArrayLoadPlugin on arbitrary file contents. Each input is written to a new
// file (the loader keeps one record per path) and loaded; the result must be 0 or -1 with a
// message, and the process must survive: truncated or corrupt ELF files are refused before the
// dynamic loader maps them, and libraries without the entry symbol are never opened.
//
// The seed corpus holds text, empty and truncated or damaged ELF files. It holds no complete
// library on purpose: loading one runs its code, and mutations of code crash by design (loading
// a plugin is running its code; see the README's security notes).
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "dlarray/c_runtime_api.h"

namespace {

std::string& Dir() {
  static std::string dir;
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("DLARRAY_DISABLE_PLUGINS", "cuda", 1);
  char templ[] = "/tmp/dlarray_load_plugin_fuzzer_XXXXXX";
  if (mkdtemp(templ) == nullptr) {
    std::perror("mkdtemp");
    std::abort();
  }
  Dir() = templ;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static uint64_t counter = 0;
  const std::string path = Dir() + "/plugin_" + std::to_string(counter++) + ".so";
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    std::perror("open");
    std::abort();
  }
  size_t done = 0;
  while (done < size) {
    const ssize_t n = write(fd, data + done, size - done);
    if (n <= 0) std::abort();
    done += static_cast<size_t>(n);
  }
  close(fd);
  const int rc = DLArrayLoadPlugin(path.c_str());
  if (rc != 0 && rc != -1) std::abort();
  if (rc == -1 && DLGetLastError()[0] == '\0') std::abort();
  unlink(path.c_str());
  return 0;
}
