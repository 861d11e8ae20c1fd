// The factorization primitives of dlarray.linalg (docs/linalg.md): their schemas and shape rules.
#ifndef DLARRAY_RUNTIME_SRC_LINALG_OPS_H_
#define DLARRAY_RUNTIME_SRC_LINALG_OPS_H_

#include "dlarray/plugin_api.h"

namespace dlarray {

/*! \brief Declares linalg_lu, linalg_solve, linalg_cholesky, linalg_eigh, linalg_svd, linalg_qr. */
void DeclareLinalgOps(DLArrayRegistry* registry);

}  // namespace dlarray

#endif  // DLARRAY_RUNTIME_SRC_LINALG_OPS_H_
