/*!
 * \file blas.h
 * \brief The CBLAS that matrix_multiply calls, and what it says about itself. With scipy-openblas32
 *        (PyPI's OpenBLAS, the one NumPy ships) every symbol carries the prefix "scipy_";
 *        DLARRAY_BLAS(name) gives the name to call either way.
 */
#ifndef DLARRAY_BACKENDS_CPU_BLAS_H_
#define DLARRAY_BACKENDS_CPU_BLAS_H_

#include <string>

#ifdef DLARRAY_HAVE_CBLAS
#include <cblas.h>
#ifdef DLARRAY_BLAS_PREFIX_SCIPY
#define DLARRAY_BLAS(name) scipy_##name
#else
#define DLARRAY_BLAS(name) name
#endif
#endif

namespace dlarray::cpu {

/*! \brief The BLAS behind matrix_multiply, as show_config reports it. */
struct BlasInfo {
  std::string name;     //!< "scipy-openblas32 0.3.34...", a system library's file name, or "none"
  std::string path;     //!< the library file loaded in this process ("" without a BLAS)
  std::string version;  //!< OpenBLAS's configuration line (version, build options) or ""
  std::string core;     //!< the kernel OpenBLAS picked for this CPU (e.g. "SkylakeX") or ""
  int threads = 0;      //!< threads of the BLAS's own pool (1: our threads split products)
};

/*! \brief What the linked BLAS says about itself (0 / "" for what it cannot tell). */
BlasInfo GetBlasInfo();

/*!
 * \brief Makes the BLAS's own pool single-threaded (once): matrix_multiply cuts products into
 *        slabs that the backend's threads compute (see matrix_multiply.cc).
 */
void SingleThreadedBlas();

}  // namespace dlarray::cpu

#endif  // DLARRAY_BACKENDS_CPU_BLAS_H_
