/*!
 * \file linalg_lapack.cc
 * \brief Finds the LAPACK routines (linalg_lapack.h) with dlsym, once per process.
 */
#include "linalg_lapack.h"

#include <dlfcn.h>

#include <string>
#include <vector>

#include "blas.h"
#include "dlarray/errors.h"

namespace dlarray::cpu {
namespace {

// The libraries to search, with the prefix of their symbols, in order.
struct Candidate {
  void* handle;
  std::string prefix;
  std::string name;
};

std::vector<Candidate> Candidates() {
  std::vector<Candidate> out;
#ifdef DLARRAY_HAVE_CBLAS
  // The BLAS the plugin is linked to is loaded already: RTLD_NOLOAD gives its handle.
  Dl_info where;
  if (dladdr(reinterpret_cast<void*>(&DLARRAY_BLAS(cblas_sgemm)), &where) != 0 &&
      where.dli_fname != nullptr) {
    if (void* h = dlopen(where.dli_fname, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD)) {
#ifdef DLARRAY_BLAS_PREFIX_SCIPY
      out.push_back({h, "scipy_", where.dli_fname});
#else
      out.push_back({h, "", where.dli_fname});
#endif
    }
  }
#endif
  for (const char* name : {"liblapack.so.3", "liblapack.so"}) {
    if (void* h = dlopen(name, RTLD_LAZY | RTLD_LOCAL)) {
      out.push_back({h, "", name});
      break;
    }
  }
  return out;
}

template <typename Fn>
void Find(const Candidate& lib, char type, const char* routine, Fn* fn) {
  const std::string symbol = lib.prefix + type + routine + "_";
  *fn = reinterpret_cast<Fn>(dlsym(lib.handle, symbol.c_str()));
}

// The type letter of LAPACK's names for T.
template <typename T>
constexpr char kTypeLetter = kIsComplex<T> ? (sizeof(Real<T>) == 4 ? 'c' : 'z')
                                           : (sizeof(T) == 4 ? 's' : 'd');

template <typename T>
bool Load(const Candidate& lib, LapackRoutines<T>* r) {
  const char t = kTypeLetter<T>;
  Find(lib, t, "getrf", &r->getrf);
  Find(lib, t, "getrs", &r->getrs);
  Find(lib, t, "potrf", &r->potrf);
  Find(lib, t, "geqrf", &r->geqrf);
  bool drivers = false;  // the pair of each form that T has
  if constexpr (kIsComplex<T>) {
    Find(lib, t, "heevd", &r->heevd);
    Find(lib, t, "gesdd", &r->gesdd_complex);
    Find(lib, t, "ungqr", &r->orgqr);
    drivers = r->heevd && r->gesdd_complex;
  } else {
    Find(lib, t, "syevd", &r->syevd);
    Find(lib, t, "gesdd", &r->gesdd);
    Find(lib, t, "orgqr", &r->orgqr);
    drivers = r->syevd && r->gesdd;
  }
  const std::string threads = lib.prefix + "openblas_set_num_threads";
  r->set_threads = reinterpret_cast<void (*)(int)>(dlsym(lib.handle, threads.c_str()));
  return drivers && r->getrf && r->getrs && r->potrf && r->geqrf && r->orgqr;
}

template <typename T>
struct Found {
  LapackRoutines<T> routines{};
  std::string error;  // empty: found
};

template <typename T>
Found<T> Search() {
  Found<T> f;
  std::string tried;
  for (const Candidate& lib : Candidates()) {
    if (Load(lib, &f.routines)) return f;
    tried += (tried.empty() ? "" : ", ") + lib.name;
  }
  f.error = "linalg on cpu needs LAPACK: no library has its routines (" +
            (tried.empty() ? std::string("no BLAS is linked and liblapack.so.3 did not load")
                           : "searched " + tried + " and liblapack.so.3") +
            "); install scipy-openblas32 or a system OpenBLAS/LAPACK and rebuild";
  return f;
}

}  // namespace

template <typename T>
const LapackRoutines<T>& Lapack() {
  static const Found<T> found = Search<T>();
  if (!found.error.empty()) throw BackendError(found.error);
  return found.routines;
}

template const LapackRoutines<float>& Lapack<float>();
template const LapackRoutines<double>& Lapack<double>();
template const LapackRoutines<std::complex<float>>& Lapack<std::complex<float>>();
template const LapackRoutines<std::complex<double>>& Lapack<std::complex<double>>();

}  // namespace dlarray::cpu
