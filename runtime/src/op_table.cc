#include "op_table.h"

#include <set>
#include <utility>

#include "core_ops.h"
#include "dlarray/errors.h"
#include "dlarray/runtime.h"

namespace dlarray {

void StagingRegistry::declare_op(const OpSchema& schema) {
  if (schema.name.empty()) throw BackendError("declare_op: the op has no name");
  if (schema.num_inputs < 0 || schema.num_outputs < 1 || schema.num_inputs > 16 ||
      schema.num_outputs > 16) {
    throw BackendError("declare_op(" + schema.name + "): needs 0..16 inputs and 1..16 outputs");
  }
  declared.push_back(schema);
}

void StagingRegistry::register_kernel(const std::string& op, int device_type, KernelFn fn) {
  if (fn == nullptr) throw BackendError("register_kernel(" + op + "): the kernel is null");
  if (device_type <= 0 || device_type >= DLARRAY_MAX_DEVICE_TYPES) {
    throw BackendError("register_kernel(" + op + "): device type " + std::to_string(device_type) +
                       " is out of range");
  }
  kernels.push_back({op, device_type, fn});
}

OpTable::OpTable() {
  for (const OpSchema& s : CoreOpSchemas()) AddLocked(s);
}

int OpTable::AddLocked(const OpSchema& schema) {
  int id = num_ops_.load(std::memory_order_relaxed);
  if (id >= kMaxOps)
    throw BackendError("too many ops declared (limit " + std::to_string(kMaxOps) + ")");
  auto s = std::make_unique<OpSchema>(schema);
  if (s->validate == nullptr) s->validate = &ValidateSameShape;
  schemas_[id] = std::move(s);
  ids_[schema.name] = id;
  num_ops_.store(id + 1, std::memory_order_release);
  return id;
}

int OpTable::Find(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = ids_.find(name);
  return it == ids_.end() ? -1 : it->second;
}

std::vector<std::string> OpTable::Names() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> names;
  for (int i = 0; i < size(); ++i) names.push_back(schemas_[i]->name);
  return names;
}

namespace {
bool SameSignature(const OpSchema& a, const OpSchema& b) {
  return a.num_inputs == b.num_inputs && a.num_outputs == b.num_outputs &&
         a.attr_names == b.attr_names;
}
}  // namespace

void OpTable::Commit(const StagingRegistry& staged, const std::string& plugin_name) {
  std::lock_guard<std::mutex> lock(mu_);
  // Check everything first, so a conflict leaves the table untouched.
  std::set<std::string> new_ops;
  for (const OpSchema& s : staged.declared) {
    auto it = ids_.find(s.name);
    if (it != ids_.end() && !SameSignature(*schemas_[it->second], s)) {
      throw BackendError("op '" + s.name + "' is already declared with another signature");
    }
    if (it == ids_.end()) new_ops.insert(s.name);
  }
  std::set<std::pair<std::string, int>> seen;
  for (const auto& k : staged.kernels) {
    auto it = ids_.find(k.op);
    if (it == ids_.end() && !new_ops.count(k.op)) {
      throw BackendError("register_kernel: op '" + k.op + "' is not declared (declare_op first)");
    }
    if (!seen.insert({k.op, k.device_type}).second) {
      throw BackendError("register_kernel: op '" + k.op + "' on " + DeviceTypeName(k.device_type) +
                         " is registered twice");
    }
    if (it != ids_.end() && kernels_[it->second][k.device_type].load() != nullptr) {
      throw BackendError("register_kernel: op '" + k.op + "' on " + DeviceTypeName(k.device_type) +
                         " already has a kernel (from plugin '" +
                         owners_[{it->second, k.device_type}] + "')");
    }
  }
  if (size() + static_cast<int>(new_ops.size()) > kMaxOps) {
    throw BackendError("too many ops declared (limit " + std::to_string(kMaxOps) + ")");
  }
  for (const OpSchema& s : staged.declared) {
    if (!ids_.count(s.name)) AddLocked(s);
  }
  for (const auto& k : staged.kernels) {
    int id = ids_.at(k.op);
    owners_[{id, k.device_type}] = plugin_name;
    kernels_[id][k.device_type].store(k.fn, std::memory_order_release);
  }
}

}  // namespace dlarray
