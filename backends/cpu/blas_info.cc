/*!
 * \file blas_info.cc
 * \brief GetBlasInfo: the BLAS's name, file, version line, kernel and thread count.
 */
#include <dlfcn.h>

#include "blas.h"

namespace dlarray::cpu {

void SingleThreadedBlas() {
#ifdef DLARRAY_HAVE_OPENBLAS
  static const bool done = [] {
    DLARRAY_BLAS(openblas_set_num_threads)(1);
    return true;
  }();
  (void)done;
#endif
}

BlasInfo GetBlasInfo() {
  BlasInfo info;
#ifdef DLARRAY_HAVE_CBLAS
  info.name = DLARRAY_BLAS_NAME;
  Dl_info where;
  if (dladdr(reinterpret_cast<void*>(&DLARRAY_BLAS(cblas_sgemm)), &where) != 0 &&
      where.dli_fname != nullptr) {
    info.path = where.dli_fname;
  }
#ifdef DLARRAY_HAVE_OPENBLAS
  SingleThreadedBlas();
  if (const char* config = DLARRAY_BLAS(openblas_get_config)()) info.version = config;
  if (const char* core = DLARRAY_BLAS(openblas_get_corename)()) info.core = core;
  info.threads = DLARRAY_BLAS(openblas_get_num_threads)();
#endif
#else
  info.name = "none";
#endif
  while (!info.version.empty() && info.version.back() == ' ') info.version.pop_back();
  while (!info.version.empty() && info.version.front() == ' ') info.version.erase(0, 1);
  return info;
}

}  // namespace dlarray::cpu
