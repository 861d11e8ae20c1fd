#include "kernel_params.h"

#include <cstdint>
#include <cstring>

namespace dlarray {
namespace cuda {
namespace {

// ELF64 little-endian fields, read by offset (the image may be unaligned).
template <typename T>
bool Read(const unsigned char* base, size_t size, uint64_t offset, T* out) {
  if (offset > size || size - offset < sizeof(T)) return false;
  std::memcpy(out, base + offset, sizeof(T));
  return true;
}

// Counts the EIATTR_KPARAM_INFO records of one ".nv.info.<kernel>" section: one record per
// parameter. Records are a format byte, an attribute byte, then for EIFMT_SVAL (4) a 16-bit
// payload size and the payload; the other formats carry a 16-bit value (4 bytes in all).
int CountParamRecords(const unsigned char* p, uint64_t n) {
  constexpr unsigned char kFormatSized = 0x04;
  constexpr unsigned char kAttrParamInfo = 0x17;
  int count = 0;
  uint64_t at = 0;
  while (at + 4 <= n) {
    const unsigned char format = p[at];
    const unsigned char attr = p[at + 1];
    if (format < 0x01 || format > 0x04) return -1;  // not a record stream we know
    uint64_t length = 4;
    if (format == kFormatSized) {
      length += static_cast<uint64_t>(p[at + 2]) | static_cast<uint64_t>(p[at + 3]) << 8;
      if (attr == kAttrParamInfo) ++count;
    }
    at += length;
  }
  return at == n ? count : -1;
}

}  // namespace

int CubinParamCount(const void* image, size_t size, const std::string& name) {
  const auto* base = static_cast<const unsigned char*>(image);
  const unsigned char kMagic[] = {0x7f, 'E', 'L', 'F', 2 /* 64-bit */, 1 /* little-endian */};
  if (image == nullptr || size < 64 || std::memcmp(base, kMagic, sizeof kMagic) != 0) return -1;
  uint64_t shoff = 0;
  uint16_t shentsize = 0, shnum = 0, shstrndx = 0;
  if (!Read(base, size, 0x28, &shoff) || !Read(base, size, 0x3a, &shentsize) ||
      !Read(base, size, 0x3c, &shnum) || !Read(base, size, 0x3e, &shstrndx) || shentsize < 64 ||
      shstrndx >= shnum || shoff > size ||
      (size - shoff) / shentsize < shnum) {  // the section table lies inside the image
    return -1;
  }
  auto section = [&](uint16_t i, uint32_t* name_at, uint64_t* offset, uint64_t* bytes) {
    const uint64_t h = shoff + static_cast<uint64_t>(i) * shentsize;
    return Read(base, size, h, name_at) && Read(base, size, h + 0x18, offset) &&
           Read(base, size, h + 0x20, bytes) && *offset <= size && *bytes <= size - *offset;
  };
  uint32_t unused = 0;
  uint64_t names = 0, names_bytes = 0;
  if (!section(shstrndx, &unused, &names, &names_bytes)) return -1;
  const std::string wanted = ".nv.info." + name;
  for (uint16_t i = 0; i < shnum; ++i) {
    uint32_t name_at = 0;
    uint64_t offset = 0, bytes = 0;
    if (!section(i, &name_at, &offset, &bytes) || name_at >= names_bytes) continue;
    const char* s = reinterpret_cast<const char*>(base + names + name_at);
    const size_t room = static_cast<size_t>(names_bytes - name_at);
    if (wanted.size() < room && std::memcmp(s, wanted.c_str(), wanted.size() + 1) == 0) {
      return CountParamRecords(base + offset, bytes);
    }
  }
  return -1;
}

int PtxParamCount(const std::string& ptx, const std::string& name) {
  // ".entry name(" with any blanks between; a longer name that starts the same does not match.
  size_t at = 0;
  while ((at = ptx.find(".entry", at)) != std::string::npos) {
    at += 6;
    size_t p = ptx.find_first_not_of(" \t\r\n", at);
    if (p == std::string::npos || ptx.compare(p, name.size(), name) != 0) continue;
    p = ptx.find_first_not_of(" \t\r\n", p + name.size());
    if (p == std::string::npos || ptx[p] != '(') continue;
    const size_t close = ptx.find(')', p);
    if (close == std::string::npos) return -1;
    int count = 0;
    for (size_t q = ptx.find(".param", p); q < close; q = ptx.find(".param", q + 6)) ++count;
    return count;
  }
  return -1;
}

}  // namespace cuda
}  // namespace dlarray
