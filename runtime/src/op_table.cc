#include "op_table.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>
#include <utility>

#include "core_ops.h"
#include "dlarray/errors.h"
#include "linalg_ops.h"

namespace dlarray {
namespace {

[[noreturn]] void Bad(const std::string& what) { throw BackendError(what); }

bool IsIdentifier(const char* s) {
  if (s == nullptr || *s == '\0' || (*s >= '0' && *s <= '9')) return false;
  for (; *s != '\0'; ++s) {
    const char c = *s;
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  }
  return true;
}

std::vector<std::string> Names(const char* const* names, int count, const std::string& op,
                               const char* what) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (int i = 0; i < count; ++i) {
    if (!IsIdentifier(names[i])) {
      Bad("declare_op(" + op + "): " + what + " " + std::to_string(i) +
          " is not a name (letters, digits and _)");
    }
    if (!seen.insert(names[i]).second) {
      Bad("declare_op(" + op + "): " + what + " '" + names[i] + "' appears twice");
    }
    out.emplace_back(names[i]);
  }
  return out;
}

// call_order names every operand and attribute once; a name that may be left out (an output
// of an op with inputs, an attribute with a default) is followed only by such names, so that
// bindings can make it optional.
void ReadCallOrder(const char* const* names, OpInfo* op) {
  std::vector<std::string> all = op->input_names;
  all.insert(all.end(), op->attr_names.begin(), op->attr_names.end());
  all.insert(all.end(), op->output_names.begin(), op->output_names.end());
  const std::string where = "declare_op(" + op->name + "): call_order";
  std::vector<int> order;
  bool optional_seen = false;
  for (size_t k = 0; k < all.size(); ++k) {
    const char* n = names[k];
    const auto it = n != nullptr ? std::find(all.begin(), all.end(), n) : all.end();
    if (it == all.end()) {
      Bad(where + " entry " + std::to_string(k) + " names no input, attribute or output");
    }
    const int index = static_cast<int>(it - all.begin());
    if (std::find(order.begin(), order.end(), index) != order.end()) {
      Bad(where + " names '" + *it + "' twice");
    }
    const int attr = index - op->num_inputs;
    const bool optional =
        (index >= op->num_inputs + static_cast<int>(op->attr_names.size()) && op->num_inputs > 0) ||
        (attr >= 0 && attr < static_cast<int>(op->attr_names.size()) &&
         !std::isnan(op->attr_defaults[attr]));
    if (optional_seen && !optional) {
      Bad(where + ": '" + *it + "' must be given but follows a name that may be left out");
    }
    optional_seen = optional_seen || optional;
    order.push_back(index);
  }
  op->call_order = std::move(order);
}

std::vector<std::string> DefaultNames(const char* base, int count) {
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) out.push_back(i == 0 ? base : base + std::to_string(i));
  return out;
}

// The fields ABI 3.0 appended; a shorter schema leaves their defaults (float attributes without
// defaults, operands alike, compact operands, no fill, inputs-attributes-outputs order).
void ReadAbi3Fields(const DLArrayOpSchema* s, OpInfo* op) {
  const int num_attrs = static_cast<int>(op->attr_names.size());
  op->attr_types.assign(num_attrs, kDLArrayAttrFloat);
  op->attr_defaults.assign(num_attrs, std::nan(""));
  const int total = op->num_inputs + num_attrs + op->num_outputs;
  op->call_order.clear();
  for (int i = 0; i < total; ++i) op->call_order.push_back(i);
  if (!DLARRAY_STRUCT_HAS(s, DLArrayOpSchema, fills_when_empty)) return;
  const std::string where = "declare_op(" + op->name + "): ";
  for (int i = 0; s->attr_types != nullptr && i < num_attrs; ++i) {
    if (s->attr_types[i] < kDLArrayAttrFloat || s->attr_types[i] > kDLArrayAttrInt) {
      Bad(where + "attribute '" + op->attr_names[i] + "' has the unknown type " +
          std::to_string(s->attr_types[i]));
    }
    op->attr_types[i] = static_cast<DLArrayAttrType>(s->attr_types[i]);
  }
  for (int i = 0; s->attr_defaults != nullptr && i < num_attrs; ++i) {
    op->attr_defaults[i] = s->attr_defaults[i];
  }
  if (s->dtype_rule < kDLArrayDTypesAlike || s->dtype_rule > kDLArrayDTypesPerArray) {
    Bad(where + "unknown dtype_rule " + std::to_string(s->dtype_rule));
  }
  op->dtype_rule = static_cast<DLArrayDTypeRule>(s->dtype_rule);
  op->output_dtype = s->output_dtype;
  if (op->dtype_rule == kDLArrayOutputsFixed && !IsStorageDType(op->output_dtype)) {
    Bad(where + "output_dtype " + DTypeToString(op->output_dtype) + " is not an array dtype");
  }
  op->accepts_strided = s->accepts_strided != 0;
  op->fills_when_empty = s->fills_when_empty != 0;
  op->empty_fill = s->empty_fill;
  std::vector<const char*> names;  // the default order, checked like a declared one
  for (const auto* list : {&op->input_names, &op->attr_names, &op->output_names}) {
    for (const std::string& n : *list) names.push_back(n.c_str());
  }
  ReadCallOrder(s->call_order != nullptr ? s->call_order : names.data(), op);
}

// The index of the forward attribute `name`, or a BackendError naming `where`.
int AttrIndex(const OpInfo& op, const std::string& name, const std::string& where) {
  const auto it = std::find(op.attr_names.begin(), op.attr_names.end(), name);
  if (it == op.attr_names.end()) Bad(where + ": '" + name + "' is not an attribute of " + op.name);
  return static_cast<int>(it - op.attr_names.begin());
}

// Space-separated words of a C string (nullptr: none).
std::vector<std::string> SplitWords(const char* text) {
  std::vector<std::string> out;
  std::istringstream in(text != nullptr ? text : "");
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

// One declared gradient, checked against the forward op (its inputs, outputs and attributes).
GradientInfo ReadGradient(const DLArrayGradient& c, const OpInfo& op, const std::string& where) {
  if (c.input < 0 || c.input >= op.num_inputs) Bad(where + ": input index out of range");
  if (!IsIdentifier(c.op)) Bad(where + ": the gradient op is not a name");
  if (c.num_args < 1 || c.num_args > DLARRAY_MAX_OPERANDS || c.args == nullptr) {
    Bad(where + ": needs 1.." + std::to_string(DLARRAY_MAX_OPERANDS) + " arguments");
  }
  GradientInfo info;
  info.input = c.input;
  info.op = c.op;
  for (int a = 0; a < c.num_args; ++a) {
    const DLArrayGradArg arg = c.args[a];
    const int limit = arg.kind == kDLArrayGradInput ? op.num_inputs : op.num_outputs;
    if (arg.kind < kDLArrayGradInput || arg.kind > kDLArrayGradOutputGrad || arg.index < 0 ||
        arg.index >= limit) {
      Bad(where + ": argument " + std::to_string(a) + " names no input, output or gradient");
    }
    info.args.push_back({static_cast<DLArrayGradArgKind>(arg.kind), arg.index});
  }
  if (!DLARRAY_STRUCT_HAS(&c, DLArrayGradient, when)) return info;  // before ABI 3.1
  for (const std::string& word : SplitWords(c.attrs)) {
    const size_t eq = word.find('=');
    GradientInfo::Attr attr;
    attr.name = word.substr(0, eq);
    if (eq == std::string::npos || !IsIdentifier(attr.name.c_str())) {
      Bad(where + ": attrs word '" + word + "' is not name=value");
    }
    std::string value = word.substr(eq + 1);
    attr.negate = !value.empty() && value[0] == '!';
    if (attr.negate) value.erase(0, 1);
    char* end = nullptr;
    attr.value = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0') {  // not a number: a forward attribute
      attr.source = AttrIndex(op, value, where);
    } else if (attr.negate) {
      Bad(where + ": attrs word '" + word + "': '!' applies to attribute names");
    }
    info.attrs.push_back(std::move(attr));
  }
  const std::vector<std::string> when = SplitWords(c.when);
  if (when.size() > 1) Bad(where + ": 'when' is one attribute name, optionally after '!'");
  if (!when.empty()) {
    info.when_nonzero = when[0][0] != '!';
    info.when_attr = AttrIndex(op, when[0].substr(info.when_nonzero ? 0 : 1), where);
  }
  return info;
}

OpInfo FromC(const DLArrayOpSchema* s, const std::string& plugin) {
  if (s == nullptr) Bad("declare_op: the schema is null");
  if (s->struct_size < offsetof(DLArrayOpSchema, num_gradients) + sizeof(int32_t)) {
    Bad("declare_op: the schema's struct_size " + std::to_string(s->struct_size) +
        " is smaller than any ABI 2 schema");
  }
  if (!IsIdentifier(s->name)) {
    Bad(std::string("declare_op: op name '") + (s->name ? s->name : "(null)") +
        "' is not a name (letters, digits and _)");
  }
  OpInfo op;
  op.name = s->name;
  op.owner = plugin;
  op.doc = s->doc != nullptr ? s->doc : "";
  if (s->num_inputs < 0 || s->num_inputs > DLARRAY_MAX_OPERANDS || s->num_outputs < 1 ||
      s->num_outputs > DLARRAY_MAX_OPERANDS || s->num_attrs < 0 ||
      s->num_attrs > DLARRAY_MAX_OPERANDS) {
    Bad("declare_op(" + op.name + "): needs 0.." + std::to_string(DLARRAY_MAX_OPERANDS) +
        " inputs, 1.." + std::to_string(DLARRAY_MAX_OPERANDS) + " outputs and at most " +
        std::to_string(DLARRAY_MAX_OPERANDS) + " attributes");
  }
  op.num_inputs = s->num_inputs;
  op.num_outputs = s->num_outputs;
  if (s->num_attrs > 0 && s->attr_names == nullptr)
    Bad("declare_op(" + op.name + "): no attr_names");
  op.attr_names = Names(s->attr_names, s->num_attrs, op.name, "attribute");
  op.input_names = s->input_names ? Names(s->input_names, s->num_inputs, op.name, "input name")
                                  : DefaultNames("x", s->num_inputs);
  op.output_names = s->output_names ? Names(s->output_names, s->num_outputs, op.name, "output name")
                                    : DefaultNames("out", s->num_outputs);
  if (s->num_dtypes < 0 || (s->num_dtypes > 0 && s->dtypes == nullptr)) {
    Bad("declare_op(" + op.name + "): bad dtype list");
  }
  for (int i = 0; i < s->num_dtypes; ++i) {
    const DLArrayDType t = s->dtypes[i];
    if (!IsStorageDType(t)) {
      Bad("declare_op(" + op.name + "): dtype " + DTypeToString(t) + " is not supported");
    }
    op.dtypes.push_back(t);
  }
  op.allow_inplace = s->allow_inplace != 0;
  if (DLARRAY_STRUCT_HAS(s, DLArrayOpSchema, infer_shape_data)) {
    op.infer_shape = s->infer_shape;
    op.infer_data = s->infer_shape_data;
  }
  op.validate = s->validate;
  op.validate_data = s->validate_data;
  ReadAbi3Fields(s, &op);
  // An input has at most two declarations (one per value of an attribute).
  if (s->num_gradients < 0 || (s->num_gradients > 0 && s->gradients == nullptr) ||
      s->num_gradients > 2 * s->num_inputs) {
    Bad("declare_op(" + op.name + "): bad gradient list");
  }
  for (int g = 0; g < s->num_gradients; ++g) {
    const std::string where = "declare_op(" + op.name + "): gradient " + std::to_string(g);
    GradientInfo info = ReadGradient(s->gradients[g], op, where);
    for (const GradientInfo& other : op.gradients) {
      // Two declarations of one input must hold under opposite values of one attribute.
      if (other.input == info.input && (info.when_attr < 0 || other.when_attr != info.when_attr ||
                                        other.when_nonzero == info.when_nonzero)) {
        Bad(where + ": input declared twice (without opposite 'when' conditions)");
      }
    }
    op.gradients.push_back(std::move(info));
  }
  return op;
}

}  // namespace

bool SameSignature(const OpInfo& a, const OpInfo& b) {
  return a.num_inputs == b.num_inputs && a.num_outputs == b.num_outputs &&
         a.attr_names == b.attr_names && a.dtypes == b.dtypes;
}

void StagingRegistry::DeclareOp(const DLArrayOpSchema* schema) {
  OpInfo op = FromC(schema, plugin_);
  for (const OpInfo& d : declared) {
    if (d.name != op.name) continue;
    if (!SameSignature(d, op)) {
      Bad("declare_op(" + op.name + "): declared twice by this plugin with different signatures");
    }
    return;  // the same declaration again
  }
  declared.push_back(std::move(op));
}

void StagingRegistry::RegisterKernel(const char* op, int32_t device_type, DLArrayKernelFn fn,
                                     void* data) {
  const std::string name = op != nullptr ? op : "(null)";
  if (!IsIdentifier(op)) Bad("register_kernel: '" + name + "' is not an op name");
  if (fn == nullptr) Bad("register_kernel(" + name + "): the kernel is null");
  if (device_type <= 0 || device_type >= DLARRAY_MAX_DEVICE_TYPES) {
    Bad("register_kernel(" + name + "): device type " + std::to_string(device_type) +
        " is out of range (1.." + std::to_string(DLARRAY_MAX_DEVICE_TYPES - 1) + ")");
  }
  kernels.push_back({name, device_type, fn, data});
}

OpTable::OpTable() {
  StagingRegistry core("core");
  DeclareCoreOps(&core);
  DeclareLinalgOps(&core);
  Commit(core);
}

int OpTable::AddLocked(const OpInfo& op) {
  int id = num_ops_.load(std::memory_order_relaxed);
  if (id >= kMaxOps) Bad("too many ops declared (limit " + std::to_string(kMaxOps) + ")");
  ops_[id] = std::make_unique<OpInfo>(op);
  ids_[op.name] = id;
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
  for (int i = 0; i < size(); ++i) names.push_back(ops_[i]->name);
  return names;
}

void OpTable::Commit(const StagingRegistry& staged) {
  std::lock_guard<std::mutex> lock(mu_);
  // Check everything first, so a conflict leaves the table untouched.
  std::set<std::string> new_ops;
  for (const OpInfo& s : staged.declared) {
    auto it = ids_.find(s.name);
    if (it != ids_.end() && !SameSignature(*ops_[it->second], s)) {
      Bad("op '" + s.name + "' is already declared (by " + ops_[it->second]->owner +
          ") with another signature");
    }
    if (it == ids_.end()) new_ops.insert(s.name);
  }
  std::set<std::pair<std::string, int>> seen;
  for (const auto& k : staged.kernels) {
    auto it = ids_.find(k.op);
    if (it == ids_.end() && !new_ops.count(k.op)) {
      Bad("register_kernel: op '" + k.op + "' is not declared (declare_op first)");
    }
    if (!seen.insert({k.op, k.device_type}).second) {
      Bad("register_kernel: op '" + k.op + "' on " + DeviceTypeName(k.device_type) +
          " is registered twice");
    }
    if (it != ids_.end()) {
      const KernelEntry* existing = kernels_[it->second][k.device_type].load();
      if (existing != nullptr) {
        Bad("register_kernel: op '" + k.op + "' on " + DeviceTypeName(k.device_type) +
            " already has a kernel (from plugin '" + existing->plugin + "')");
      }
    }
  }
  if (size() + static_cast<int>(new_ops.size()) > kMaxOps) {
    Bad("too many ops declared (limit " + std::to_string(kMaxOps) + ")");
  }
  for (const OpInfo& s : staged.declared) {
    if (!ids_.count(s.name)) AddLocked(s);
  }
  for (const auto& k : staged.kernels) {
    const int id = ids_.at(k.op);
    // Entries live as long as the process: kernels are read without locks.
    auto* entry = new KernelEntry{k.fn, k.data, staged.plugin()};
    kernels_[id][k.device_type].store(entry, std::memory_order_release);
  }
}

}  // namespace dlarray
