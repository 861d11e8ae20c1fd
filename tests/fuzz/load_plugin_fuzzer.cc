// libFuzzer target: the check a plugin file gets before dlopen (runtime/src/elf_check.cc), on
// arbitrary file contents. Each input is written to a new file (the loader keeps one record per
// path). The check must survive any input (ASan, UBSan); a file it refuses must be refused by
// DLArrayLoadPlugin with the check's reason, so it never reached the dynamic loader.
//
// Files the check lets through are not loaded: the system loader trusts the file's tables, and
// loading a library is running its code, so mutations of a library crash it by design (see the
// README's security notes). The seed corpus holds text, empty, truncated and damaged ELF files.
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "dlarray/c_runtime_api.h"
#include "elf_check.h"

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
  const std::string refused = dlarray::CheckPluginFile(path);
  if (!refused.empty()) {
    if (DLArrayLoadPlugin(path.c_str()) != -1) std::abort();
    if (std::strstr(DLGetLastError(), refused.c_str()) == nullptr) std::abort();
  }
  unlink(path.c_str());
  return 0;
}
