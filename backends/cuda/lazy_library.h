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

/*! \brief fn = the library's symbol `name` (null when absent; a required one is then noted in
 *         missing()). */
template <typename Fn>
void Bind(LazyLibrary& lib, Fn& fn, const char* name, bool required = true) {
  fn = reinterpret_cast<Fn>(lib.Symbol(name, required));
}

/*!
 * \brief Where a CUDA toolkit library lib<stem>.so.<major of the toolkit this plugin was built
 *        with> may be: only $env_var when it is set; else that name for the loader's search,
 *        NVIDIA's wheel folder beside the installed package (site-packages/nvidia/cu<major>/lib),
 *        the build's toolkit folder, then lib<stem>.so.
 */
std::vector<std::string> ToolkitLibraryCandidates(const char* env_var, const std::string& stem);

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_LAZY_LIBRARY_H_
