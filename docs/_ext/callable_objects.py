"""The ``callable-objects`` directive: documents, as functions, the callable objects that a module
exports (``__all__``) and that are neither functions nor classes, such as the op instances of
dlarray.autodiff (``matmul_op(a, b, trans_A=False, trans_B=False)``), which autodoc's
``automodule`` skips. Use it in reStructuredText (``eval-rst`` in a MyST page)."""
import importlib
import inspect

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles


def callable_objects(module):
    """Names in ``module.__all__`` bound to callable objects that are not routines or classes."""
    names = []
    for name in getattr(module, "__all__", []):
        obj = getattr(module, name)
        if callable(obj) and not inspect.isroutine(obj) and not inspect.isclass(obj):
            names.append(name)
    return names


class CallableObjects(SphinxDirective):
    required_arguments = 1
    has_content = False

    def run(self):
        module_name = self.arguments[0]
        module = importlib.import_module(module_name)
        lines = StringList()
        source = self.get_source_info()
        for name in callable_objects(module):
            lines.append(f".. autofunction:: {module_name}.{name}", *source)
            lines.append("", *source)
        node = nodes.container()
        nested_parse_with_titles(self.state, lines, node)
        return node.children


def setup(app):
    app.add_directive("callable-objects", CallableObjects)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
