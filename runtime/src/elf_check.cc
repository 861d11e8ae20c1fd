// The structural check of a plugin file (see elf_check.h). Every table glibc's loader reads
// before it runs the library's code is bounds-checked against the file and the segments.
#include "elf_check.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <vector>

namespace dlarray {
namespace {

#if defined(__x86_64__)
constexpr int kMachine = EM_X86_64;
constexpr const char* kMachineName = "x86_64";
#elif defined(__aarch64__)
constexpr int kMachine = EM_AARCH64;
constexpr const char* kMachineName = "aarch64";
#else
constexpr int kMachine = -1;  // not checked
constexpr const char* kMachineName = "this machine";
#endif

constexpr uint64_t kMaxTableEntries = uint64_t{1} << 24;
constexpr uint64_t kMaxSpan = uint64_t{1} << 40;

struct Bad {
  PluginStatus status;
  std::string reason;
};

[[noreturn]] void Fail(const std::string& why) { throw Bad{PluginStatus::kOpenFailed, why}; }

struct Segment {
  uint64_t vaddr, memsz, offset, filesz;
  uint32_t flags;
};

class ElfReader {
 public:
  ElfReader(int fd, uint64_t size) : fd_(fd), size_(size) {}

  // Reads [offset, offset + len) of the file; fails when it is not all inside the file.
  void Read(uint64_t offset, uint64_t len, void* out, const char* what) const {
    if (offset > size_ || len > size_ - offset) {
      Fail("the file ends before " + std::string(what) + " (truncated or corrupt)");
    }
    char* p = static_cast<char*>(out);
    while (len > 0) {
      const ssize_t n = pread(fd_, p, len, static_cast<off_t>(offset));
      if (n <= 0) {
        if (n < 0 && errno == EINTR) continue;
        Fail(std::string("cannot read ") + what + ": " + (n < 0 ? std::strerror(errno) : "EOF"));
      }
      p += n;
      offset += static_cast<uint64_t>(n);
      len -= static_cast<uint64_t>(n);
    }
  }

  template <typename T>
  std::vector<T> ReadArray(uint64_t offset, uint64_t count, const char* what) const {
    if (count > kMaxTableEntries) Fail(std::string(what) + " is implausibly large");
    std::vector<T> v(count);
    if (count > 0) Read(offset, count * sizeof(T), v.data(), what);
    return v;
  }

  uint64_t size() const { return size_; }

 private:
  int fd_;
  uint64_t size_;
};

class Checker {
 public:
  explicit Checker(const ElfReader& f) : f_(f) {}

  void Run(const char* entry_symbol) {
    ReadHeader();
    ReadProgramHeaders();
    ReadDynamic();
    ReadStrings();
    const uint64_t nsyms = CountSymbols();
    FindEntry(nsyms, entry_symbol);
    CheckVersions(nsyms);
    CheckRelocations(nsyms);
  }

 private:
  // The file offset of [addr, addr + len) when it lies in the file-backed part of one segment.
  uint64_t FileOffset(uint64_t addr, uint64_t len, const char* what) const {
    for (const Segment& s : loads_) {
      if (addr >= s.vaddr && addr - s.vaddr <= s.filesz && len <= s.filesz - (addr - s.vaddr)) {
        return s.offset + (addr - s.vaddr);
      }
    }
    Fail(std::string(what) + " lies outside the library's file-backed segments");
  }

  // Whether [addr, addr + len) lies in the memory of one segment.
  void InMemory(uint64_t addr, uint64_t len, const char* what, bool exec = false) const {
    for (const Segment& s : loads_) {
      if (addr >= s.vaddr && addr - s.vaddr <= s.memsz && len <= s.memsz - (addr - s.vaddr) &&
          (!exec || (s.flags & PF_X) != 0)) {
        return;
      }
    }
    Fail(std::string(what) + " lies outside the library's " + (exec ? "code " : "") + "segments");
  }

  bool Has(int64_t tag) const { return dyn_.count(tag) != 0; }
  uint64_t Get(int64_t tag) const { return dyn_.at(tag); }

  void ReadHeader() {
    unsigned char ident[EI_NIDENT];
    if (f_.size() < EI_NIDENT || (f_.Read(0, EI_NIDENT, ident, "the ELF header"),
                                  std::memcmp(ident, ELFMAG, SELFMAG) != 0)) {
      Fail("not an ELF file (no ELF magic bytes at its start)");
    }
    if (ident[EI_CLASS] != ELFCLASS64)
      Fail("not a 64-bit ELF file (ELF class " + std::to_string(ident[EI_CLASS]) + ")");
    if (ident[EI_DATA] != ELFDATA2LSB) Fail("not a little-endian ELF file");
    if (f_.size() < sizeof(Elf64_Ehdr)) Fail("file too short for an ELF header");
    f_.Read(0, sizeof(eh_), &eh_, "the ELF header");
    if (eh_.e_type != ET_DYN) {
      Fail("not a shared library (ELF type " + std::to_string(eh_.e_type) +
           (eh_.e_type == ET_REL    ? ": an object file"
            : eh_.e_type == ET_EXEC ? ": a program"
                                    : "") +
           ")");
    }
    if (kMachine >= 0 && eh_.e_machine != kMachine) {
      Fail("built for another machine (ELF machine " + std::to_string(eh_.e_machine) +
           "), this process runs on " + kMachineName);
    }
    if (eh_.e_phentsize != sizeof(Elf64_Phdr) || eh_.e_phnum == 0 || eh_.e_phnum > 512) {
      Fail("invalid program header table (entry size " + std::to_string(eh_.e_phentsize) + ", " +
           std::to_string(eh_.e_phnum) + " entries)");
    }
  }

  void ReadProgramHeaders() {
    const auto ph = f_.ReadArray<Elf64_Phdr>(eh_.e_phoff, eh_.e_phnum, "the program headers");
    const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    for (const Elf64_Phdr& p : ph) {
      if (p.p_type != PT_LOAD || p.p_memsz == 0) continue;
      if (p.p_offset > f_.size() || p.p_filesz > f_.size() - p.p_offset) {
        Fail("the file ends before a loadable segment (truncated or corrupt)");
      }
      if (p.p_filesz > p.p_memsz || p.p_memsz > kMaxSpan || p.p_vaddr > kMaxSpan) {
        Fail("a loadable segment has inconsistent sizes");
      }
      if ((p.p_align & (p.p_align - 1)) != 0 || (p.p_vaddr - p.p_offset) % page != 0 ||
          (p.p_align > 1 && (p.p_vaddr - p.p_offset) % p.p_align != 0)) {
        Fail("a loadable segment is not aligned");
      }
      if (!loads_.empty() && p.p_vaddr < loads_.back().vaddr + loads_.back().memsz) {
        Fail("loadable segments overlap or are out of order");
      }
      loads_.push_back({p.p_vaddr, p.p_memsz, p.p_offset, p.p_filesz, p.p_flags});
    }
    if (loads_.empty()) Fail("no loadable segment");
    int dynamics = 0;
    for (const Elf64_Phdr& p : ph) {
      if (p.p_type == PT_LOAD) continue;
      if (p.p_type == PT_DYNAMIC) {
        ++dynamics;
        dynamic_ = p;
      }
      if (p.p_type == PT_DYNAMIC || p.p_type == PT_TLS || p.p_type == PT_NOTE ||
          p.p_type == PT_GNU_PROPERTY || p.p_type == PT_GNU_EH_FRAME || p.p_type == PT_INTERP) {
        if (p.p_offset > f_.size() || p.p_filesz > f_.size() - p.p_offset) {
          Fail("a segment (type " + std::to_string(p.p_type) + ") lies past the end of the file");
        }
      }
      if (p.p_type == PT_DYNAMIC || p.p_type == PT_GNU_RELRO || p.p_type == PT_NOTE ||
          p.p_type == PT_GNU_PROPERTY || p.p_type == PT_PHDR || p.p_type == PT_GNU_EH_FRAME ||
          p.p_type == PT_TLS) {
        InMemory(p.p_vaddr, p.p_type == PT_TLS ? p.p_filesz : p.p_memsz, "a segment");
      }
    }
    if (dynamics != 1) Fail("not one dynamic section (" + std::to_string(dynamics) + ")");
  }

  void ReadDynamic() {
    // The loader reads the dynamic section where it is mapped: translate its address.
    if (dynamic_.p_filesz % sizeof(Elf64_Dyn) != 0) Fail("the dynamic section has a bad size");
    const uint64_t off = FileOffset(dynamic_.p_vaddr, dynamic_.p_filesz, "the dynamic section");
    const auto dyn =
        f_.ReadArray<Elf64_Dyn>(off, dynamic_.p_filesz / sizeof(Elf64_Dyn), "the dynamic section");
    bool ended = false;
    for (const Elf64_Dyn& d : dyn) {
      if (d.d_tag == DT_NULL) {
        ended = true;
        break;
      }
      if (d.d_tag == DT_NEEDED || d.d_tag == DT_SONAME || d.d_tag == DT_RPATH ||
          d.d_tag == DT_RUNPATH || d.d_tag == DT_AUXILIARY || d.d_tag == DT_FILTER) {
        names_.push_back(d.d_un.d_val);
      }
      dyn_.emplace(d.d_tag, d.d_un.d_val);
    }
    if (!ended) Fail("the dynamic section has no end marker");
    if (Has(DT_REL)) Fail("REL relocations (not used on this machine)");
    for (int64_t tag :
         {int64_t{DT_PLTGOT}, int64_t{DT_HASH}, int64_t{DT_STRTAB}, int64_t{DT_SYMTAB},
          int64_t{DT_RELA}, int64_t{DT_JMPREL}, int64_t{DT_INIT_ARRAY}, int64_t{DT_FINI_ARRAY},
          int64_t{DT_PREINIT_ARRAY}, int64_t{DT_RELR}, int64_t{DT_GNU_HASH}, int64_t{DT_VERSYM},
          int64_t{DT_VERDEF}, int64_t{DT_VERNEED}}) {
      if (Has(tag)) InMemory(Get(tag), 1, "a table of the dynamic section");
    }
    for (int64_t tag : {int64_t{DT_INIT}, int64_t{DT_FINI}}) {
      if (Has(tag)) InMemory(Get(tag), 1, "an init or fini function", true);
    }
    for (auto [array, size] : {std::pair<int64_t, int64_t>{DT_INIT_ARRAY, DT_INIT_ARRAYSZ},
                               {DT_FINI_ARRAY, DT_FINI_ARRAYSZ},
                               {DT_PREINIT_ARRAY, DT_PREINIT_ARRAYSZ}}) {
      if (Has(array) != Has(size) || (Has(size) && Get(size) % 8 != 0)) {
        Fail("an init or fini array without a valid size");
      }
      if (Has(array)) InMemory(Get(array), Get(size), "an init or fini array");
    }
  }

  void ReadStrings() {
    if (!Has(DT_STRTAB) || !Has(DT_STRSZ) || !Has(DT_SYMTAB)) {
      Fail("no dynamic string or symbol table");
    }
    const uint64_t size = Get(DT_STRSZ);
    if (size == 0 || size > kMaxTableEntries * 16) Fail("the string table has a bad size");
    strings_ =
        f_.ReadArray<char>(FileOffset(Get(DT_STRTAB), size, "the string table"), size, "strings");
    for (uint64_t name : names_) Name(name);
  }

  // The string at offset, which must end inside the table.
  std::string Name(uint64_t offset) const {
    if (offset >= strings_.size() ||
        std::memchr(strings_.data() + offset, '\0', strings_.size() - offset) == nullptr) {
      Fail("a name lies outside the string table");
    }
    return std::string(strings_.data() + offset);
  }

  // Symbols the loader may look at, from the hash tables (validated on the way).
  uint64_t CountSymbols() {
    if (!Has(DT_GNU_HASH) && !Has(DT_HASH)) Fail("no symbol hash table");
    uint64_t nsyms = 0;
    if (Has(DT_HASH)) {
      uint32_t head[2];
      f_.Read(FileOffset(Get(DT_HASH), 8, "the hash table"), 8, head, "the hash table");
      if (head[0] == 0) Fail("the hash table has no buckets");
      const uint64_t n = uint64_t{head[0]} + head[1];
      const auto words = f_.ReadArray<uint32_t>(
          FileOffset(Get(DT_HASH), 8 + 4 * n, "the hash table") + 8, n, "the hash table");
      for (uint32_t w : words) {
        if (w >= head[1]) Fail("the hash table points past the symbol table");
      }
      nsyms = head[1];
    }
    if (Has(DT_GNU_HASH)) {
      const uint64_t base = Get(DT_GNU_HASH);
      uint32_t head[4];  // nbuckets, symoffset, bloom words, bloom shift
      f_.Read(FileOffset(base, 16, "the GNU hash table"), 16, head, "the GNU hash table");
      if (head[0] == 0 || head[2] == 0 || (head[2] & (head[2] - 1)) != 0 || head[3] >= 64) {
        Fail("the GNU hash table has an invalid header");
      }
      const uint64_t buckets_at = base + 16 + uint64_t{head[2]} * 8;
      FileOffset(base + 16, uint64_t{head[2]} * 8, "the GNU hash bloom filter");
      const auto buckets = f_.ReadArray<uint32_t>(
          FileOffset(buckets_at, uint64_t{head[0]} * 4, "the GNU hash buckets"), head[0],
          "the GNU hash buckets");
      uint64_t top = 0;
      for (uint32_t b : buckets) {
        if (b != 0 && b < head[1]) Fail("a GNU hash bucket points below its symbols");
        top = std::max<uint64_t>(top, b);
      }
      uint64_t count = head[1];
      if (top != 0) {
        const uint64_t chains_at = buckets_at + uint64_t{head[0]} * 4;
        for (uint64_t i = top;; ++i) {
          if (i - head[1] > kMaxTableEntries) Fail("a GNU hash chain does not end");
          uint32_t h;
          f_.Read(FileOffset(chains_at + (i - head[1]) * 4, 4, "the GNU hash chains"), 4, &h,
                  "the GNU hash chains");
          if (h & 1u) {
            count = i + 1;
            break;
          }
        }
        FileOffset(chains_at, (count - head[1]) * 4, "the GNU hash chains");
      }
      nsyms = std::max(nsyms, count);
    }
    if (Has(DT_SYMENT) && Get(DT_SYMENT) != sizeof(Elf64_Sym)) Fail("bad symbol entry size");
    symbols_ = f_.ReadArray<Elf64_Sym>(
        FileOffset(Get(DT_SYMTAB), nsyms * sizeof(Elf64_Sym), "the symbol table"), nsyms,
        "the symbol table");
    for (const Elf64_Sym& s : symbols_) Name(s.st_name);
    return nsyms;
  }

  void FindEntry(uint64_t nsyms, const char* entry_symbol) {
    for (uint64_t i = 0; i < nsyms; ++i) {
      const Elf64_Sym& s = symbols_[i];
      const int bind = ELF64_ST_BIND(s.st_info);
      if (s.st_shndx == SHN_UNDEF || ELF64_ST_TYPE(s.st_info) != STT_FUNC ||
          (bind != STB_GLOBAL && bind != STB_WEAK) || Name(s.st_name) != entry_symbol) {
        continue;
      }
      InMemory(s.st_value, 1, "the entry function", true);
      return;
    }
    throw Bad{PluginStatus::kMissingEntry,
              std::string("no entry symbol '") + entry_symbol +
                  "' (not a dlarray plugin); the library was not loaded, so none of its code ran"};
  }

  void CheckVersions(uint64_t nsyms) {
    uint64_t top = 1;  // highest version index defined or needed
    if (Has(DT_VERNEED)) {
      uint64_t at = Get(DT_VERNEED);
      const uint64_t count = Has(DT_VERNEEDNUM) ? Get(DT_VERNEEDNUM) : 0;
      if (count == 0 || count > 4096) Fail("a bad count of needed versions");
      for (uint64_t i = 0; i < count; ++i) {
        Elf64_Verneed vn;
        f_.Read(FileOffset(at, sizeof(vn), "a needed version"), sizeof(vn), &vn, "versions");
        Name(vn.vn_file);
        uint64_t aux = at + vn.vn_aux;
        for (uint32_t j = 0; j < vn.vn_cnt; ++j) {
          Elf64_Vernaux va;
          f_.Read(FileOffset(aux, sizeof(va), "a needed version"), sizeof(va), &va, "versions");
          Name(va.vna_name);
          top = std::max<uint64_t>(top, va.vna_other & 0x7fff);
          if (va.vna_next == 0) break;
          aux += va.vna_next;
        }
        if (vn.vn_next == 0) break;
        at += vn.vn_next;
      }
    }
    if (Has(DT_VERDEF)) {
      uint64_t at = Get(DT_VERDEF);
      const uint64_t count = Has(DT_VERDEFNUM) ? Get(DT_VERDEFNUM) : 0;
      if (count == 0 || count > 4096) Fail("a bad count of defined versions");
      for (uint64_t i = 0; i < count; ++i) {
        Elf64_Verdef vd;
        f_.Read(FileOffset(at, sizeof(vd), "a defined version"), sizeof(vd), &vd, "versions");
        if (vd.vd_cnt > 0) {
          Elf64_Verdaux va;
          f_.Read(FileOffset(at + vd.vd_aux, sizeof(va), "a version name"), sizeof(va), &va,
                  "versions");
          Name(va.vda_name);
        }
        top = std::max<uint64_t>(top, vd.vd_ndx & 0x7fff);
        if (vd.vd_next == 0) break;
        at += vd.vd_next;
      }
    }
    if (Has(DT_VERSYM)) {
      const auto versym = f_.ReadArray<uint16_t>(
          FileOffset(Get(DT_VERSYM), nsyms * 2, "the symbol versions"), nsyms, "versions");
      for (uint16_t v : versym) {
        if ((v & 0x7fff) > top) Fail("a symbol has a version that is not defined or needed");
      }
    }
  }

  void CheckRelocationTable(int64_t table, int64_t size, uint64_t nsyms) {
    if (!Has(table)) return;
    if (!Has(size) || Get(size) % sizeof(Elf64_Rela) != 0) Fail("a relocation table size");
    const auto relocs =
        f_.ReadArray<Elf64_Rela>(FileOffset(Get(table), Get(size), "a relocation table"),
                                 Get(size) / sizeof(Elf64_Rela), "relocations");
    for (const Elf64_Rela& r : relocs) {
      if (ELF64_R_SYM(r.r_info) >= std::max<uint64_t>(nsyms, 1)) {
        Fail("a relocation names a symbol past the symbol table");
      }
      InMemory(r.r_offset, 8, "a relocation target");
    }
  }

  void CheckRelocations(uint64_t nsyms) {
    if (Has(DT_RELAENT) && Get(DT_RELAENT) != sizeof(Elf64_Rela)) Fail("bad relocation size");
    if (Has(DT_JMPREL) && (!Has(DT_PLTREL) || Get(DT_PLTREL) != DT_RELA)) {
      Fail("PLT relocations of an unexpected kind");
    }
    CheckRelocationTable(DT_RELA, DT_RELASZ, nsyms);
    CheckRelocationTable(DT_JMPREL, DT_PLTRELSZ, nsyms);
    if (Has(DT_RELR)) {
      if (!Has(DT_RELRSZ) || Get(DT_RELRSZ) % 8 != 0) Fail("a RELR table size");
      const auto relr = f_.ReadArray<uint64_t>(
          FileOffset(Get(DT_RELR), Get(DT_RELRSZ), "the RELR table"), Get(DT_RELRSZ) / 8, "RELR");
      uint64_t where = 0;
      for (uint64_t e : relr) {
        if ((e & 1) == 0) {
          InMemory(e, 8, "a relocation target");
          where = e + 8;
          continue;
        }
        for (uint64_t bits = e >> 1, i = 0; bits != 0; bits >>= 1, ++i) {
          if (bits & 1) InMemory(where + i * 8, 8, "a relocation target");
        }
        where += 63 * 8;
      }
    }
  }

  const ElfReader& f_;
  Elf64_Ehdr eh_{};
  Elf64_Phdr dynamic_{};
  std::vector<Segment> loads_;
  std::map<int64_t, uint64_t> dyn_;  // the first entry of each tag
  std::vector<uint64_t> names_;
  std::vector<char> strings_;
  std::vector<Elf64_Sym> symbols_;
};

const char* FileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

}  // namespace

PluginFileCheck CheckPluginFile(const std::string& path, const char* entry_symbol) {
  PluginFileCheck out;
  auto reject = [&](PluginStatus status, const std::string& why) {
    out.ok = false;
    out.status = status;
    out.reason = path + ": " + why;
    return out;
  };
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) {
      out.missing = true;
      return out;
    }
    return reject(PluginStatus::kOpenFailed, std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return reject(PluginStatus::kOpenFailed,
                  std::string("not a regular file (") + FileKind(st.st_mode) + ")");
  }
  // O_NONBLOCK: should the path have been replaced by a FIFO since stat, open does not wait.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return reject(PluginStatus::kOpenFailed, std::strerror(errno));
  try {
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) Fail("not a regular file");
    ElfReader file(fd, static_cast<uint64_t>(st.st_size));
    Checker(file).Run(entry_symbol);
  } catch (const Bad& bad) {
    close(fd);
    return reject(bad.status, bad.reason);
  }
  close(fd);
  return out;
}

}  // namespace dlarray
