/*!
 * \file graph_ext.h
 * \brief The CUDA plugin's "dlarray.graph.v1" table (dlarray/ext/graph.h): CUDA graphs recorded
 *        from the device's stream and replayed on it.
 */
#ifndef DLARRAY_BACKENDS_CUDA_GRAPH_EXT_H_
#define DLARRAY_BACKENDS_CUDA_GRAPH_EXT_H_

namespace dlarray {
namespace cuda {

class CudaDevice;

/*! \brief The DLArrayGraphExtV1 table, serving the GPUs of device. */
const void* GraphExtension(CudaDevice* device);

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_GRAPH_EXT_H_
