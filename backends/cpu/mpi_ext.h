/*!
 * \file mpi_ext.h
 * \brief The CPU plugin's "dlarray.mpi.v1" extension (dlarray/ext/mpi.h).
 */
#ifndef DLARRAY_BACKENDS_CPU_MPI_EXT_H_
#define DLARRAY_BACKENDS_CPU_MPI_EXT_H_

#include "dlarray/ext/mpi.h"

namespace dlarray::cpu {

/*! \brief The extension's table (one per process); failures go to the core's set_error. MPI
 *         itself is opened at the first call that needs it, not here. */
const DLArrayMpiExtV1* MpiExtension();

}  // namespace dlarray::cpu

#endif  // DLARRAY_BACKENDS_CPU_MPI_EXT_H_
