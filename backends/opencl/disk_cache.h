/*!
 * \file disk_cache.h
 * \brief dlarray's shared on-disk cache (python/dlarray/_cache.py) in C++, with the same layout
 *        and rules, for the compiled OpenCL programs.
 *
 * Layout: CacheDir() / <namespace> / <key> / <files>. CacheDir() is $DLARRAY_CACHE_DIR, else
 * ~/.cache/dlarray. A key is MakeKey(parts): the first 32 hex digits of a SHA-256 over each part's
 * JSON text (as Python's json.dumps writes a string) preceded by its length as 8 little-endian
 * bytes, so _cache.make_key(*parts) gives the same key. Files are written under a temporary name
 * and renamed into place, each with a "<name>.sha256" manifest holding its digest; a file whose
 * digest does not match is removed and reads as absent. An entry folder is locked (flock on its
 * .lock file) while it is built, so concurrent builders of one entry build once.
 */
#ifndef DLARRAY_BACKENDS_OPENCL_DISK_CACHE_H_
#define DLARRAY_BACKENDS_OPENCL_DISK_CACHE_H_

#include <optional>
#include <string>
#include <vector>

namespace dlarray::opencl::disk_cache {

/*! \brief The cache's root, created on demand; throws BackendError naming the folder when it
 *         cannot be created (and DLARRAY_CACHE_DIR, the variable to set). */
std::string CacheDir();

/*! \brief A string as Python's json.dumps writes it (ensure_ascii: \uXXXX beyond ASCII). */
std::string JsonString(const std::string& utf8);

/*! \brief The key of parts (strings): equal to dlarray._cache.make_key(*parts). */
std::string MakeKey(const std::vector<std::string>& parts);

/*! \brief The folder of one entry, created. */
std::string EntryDir(const std::string& ns, const std::string& key);

/*! \brief An exclusive lock on a folder (flock on folder/.lock), released when destroyed. */
class FolderLock {
 public:
  explicit FolderLock(const std::string& folder);
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_ = -1;
};

/*! \brief Writes data to path atomically, then its checksum manifest; throws BackendError. */
void StoreBytes(const std::string& path, const std::string& data);

/*! \brief The bytes of path when they match the manifest; otherwise removes both and returns
 *         nothing (a missing, truncated or corrupt file). */
std::optional<std::string> LoadBytes(const std::string& path);

}  // namespace dlarray::opencl::disk_cache

#endif  // DLARRAY_BACKENDS_OPENCL_DISK_CACHE_H_
