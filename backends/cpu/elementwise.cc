/*!
 * \file elementwise.cc
 * \brief When elementwise kernels switch to non-temporal stores.
 */
#include "elementwise.h"

#include <unistd.h>

namespace dlarray::cpu {

int64_t StreamingStoreBytes() {
  // An output larger than half the last-level cache would be evicted before anyone reads it, so
  // writing it around the caches saves the read-for-ownership of every line.
  static const int64_t bytes = [] { return int64_t{8} << 20; }();
  return bytes;
}

}  // namespace dlarray::cpu
