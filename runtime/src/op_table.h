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
#include "dlarray/plugin_api.h"
#include "dlarray/runtime.h"

struct DLArrayRegistry {
  virtual ~DLArrayRegistry() = default;
};

namespace dlarray {

/*! \brief A registered kernel: the plugin's function, its data, and who registered it. */
struct KernelEntry {
  DLArrayKernelFn fn;
  void* data;
  std::string plugin;
};

/*! \brief What one plugin declared and registered, applied all at once or not at all. */
class StagingRegistry final : public DLArrayRegistry {
 public:
  explicit StagingRegistry(std::string plugin) : plugin_(std::move(plugin)) {}
  /*! \brief Copies and checks a C declaration; throws on a bad one or a conflicting twin. */
  void DeclareOp(const DLArrayOpSchema* schema);
  /*! \brief Records a kernel; throws on bad arguments. */
  void RegisterKernel(const char* op, int32_t device_type, DLArrayKernelFn fn, void* data);

  struct Kernel {
    std::string op;
    int device_type;
    DLArrayKernelFn fn;
    void* data;
  };
  std::vector<OpInfo> declared;
  std::vector<Kernel> kernels;
  const std::string& plugin() const { return plugin_; }

 private:
  std::string plugin_;
};

class OpTable {
 public:
  static constexpr int kMaxOps = 1024;

  OpTable();
  int Find(const std::string& name) const;
  int size() const { return num_ops_.load(std::memory_order_acquire); }
  const OpInfo& info(int op) const { return *ops_[op]; }
  const KernelEntry* kernel(int op, int device_type) const {
    return kernels_[op][device_type].load(std::memory_order_acquire);
  }
  /*! \brief Applies a plugin's staging registry; throws (and changes nothing) on any conflict. */
  void Commit(const StagingRegistry& staged);
  std::vector<std::string> Names() const;

 private:
  int AddLocked(const OpInfo& op);
  mutable std::mutex mu_;
  std::unordered_map<std::string, int> ids_;
  std::array<std::unique_ptr<OpInfo>, kMaxOps> ops_;
  std::array<std::array<std::atomic<const KernelEntry*>, DLARRAY_MAX_DEVICE_TYPES>, kMaxOps>
      kernels_{};
  std::atomic<int> num_ops_{0};
};

/*! \brief Whether two declarations of one op agree (counts, attributes, dtypes). */
bool SameSignature(const OpInfo& a, const OpInfo& b);

}  // namespace dlarray

#endif  // DLARRAY_RUNTIME_SRC_OP_TABLE_H_
