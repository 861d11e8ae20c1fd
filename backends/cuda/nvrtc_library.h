/*!
 * \file nvrtc_library.h
 * \brief NVRTC, loaded with dlopen on first use: the CUDA plugin does not link it.
 */
#ifndef DLARRAY_BACKENDS_CUDA_NVRTC_LIBRARY_H_
#define DLARRAY_BACKENDS_CUDA_NVRTC_LIBRARY_H_

#include <nvrtc.h>

#include <string>
#include <vector>

namespace dlarray {
namespace cuda {

/*! \brief The NVRTC functions dlarray.rtc uses, and what is known about the library. */
struct NvrtcLibrary {
  /*! \brief Loads NVRTC once (thread-safe), from $DLARRAY_NVRTC or the places
   *         ToolkitLibraryCandidates (lazy_library.h) lists. */
  static const NvrtcLibrary& Get();

  bool ok = false;     //!< every function below is set
  std::string reason;  //!< why not ok
  std::string path;    //!< the file loaded
  int major = 0;       //!< nvrtcVersion
  int minor = 0;
  std::vector<int> archs;  //!< nvrtcGetSupportedArchs, ascending

  decltype(&nvrtcGetErrorString) GetErrorString = nullptr;
  decltype(&nvrtcVersion) Version = nullptr;
  decltype(&nvrtcGetNumSupportedArchs) GetNumSupportedArchs = nullptr;
  decltype(&nvrtcGetSupportedArchs) GetSupportedArchs = nullptr;
  decltype(&nvrtcCreateProgram) CreateProgram = nullptr;
  decltype(&nvrtcDestroyProgram) DestroyProgram = nullptr;
  decltype(&nvrtcCompileProgram) CompileProgram = nullptr;
  decltype(&nvrtcGetPTXSize) GetPTXSize = nullptr;
  decltype(&nvrtcGetPTX) GetPTX = nullptr;
  decltype(&nvrtcGetCUBINSize) GetCUBINSize = nullptr;
  decltype(&nvrtcGetCUBIN) GetCUBIN = nullptr;
  decltype(&nvrtcGetProgramLogSize) GetProgramLogSize = nullptr;
  decltype(&nvrtcGetProgramLog) GetProgramLog = nullptr;
  decltype(&nvrtcAddNameExpression) AddNameExpression = nullptr;
  decltype(&nvrtcGetLoweredName) GetLoweredName = nullptr;

  /*! \brief "NVRTC_ERROR_X" for a result. */
  std::string ErrorText(nvrtcResult r) const;

 private:
  NvrtcLibrary();
};

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_NVRTC_LIBRARY_H_
