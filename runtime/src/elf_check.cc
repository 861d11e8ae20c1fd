// The check of a plugin file before dlopen (see elf_check.h for why each part exists).
#include "elf_check.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

namespace dlarray {
namespace {

#if defined(__x86_64__)
constexpr unsigned kMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr unsigned kMachine = EM_AARCH64;
#else
constexpr unsigned kMachine = EM_NONE;  // left to dlopen
#endif

std::string MachineName(unsigned machine) {
  switch (machine) {
    case EM_X86_64:
      return "x86_64";
    case EM_AARCH64:
      return "aarch64";
    case EM_PPC64:
      return "ppc64";
    case EM_S390:
      return "s390x";
    case EM_RISCV:
      return "riscv64";
    default:
      return "ELF machine " + std::to_string(machine);
  }
}

// Reads [offset, offset + len) of the file; false when the file ends before.
bool ReadAt(int fd, uint64_t size, uint64_t offset, uint64_t len, void* out) {
  if (offset > size || len > size - offset) return false;
  char* p = static_cast<char*>(out);
  while (len > 0) {
    const ssize_t n = pread(fd, p, len, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    offset += static_cast<uint64_t>(n);
    len -= static_cast<uint64_t>(n);
  }
  return true;
}

std::string Check(int fd, uint64_t size) {
  // What is not a complete 64-bit little-endian ELF header, dlopen refuses by its header alone
  // ("file too short", "invalid ELF header", "wrong ELF class: ELFCLASS32", ...).
  Elf64_Ehdr eh;
  if (!ReadAt(fd, size, 0, sizeof(eh), &eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB) {
    return "";
  }
  if (kMachine != EM_NONE && eh.e_machine != kMachine) {
    return "built for " + MachineName(eh.e_machine) + ", this process runs on " +
           MachineName(kMachine);
  }
  if (eh.e_phentsize != sizeof(Elf64_Phdr)) return "";  // dlopen: "phentsize not the expected size"
  std::vector<Elf64_Phdr> headers(eh.e_phnum);
  if (!ReadAt(fd, size, eh.e_phoff, headers.size() * sizeof(Elf64_Phdr), headers.data())) {
    return "the file ends inside its program headers (truncated)";
  }
  for (const Elf64_Phdr& ph : headers) {
    if (ph.p_type == PT_LOAD && (ph.p_offset > size || ph.p_filesz > size - ph.p_offset)) {
      return "the file ends inside a loadable segment (truncated)";
    }
  }
  return "";
}

}  // namespace

std::string CheckPluginFile(const std::string& path) {
  // The loader refuses what is not a regular file before (dlopen would block on a FIFO);
  // O_NONBLOCK keeps this open from blocking should a FIFO have taken the file's place since.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return "";  // dlopen fails the same way and says why
  struct stat st;
  const std::string why = fstat(fd, &st) == 0 ? Check(fd, static_cast<uint64_t>(st.st_size)) : "";
  close(fd);
  return why.empty() ? why : path + ": " + why;
}

}  // namespace dlarray
