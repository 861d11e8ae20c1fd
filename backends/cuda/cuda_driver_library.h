/*!
 * \file cuda_driver_library.h
 * \brief The CUDA driver API (libcuda.so.1), loaded with dlopen on first use: modules and launches
 *        of dlarray.rtc. The plugin does not link it (the CUDA runtime finds the driver itself).
 */
#ifndef DLARRAY_BACKENDS_CUDA_CUDA_DRIVER_LIBRARY_H_
#define DLARRAY_BACKENDS_CUDA_CUDA_DRIVER_LIBRARY_H_

#include <cuda.h>

#include <string>

namespace dlarray {
namespace cuda {

/*! \brief The driver functions dlarray.rtc uses. */
struct CudaDriverLibrary {
  /*! \brief Loads libcuda.so.1 once (thread-safe). */
  static const CudaDriverLibrary& Get();

  bool ok = false;     //!< every required function below is set
  std::string reason;  //!< why not ok

  decltype(&cuGetErrorName) GetErrorName = nullptr;
  decltype(&cuGetErrorString) GetErrorString = nullptr;
  decltype(&cuCtxGetCurrent) CtxGetCurrent = nullptr;
  decltype(&cuModuleLoadData) ModuleLoadData = nullptr;
  decltype(&cuModuleLoadDataEx) ModuleLoadDataEx = nullptr;
  decltype(&cuModuleUnload) ModuleUnload = nullptr;
  decltype(&cuModuleGetFunction) ModuleGetFunction = nullptr;
  decltype(&cuFuncGetAttribute) FuncGetAttribute = nullptr;
  decltype(&cuFuncSetAttribute) FuncSetAttribute = nullptr;
  decltype(&cuLaunchKernel) LaunchKernel = nullptr;
  /*! \brief cuFuncGetParamCount: CUDA 13.1 drivers and newer (declared here: older headers lack
   *         it); null before. */
  CUresult (*FuncGetParamCount)(CUfunction, size_t*) = nullptr;

  /*! \brief "CUDA_ERROR_X (description)" for a result. */
  std::string ErrorText(CUresult r) const;

 private:
  CudaDriverLibrary();
};

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_CUDA_DRIVER_LIBRARY_H_
