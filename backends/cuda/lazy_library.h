/*!
 * \file lazy_library.h
 * \brief A shared library opened with dlopen on first use (NVRTC, the CUDA driver), so that the
 *        plugin loads and serves its ops where the library is missing.
 */
#ifndef DLARRAY_BACKENDS_CUDA_LAZY_LIBRARY_H_
#define DLARRAY_BACKENDS_CUDA_LAZY_LIBRARY_H_

#include <string>
#include <vector>

namespace dlarray {
namespace cuda {

/*! \brief An opened library (never closed: its functions may be in use until the process exits). */
class LazyLibrary {
 public:
  /*!
   * \brief Opens the first of candidates that loads (names for the loader's search, or paths).
   *        On failure handle() is null and error() lists each candidate with dlerror's text.
   */
  explicit LazyLibrary(const std::vector<std::string>& candidates);

  void* handle() const { return handle_; }
  const std::string& error() const { return error_; }
  /*! \brief The file that was opened (resolved), or the candidate's name when unknown. */
  const std::string& path() const { return path_; }

  /*! \brief The symbol's address, or null when the library lacks it (noted in missing() when
   *         the symbol is required). */
  void* Symbol(const char* name, bool required = true);
  /*! \brief The required symbols Symbol() did not find, comma-separated. */
  const std::string& missing() const { return missing_; }

 private:
  void* handle_ = nullptr;
  std::string error_;
  std::string path_;
  std::string missing_;
  bool resolved_ = false;
};

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_LAZY_LIBRARY_H_
