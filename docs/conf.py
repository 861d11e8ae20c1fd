"""Sphinx configuration of the dlarray docs (`make docs` builds them into build/docs).

The Python reference is read from the installed package (`make install`), the C/C++ reference
from Doxygen's XML of runtime/include/dlarray (every header there, see _ext/header_reference.py),
the benchmark tables from docs/benchmarks/*.json (see _ext/benchmark_tables.py).
"""
import pathlib
import sys

DOCS = pathlib.Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))

import dlarray  # noqa: E402  (the installed package, whose docstrings are the reference)

project = "dlarray"
author = "The dlarray authors"
copyright = "the dlarray authors; Apache License 2.0"
version = release = (ROOT / "VERSION").read_text().strip()
if dlarray.__version__ != release:
    raise RuntimeError(f"the installed dlarray is {dlarray.__version__}, VERSION says {release}: "
                       "run `make install` before building the docs")

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.graphviz",
    "sphinx.ext.viewcode",
    "breathe",
    "header_reference",
    "benchmark_tables",
    "example_help",
    "callable_objects",
]

root_doc = "index"
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "requirements.txt", "benchmarks/README.md"]
templates_path = []

# MyST: ::: fences for directives, definition lists, anchors for headings to link to.
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

# Python reference: NumPy-style docstrings (Parameters, Returns, Raises, Examples).
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "signature"
autodoc_docstring_signature = True  # pybind11 puts the signature on the docstring's first line
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False

# C/C++ reference: Breathe over Doxygen's XML (header_reference runs Doxygen at build start).
breathe_default_project = "dlarray"
breathe_domain_by_extension = {"h": "cpp"}
breathe_default_members = ("members",)
header_reference_dir = ROOT / "runtime" / "include" / "dlarray"
# Doxygen warnings tolerated until the header is fixed (runtime/ belongs to the SDK work): the
# brief of DLARRAY_PLUGIN_ENTRY writes "&d;", which Doxygen reads as an HTML entity and drops.
header_reference_known_warnings = {}

# Diagrams: SVG from graphviz's dot.
graphviz_output_format = "svg"

# Benchmarks: the JSON files of bench/*.py --json kept in docs/benchmarks/.
benchmark_tables_dir = DOCS / "benchmarks"

html_theme = "furo"
html_title = f"dlarray {release}"
html_static_path = ["_static"]
html_css_files = ["dlarray.css"]
html_show_sourcelink = False
