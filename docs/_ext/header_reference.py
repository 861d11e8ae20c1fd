"""The C/C++ reference: every public header of runtime/include/dlarray and of its ext/ folder
(the device extensions' tables), found by glob.

At the start of a build this extension
1. runs Doxygen over the folder (XML only, into the build folder), with every export macro of the
   headers (``#define NAME __attribute__(...)``) predefined as empty so the declarations parse;
2. writes one page per header into ``reference/cpp/generated/`` (not committed): the header's
   description, then one Breathe directive per class, function, type, enum, constant and macro
   that Doxygen locates in that header (namespace members included, each rendered once);
   ``reference/cpp/index.md`` lists the pages with a glob.

A header added to the folder gets its page with no change here. Doxygen's warnings fail the
build, as Sphinx's do (-W), except those listed in ``header_reference_known_warnings`` (conf.py:
``{"header.h": "text of the warning"}``, each with the reason it cannot be fixed yet).
"""
import pathlib
import re
import shutil
import subprocess
from xml.etree import ElementTree

from sphinx.errors import ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

PAGES = pathlib.PurePosixPath("reference", "cpp", "generated")
HEADER_SUFFIXES = (".h", ".hpp")

# Doxygen settings: XML of the public declarations, nothing else.
DOXYFILE = """\
PROJECT_NAME           = dlarray
OUTPUT_DIRECTORY       = {out}
INPUT                  = {headers}
FILE_PATTERNS          = *.h *.hpp
RECURSIVE              = NO
STRIP_FROM_PATH        = {strip}
STRIP_FROM_INC_PATH    = {strip}
FULL_PATH_NAMES        = YES
GENERATE_XML           = YES
XML_PROGRAMLISTING     = NO
GENERATE_HTML          = NO
GENERATE_LATEX         = NO
EXTRACT_ALL            = YES
EXTRACT_PRIVATE        = NO
EXTRACT_STATIC         = YES
EXTRACT_LOCAL_CLASSES  = NO
HIDE_UNDOC_RELATIONS   = YES
TYPEDEF_HIDES_STRUCT   = YES
JAVADOC_AUTOBRIEF      = NO
ENABLE_PREPROCESSING   = YES
MACRO_EXPANSION        = YES
EXPAND_ONLY_PREDEF     = YES
SEARCH_INCLUDES        = NO
PREDEFINED             = {predefined}
QUIET                  = YES
WARNINGS               = YES
WARN_IF_UNDOCUMENTED   = NO
WARN_IF_DOC_ERROR      = YES
WARN_NO_PARAMDOC       = NO
WARN_FORMAT            = "$file:$line: $text"
"""

# ``#define NAME __attribute__((...))``, ``__declspec(...)`` or ``__host__ ...``: an export,
# visibility or CUDA qualifier macro (dtype_dispatch.h's DLARRAY_HOST_DEVICE).
EXPORT_MACRO = re.compile(r"^\s*#\s*define\s+(\w+)\s+(?:__attribute__|__declspec|__host__)\b",
                          re.M)


def headers(folder):
    folder = pathlib.Path(folder)
    found = list(folder.iterdir()) + list((folder / "ext").glob("*"))
    return sorted(p for p in found if p.is_file() and p.suffix in HEADER_SUFFIXES)


def export_macros(paths):
    """Every macro the headers define as an attribute or a CUDA qualifier: Doxygen must read them
    as nothing."""
    names = set()
    for path in paths:
        names.update(EXPORT_MACRO.findall(path.read_text()))
    return sorted(names)


def unexpected_warnings(lines, known):
    """The warning lines that no ``known`` entry (header file name -> warning text) covers."""
    left = []
    for line in lines:
        header = pathlib.PurePath(line.split(":", 1)[0]).name
        if not any(h == header and text in line for h, text in known.items()):
            left.append(line)
    return left


def run_doxygen(folder, out, known=None):
    doxygen = shutil.which("doxygen")
    if doxygen is None:
        raise ExtensionError("doxygen is not installed: `bash scripts/install_system_deps.sh docs` "
                             "(or `make docs`) installs it")
    paths = headers(folder)
    predefined = ["__cplusplus", "__attribute__(x)=", "__declspec(x)="]
    predefined += [f"{name}=" for name in export_macros(paths)]
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / "Doxyfile").write_text(DOXYFILE.format(
        out=out, headers=" ".join(f'"{p}"' for p in paths), strip=f'"{folder.parent}"',
        predefined=" ".join(f'"{d}"' for d in predefined)))
    result = subprocess.run([doxygen, "Doxyfile"], cwd=out, capture_output=True, text=True)
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    problems = unexpected_warnings(lines, known or {})
    for line in sorted(set(lines) - set(problems)):
        logger.info("header_reference: known Doxygen warning: %s", line)
    if result.returncode != 0 or problems:
        raise ExtensionError("doxygen over %s failed (exit %d):\n%s"
                             % (folder, result.returncode, "\n".join(problems)))
    return out / "xml", paths


# Breathe directive and page heading for each kind of member, in page order.
MEMBER_KINDS = [("define", "doxygendefine", "Macros"),
                ("typedef", "doxygentypedef", "Types"),
                ("enum", "doxygenenum", "Enumerations"),
                ("variable", "doxygenvariable", "Constants and variables"),
                ("function", "doxygenfunction", "Functions")]
CLASS_DIRECTIVES = {"class": "doxygenclass", "struct": "doxygenstruct", "union": "doxygenunion"}


def members_by_header(xml):
    """{header as included (dlarray/ext/x.h): [(kind, qualified name, argsstring)]} for every
    documented entity that is not a class: the file's own (C, macros) and those of every
    namespace, by their location."""
    found = {}
    compounds = ElementTree.parse(xml / "index.xml").getroot()
    for compound in compounds.iter("compound"):
        if compound.get("kind") not in ("file", "namespace"):
            continue
        root = ElementTree.parse(xml / (compound.get("refid") + ".xml")).getroot()
        for member in root.iter("memberdef"):
            location = member.find("location")
            if location is None or member.get("prot", "public") != "public":
                continue
            name = member.findtext("qualifiedname") or member.findtext("name")
            header = location.get("file")  # as included: dlarray/ext/parallel.h
            entry = (member.get("kind"), name, member.findtext("argsstring") or "")
            if entry not in found.setdefault(header, []):
                found[header].append(entry)
    return found


def classes_by_header(xml):
    """{header as included (dlarray/ext/x.h): [(kind, qualified name)]}: the classes and structs
    each header defines (nested classes are rendered by their enclosing class)."""
    found, names = {}, set()
    compounds = ElementTree.parse(xml / "index.xml").getroot()
    for compound in compounds.iter("compound"):
        if compound.get("kind") in CLASS_DIRECTIVES:
            names.add(compound.findtext("name"))
    for compound in compounds.iter("compound"):
        if compound.get("kind") not in CLASS_DIRECTIVES:
            continue
        name = compound.findtext("name")
        if name.rpartition("::")[0] in names:
            continue
        root = ElementTree.parse(xml / (compound.get("refid") + ".xml")).getroot()
        location = root.find("compounddef/location")
        header = location.get("file")  # as included: dlarray/ext/parallel.h
        found.setdefault(header, []).append((compound.get("kind"), name))
    return found


def include_path(path):
    """How a header is included: ``dlarray/x.h`` or ``dlarray/ext/x.h`` (Doxygen's location)."""
    return f"dlarray/ext/{path.name}" if path.parent.name == "ext" else f"dlarray/{path.name}"


def page_name(path):
    """The page (and label) of a header: its stem, with ``ext_`` for an extension header, whose
    name may also be a core header's (ext/parallel.h and parallel.h)."""
    return ("ext_" if path.parent.name == "ext" else "") + path.stem


def header_page(path, classes, members, shared_name=False):
    """The page of one header: include line, the file's description, then each entity.

    Breathe finds a file by its name only (Doxygen's index has no folders), so the description of
    a header whose name another header shares (``shared_name``: parallel.h, ext/parallel.h) is
    left out, and its entities, which Breathe finds by their qualified names, carry the page."""
    include = include_path(path)
    title = f"``{include}``"
    lines = [f".. _header-{page_name(path)}:", "", title, "=" * len(title), "",
             ".. code-block:: c++", "", f"   #include <{include}>", ""]
    if not shared_name:
        lines += [f".. doxygenfile:: {path.name}", "   :project: dlarray",
                  "   :sections: briefdescription detaileddescription", ""]

    def section(heading, directives):
        if directives:
            lines.extend([heading, "-" * len(heading), ""])
            for directive in directives:
                lines.extend(directive + [""])

    section("Classes and structs", [
        [f".. {CLASS_DIRECTIVES[kind]}:: {name}", "   :project: dlarray", "   :members:",
         "   :undoc-members:"] for kind, name in classes])
    counts = {}
    for kind, name, _ in members:
        counts[(kind, name)] = counts.get((kind, name), 0) + 1
    for kind, directive, heading in MEMBER_KINDS:
        entries = []
        for member_kind, name, args in members:
            if member_kind != kind:
                continue
            # An overloaded function is named with its parameters.
            target = name + args if kind == "function" and counts[(kind, name)] > 1 else name
            entries.append([f".. {directive}:: {target}", "   :project: dlarray"])
        section(heading, entries)
    return "\n".join(lines)


def write_pages(srcdir, paths, xml):
    """One page per header; pages of headers that are gone are removed."""
    folder = pathlib.Path(srcdir, PAGES)
    folder.mkdir(parents=True, exist_ok=True)
    classes, members = classes_by_header(xml), members_by_header(xml)
    names = [p.name for p in paths]
    wanted = {f"{page_name(p)}.rst": header_page(p, classes.get(include_path(p), []),
                                                 members.get(include_path(p), []),
                                                 names.count(p.name) > 1)
              for p in paths}
    for old in folder.glob("*.rst"):
        if old.name not in wanted:
            old.unlink()
    for name, text in wanted.items():
        page = folder / name
        if not page.exists() or page.read_text() != text:  # unchanged pages stay unchanged
            page.write_text(text)


def on_builder_inited(app):
    folder = pathlib.Path(app.config.header_reference_dir).resolve()
    xml, paths = run_doxygen(folder, pathlib.Path(app.doctreedir).parent / ".doxygen",
                             app.config.header_reference_known_warnings)
    app.config.breathe_projects = {"dlarray": str(xml)}
    write_pages(app.srcdir, paths, xml)
    logger.info("header_reference: %d headers of %s", len(paths), folder)


def setup(app):
    app.add_config_value("header_reference_dir", None, "env")
    app.add_config_value("header_reference_known_warnings", {}, "env")
    app.connect("builder-inited", on_builder_inited)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
