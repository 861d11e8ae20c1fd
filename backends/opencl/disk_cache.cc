/*!
 * \file disk_cache.cc
 * \brief The on-disk cache (see disk_cache.h and python/dlarray/_cache.py).
 */
#include "disk_cache.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "dlarray/errors.h"
#include "sha256.h"

namespace dlarray::opencl::disk_cache {
namespace {

const char kManifest[] = ".sha256";

std::string HomeDir() {
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') return home;
  const struct passwd* pw = getpwuid(getuid());
  return pw != nullptr && pw->pw_dir != nullptr ? pw->pw_dir : "";
}

// mkdir -p; returns errno of the first failure, or 0.
int MakeDirs(const std::string& path) {
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    partial = path.substr(0, pos);
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), 0777) != 0 && errno != EEXIST) return errno;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno;
  return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

std::string Expanded(const std::string& path) {
  if (path == "~" || path.rfind("~/", 0) == 0) return HomeDir() + path.substr(1);
  return path;
}

void Append(std::string& out, unsigned code) {
  char text[8];
  std::snprintf(text, sizeof(text), "\\u%04x", code);
  out += text;
}

// Decodes one UTF-8 sequence at s[i]; returns the code point and advances i, or -1 (invalid).
long DecodeUtf8(const std::string& s, size_t& i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  int len = c >= 0xf0 && c < 0xf8 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
  if (len == 0 || i + len > s.size()) return -1;
  long code = c & (0x7f >> len);
  for (int k = 1; k < len; ++k) {
    const unsigned char cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xc0) != 0x80) return -1;
    code = code << 6 | (cc & 0x3f);
  }
  i += len;
  return code;
}

void WriteAll(int fd, const std::string& data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw BackendError("dlarray cache: cannot write " + path + ": " + std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
}

// Writes data under a temporary name in dest's folder, then renames it to dest.
void AtomicWrite(const std::string& dest, const std::string& data) {
  const size_t slash = dest.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : dest.substr(0, slash);
  const std::string name = slash == std::string::npos ? dest : dest.substr(slash + 1);
  std::string tmp = dir + "/." + name + ".tmpXXXXXX";
  const int fd = ::mkstemp(&tmp[0]);
  if (fd < 0) {
    throw BackendError("dlarray cache: cannot create a file in " + dir + ": " +
                       std::strerror(errno));
  }
  try {
    WriteAll(fd, data, tmp);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0 || ::rename(tmp.c_str(), dest.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw BackendError("dlarray cache: cannot write " + dest + ": " + std::strerror(err));
  }
}

bool ReadFile(const std::string& path, std::string* out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  out->clear();
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    out->append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return true;
}

std::string Trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

}  // namespace

std::string CacheDir() {
  const char* env = std::getenv("DLARRAY_CACHE_DIR");
  std::string path = env != nullptr && *env != '\0' ? Expanded(env) : HomeDir() + "/.cache/dlarray";
  const int err = MakeDirs(path);
  if (err != 0) {
    throw BackendError("dlarray cannot create its cache folder " + path + " (" +
                       std::strerror(err) + "); set DLARRAY_CACHE_DIR to a writable folder");
  }
  return path;
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      size_t j = i;
      const long code = DecodeUtf8(s, j);
      if (code < 0) {  // not UTF-8: each byte as the Latin-1 character
        Append(out, c);
        ++i;
      } else if (code > 0xffff) {
        const long v = code - 0x10000;
        Append(out, static_cast<unsigned>(0xd800 + (v >> 10)));
        Append(out, static_cast<unsigned>(0xdc00 + (v & 0x3ff)));
        i = j;
      } else {
        Append(out, static_cast<unsigned>(code));
        i = j;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          Append(out, c);
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  return out + "\"";
}

std::string MakeKey(const std::vector<std::string>& parts) {
  Sha256 h;
  for (const std::string& part : parts) {
    const std::string data = JsonString(part);
    uint8_t len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<uint8_t>(uint64_t{data.size()} >> (8 * i));
    h.update(len, 8);
    h.update(data);
  }
  return h.hexdigest().substr(0, 32);
}

std::string EntryDir(const std::string& ns, const std::string& key) {
  const std::string path = CacheDir() + "/" + ns + "/" + key;
  const int err = MakeDirs(path);
  if (err != 0) {
    throw BackendError("dlarray cache: cannot create " + path + ": " + std::strerror(err));
  }
  return path;
}

FolderLock::FolderLock(const std::string& folder) {
  const std::string path = folder + "/.lock";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    throw BackendError("dlarray cache: cannot open " + path + ": " + std::strerror(errno));
  }
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno != EINTR) {
      const int err = errno;
      ::close(fd_);
      throw BackendError("dlarray cache: cannot lock " + path + ": " + std::strerror(err));
    }
  }
}

FolderLock::~FolderLock() {
  if (fd_ >= 0) {
    (void)::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
}

void StoreBytes(const std::string& path, const std::string& data) {
  AtomicWrite(path, data);
  AtomicWrite(path + kManifest, Sha256Hex(data));
}

std::optional<std::string> LoadBytes(const std::string& path) {
  std::string manifest;
  std::string data;
  if (ReadFile(path + kManifest, &manifest) && ReadFile(path, &data) &&
      Sha256Hex(data) == Trimmed(manifest)) {
    return data;
  }
  ::unlink(path.c_str());
  ::unlink((path + kManifest).c_str());
  return std::nullopt;
}

}  // namespace dlarray::opencl::disk_cache
