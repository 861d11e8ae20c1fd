// How many parameters a kernel of a compiled module takes, read from the module's own code: the
// CUDA 13.0 driver has no call that says so without an API error (cuFuncGetParamInfo fails past
// the last parameter, which compute-sanitizer reports), and newer drivers' cuFuncGetParamCount may
// be absent. Pure host code, no GPU: tested on cubins and PTX that nvcc makes at build time.
#ifndef DLARRAY_BACKENDS_CUDA_KERNEL_PARAMS_H_
#define DLARRAY_BACKENDS_CUDA_KERNEL_PARAMS_H_

#include <cstddef>
#include <string>

namespace dlarray {
namespace cuda {

/*! \brief Parameters of kernel `name` in a cubin (an ELF image), from its per-kernel
 *         ".nv.info.<name>" records; -1 when the image cannot tell (not an ELF, no such kernel). */
int CubinParamCount(const void* image, size_t size, const std::string& name);

/*! \brief Parameters of the `.entry name(...)` of PTX text; -1 when it has no such entry. */
int PtxParamCount(const std::string& ptx, const std::string& name);

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_KERNEL_PARAMS_H_
