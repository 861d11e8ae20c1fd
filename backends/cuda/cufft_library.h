/*!
 * \file cufft_library.h
 * \brief cuFFT, loaded with dlopen at the first FFT on a GPU (as cuBLAS is, cublas_library.h):
 *        the CUDA plugin does not link it, so importing dlarray maps none of it.
 */
#ifndef DLARRAY_BACKENDS_CUDA_CUFFT_LIBRARY_H_
#define DLARRAY_BACKENDS_CUDA_CUFFT_LIBRARY_H_

#include <cufft.h>
#include <cufftXt.h>

#include <string>

namespace dlarray {
namespace cuda {

/*! \brief The cuFFT functions the plugin uses, and what is known about the library. */
struct CufftLibrary {
  /*! \brief Loads cuFFT once (thread-safe), from $DLARRAY_CUFFT, libcufft.so.<the major version
   *         of the cufft.h this plugin was built with>, NVIDIA's wheel folder or the toolkit. */
  static const CufftLibrary& Get();
  /*! \brief Get(), or a BackendError saying why cuFFT cannot be used and how to get it. */
  static const CufftLibrary& Require();

  bool ok = false;     //!< every function below is set
  std::string reason;  //!< why not ok
  std::string path;    //!< the file loaded

  decltype(&cufftCreate) Create = nullptr;
  decltype(&cufftDestroy) Destroy = nullptr;
  decltype(&cufftSetStream) SetStream = nullptr;
  decltype(&cufftMakePlanMany64) MakePlanMany64 = nullptr;
  decltype(&cufftExecC2C) ExecC2C = nullptr;
  decltype(&cufftExecZ2Z) ExecZ2Z = nullptr;
  decltype(&cufftExecR2C) ExecR2C = nullptr;
  decltype(&cufftExecD2Z) ExecD2Z = nullptr;
  decltype(&cufftExecC2R) ExecC2R = nullptr;
  decltype(&cufftExecZ2D) ExecZ2D = nullptr;

 private:
  CufftLibrary();
};

/*! \brief A cuFFT status's name, e.g. "CUFFT_ALLOC_FAILED". */
const char* CufftStatusName(cufftResult status);

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_CUFFT_LIBRARY_H_
