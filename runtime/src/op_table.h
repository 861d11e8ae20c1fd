// The table of declared ops and of the kernels registered for (op, device type). Reads on the hot
// path are lock-free; writes (plugin loading) take a mutex and publish with release stores.
#ifndef DLARRAY_RUNTIME_SRC_OP_TABLE_H_
#define DLARRAY_RUNTIME_SRC_OP_TABLE_H_

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "dlarray/dlarray.h"
#include "dlarray/kernel.h"

namespace dlarray {

/*! \brief What one plugin declared and registered, applied all at once or not at all. */
class StagingRegistry final : public Registry {
 public:
  void declare_op(const OpSchema& schema) override;
  void register_kernel(const std::string& op, int device_type, KernelFn fn) override;

  struct KernelEntry {
    std::string op;
    int device_type;
    KernelFn fn;
  };
  std::vector<OpSchema> declared;
  std::vector<KernelEntry> kernels;
};

class OpTable {
 public:
  static constexpr int kMaxOps = 1024;

  OpTable();
  int Find(const std::string& name) const;
  int size() const { return num_ops_.load(std::memory_order_acquire); }
  const OpSchema& schema(int op) const { return *schemas_[op]; }
  KernelFn kernel(int op, int device_type) const {
    return kernels_[op][device_type].load(std::memory_order_acquire);
  }
  /*! \brief Applies a plugin's staging registry; throws (and changes nothing) on any conflict. */
  void Commit(const StagingRegistry& staged, const std::string& plugin_name);
  std::vector<std::string> Names() const;

 private:
  int AddLocked(const OpSchema& schema);
  mutable std::mutex mu_;
  std::unordered_map<std::string, int> ids_;
  std::array<std::unique_ptr<OpSchema>, kMaxOps> schemas_;
  std::map<std::pair<int, int>, std::string> owners_;  // (op, device type) -> plugin name
  std::array<std::array<std::atomic<KernelFn>, DLARRAY_MAX_DEVICE_TYPES>, kMaxOps> kernels_{};
  std::atomic<int> num_ops_{0};
};

}  // namespace dlarray

#endif  // DLARRAY_RUNTIME_SRC_OP_TABLE_H_
