"""Every declared op, built-in or from a plugin, as a function made from its declaration.

``dlarray.ops.<name>`` takes the op's inputs, attributes and outputs in the op's positional order
(the seed's, e.g. ``matrix_multiply(a, trans_a, b, trans_b, out)``), or by the keyword names the
declaration gives (:func:`op_info`). Outputs may be left out when the op has inputs: they are then
allocated on the inputs' device with the shapes the op infers. The call returns the output (a
tuple for several). Every op runs on the device of its operands (all on one device). Ops that
plugins load later appear here too; ``dir(dlarray.ops)`` lists them. ``invoke`` runs any op by
name from lists.
"""

import inspect
import re
from typing import Any

from . import _core
from ._core import infer_outputs, invoke, op_info, op_names  # noqa: F401

_GENERIC = ["infer_outputs", "invoke", "op_info", "op_names"]


def _parameters(info):
    """(name, kind, default or inspect.Parameter.empty) in the op's positional order."""
    n_in, attrs = info["num_inputs"], info["attr_names"]
    out = []
    for name in info["call_order"]:
        if name in attrs:
            default = info["attr_defaults"][attrs.index(name)]
            out.append((name, "attr", inspect.Parameter.empty if default is None else default))
        elif name in info["input_names"]:
            out.append((name, "input", inspect.Parameter.empty))
        else:
            out.append((name, "output", None if n_in else inspect.Parameter.empty))
    return out


def _doc(info):
    owner = "the core" if info["owner"] == "core" else "plugin '%s'" % info["owner"]
    dtypes = ", ".join(info["dtypes"])
    if info["dtype_rule"] == "fixed":
        dtypes += " (outputs %s)" % info["output_dtype"]
    elif info["dtype_rule"] == "per_operand":
        dtypes += " (each operand any of them)"
    summary = info["doc"] or info["name"]
    if re.search(r"[*_`|\\]", summary):  # a formula: reStructuredText would read y_ or * as markup
        summary = "``%s``" % summary
    lines = [summary, "",
             "Declared by %s; kernels on: %s; dtypes: %s." % (
                 owner, ", ".join(info["devices"]) or "none yet", dtypes)]
    for g in info["gradients"]:
        args = ", ".join(
            ("d" if kind == "output_grad" else "") +
            (info["input_names"] if kind == "input" else info["output_names"])[i]
            for kind, i in g["args"])
        for name, (kind, value) in g.get("attrs", {}).items():
            args += ", %s=%s%s" % (name, "not " if kind == "not" else "",
                                   value if kind != "value" else "%g" % value)
        when = ""
        if "when" in g:
            when = " where %s%s" % ("" if g["when"][1] else "not ", g["when"][0])
        lines.append("Gradient of %s%s: %s(%s)." % (info["input_names"][g["input"]], when,
                                                     g["op"], args))
    lines += ["", "Parameters", "----------"]
    for name, kind, default in _parameters(info):
        if kind == "input":
            lines += ["%s : NDArray" % name, "    Input (all operands on one device)."]
        elif kind == "attr":
            t = info["attr_types"][info["attr_names"].index(name)]
            optional = "" if default is inspect.Parameter.empty else ", optional"
            lines += ["%s : %s%s" % (name, t, optional),
                      "    Scalar attribute%s." % (
                          "" if default is inspect.Parameter.empty else " (default %r)" % default)]
        elif default is None:
            lines += ["%s : NDArray, optional" % name,
                      "    Where to write the output; allocated on the inputs' device when "
                      "omitted."]
        else:
            lines += ["%s : NDArray" % name, "    Where to write the output."]
    lines += ["", "Returns", "-------",
              "NDArray or tuple of NDArray", "    The output array(s).", "",
              "Raises", "------",
              "ValueError", "    Shapes that do not fit, operands on different devices.",
              "TypeError", "    A dtype the op does not support, an argument of the wrong type.",
              "RuntimeError", "    No kernel for the operands' device, or the kernel failed."]
    return "\n".join(lines)


def _make(name):
    """The function of op `name`: a builtin function (the call runs in C++) whose signature and
    help text come from the op's declaration."""
    op = _core._make_op(name, _doc(op_info(name)))
    globals()[name] = op
    return op


for _name in op_names():
    _make(_name)
del _name

# The built-in ops (always there) and the functions about the table.
__all__ = sorted(_GENERIC + [n for n in op_names() if op_info(n)["owner"] == "core"])


def __getattr__(name: str) -> Any:
    """Ops declared by plugins loaded after this module, made on first use."""
    if name.startswith("_"):
        raise AttributeError(name)
    if name not in op_names():
        raise AttributeError("module 'dlarray.ops' has no op %r (declared: %s)"
                             % (name, ", ".join(op_names())))
    return _make(name)


def __dir__() -> list[str]:
    return sorted(set(__all__) | set(op_names()) | set(globals()))
