// The core's declarations of the ops of dlarray/elementwise_table.h: names, dtypes, docs and
// gradients come from the table, so that adding an elementwise op needs no edit here.
#include "elementwise_ops.h"

#include <cctype>
#include <string>
#include <vector>

#include "dlarray/elementwise_table.h"
#include "dlarray/errors.h"

namespace dlarray {
namespace {

std::vector<DLArrayDType> DTypesOf(int set) {
  std::vector<DLArrayDType> out;
  if (set == kTableFloatTypes) {
    out = {kFloat32, {kDLArrayFloat, 16, 1}, {kDLArrayBfloat, 16, 1}, {kDLArrayFloat, 64, 1}};
  }
  return out;
}

std::string Trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      parts.push_back(Trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  return parts;
}

// One argument of a gradient op: an input by name, "out" or "dout".
GradArg ParseArg(const OpInfo& op, const std::string& name, const std::string& where) {
  if (name == "out") return GradArg::Output(0);
  if (name == "dout") return GradArg::OutputGrad(0);
  for (int i = 0; i < op.num_inputs; ++i) {
    if (op.input_names[i] == name) return GradArg::Input(i);
  }
  throw Error(ErrorKind::kRuntime, where + ": '" + name + "' is no input, out or dout");
}

// "op(a, b); op2(out, dout)": one gradient per input, in order.
void ParseGradients(OpInfo* op, const std::string& text) {
  if (Trim(text).empty()) return;
  const std::vector<std::string> calls = Split(text, ';');
  for (size_t i = 0; i < calls.size(); ++i) {
    const std::string where = "elementwise table: gradient of " + op->name + " '" + calls[i] + "'";
    const size_t open = calls[i].find('(');
    if (open == std::string::npos || calls[i].back() != ')' || i >= op->input_names.size()) {
      throw Error(ErrorKind::kRuntime, where + ": expected op(args), one per input");
    }
    GradientInfo g;
    g.input = static_cast<int>(i);
    g.op = Trim(calls[i].substr(0, open));
    for (const std::string& arg :
         Split(calls[i].substr(open + 1, calls[i].size() - open - 2), ',')) {
      g.args.push_back(ParseArg(*op, arg, where));
    }
    op->gradients.push_back(std::move(g));
  }
}

OpInfo Declare(const char* name, std::vector<std::string> inputs, int dtypes, const char* grads,
               const char* doc) {
  OpInfo op;
  op.name = name;
  op.owner = "core";
  op.doc = doc;
  op.num_inputs = static_cast<int>(inputs.size());
  op.num_outputs = 1;
  op.input_names = std::move(inputs);
  op.output_names = {"out"};
  op.dtypes = DTypesOf(dtypes);
  op.allow_inplace = true;  // each element is read before it is written
  op.core_validate = &ValidateSameShape;
  ParseGradients(&op, grads);
  return op;
}

}  // namespace

void AppendElementwiseOps(std::vector<OpInfo>* ops) {
  constexpr int kFloatTypes = kTableFloatTypes;
#define DLARRAY_DECLARE_1(name, x, dtypes, expr, grads, doc) \
  ops->push_back(Declare(#name, {#x}, dtypes, grads, doc));
#define DLARRAY_DECLARE_2(name, a, b, dtypes, expr, grads, doc) \
  ops->push_back(Declare(#name, {#a, #b}, dtypes, grads, doc));
  DLARRAY_ELEMENTWISE_OPS(DLARRAY_DECLARE_1, DLARRAY_DECLARE_2)
#undef DLARRAY_DECLARE_1
#undef DLARRAY_DECLARE_2
}

}  // namespace dlarray
