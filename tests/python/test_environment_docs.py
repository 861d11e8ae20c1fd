"""docs/environment.md lists exactly the DLARRAY_* environment variables the code reads.

The sources are scanned for the ways this project reads a variable (getenv and the helpers named
*env*, os.environ, shell $VAR, CMake $ENV{}); a variable read but not in one of the page's tables
fails, naming it and where it is read, and so does a row whose variable nothing reads any more.
"""
import pathlib
import re

from conftest import ROOT

PAGE = ROOT / "docs" / "environment.md"
# Where code that runs (or builds, or tests) dlarray lives.
SCANNED = ["runtime", "backends", "python", "plugins", "scripts", "examples", "bench", "tests",
           "seed_api", "Makefile", "CMakeLists.txt", "cmake"]
NAME = r"(DLARRAY_[A-Z0-9_]+)"
Q = r"""["']"""
# getenv("X"), Env("X"), _env_int("X", ...), os.getenv("X"): any call whose name has "env" in it
# but the setters (setenv, monkeypatch.setenv, ...), which a test may call with any name.
ENV_CALL = re.compile(r"\b(?!setenv|unsetenv|putenv|delenv)\w*(?:env|Env|ENV)\w*\(\s*"
                      + Q + NAME + Q)
ENVIRON = re.compile(r"environ(?:\.get|\.setdefault|\.pop)?\s*[\[(]\s*" + Q + NAME + Q)
IN_ENVIRON = re.compile(Q + NAME + Q + r"\s+(?:not\s+)?in\s+os\.environ")
# A module constant holding the name, read through os.environ (custom.py's _ALLOWED_DIRS).
CONSTANT = re.compile(r"^(\w+)\s*=\s*" + Q + NAME + Q + r"\s*$", re.M)
SHELL = re.compile(r"\$\{?" + NAME + r"\b")
CMAKE = re.compile(r"\$ENV\{" + NAME + r"\}")
SOURCE_SUFFIXES = {".py", ".pyi", ".c", ".cc", ".cpp", ".cu", ".h", ".hpp", ".sh", ".cmake",
                   ".txt", ".in"}


def reads_in(text, kind):
    """The DLARRAY_* variables a source text reads from the environment."""
    if kind == "shell":
        return set(SHELL.findall(text))
    if kind == "cmake":
        return set(CMAKE.findall(text))
    names = set(ENV_CALL.findall(text)) | set(ENVIRON.findall(text))
    if kind == "python":
        names |= set(IN_ENVIRON.findall(text))
        for const, name in CONSTANT.findall(text):
            if re.search(r"environ(?:\.get)?\s*[\[(]\s*" + re.escape(const) + r"\b", text):
                names.add(name)
    return names


def kind_of(path):
    if path.name == "Makefile" or path.suffix == ".sh":
        return "shell"
    if path.name == "CMakeLists.txt" or path.suffix in (".cmake", ".in"):
        return "cmake"
    if path.suffix in (".py", ".pyi"):
        return "python"
    if path.suffix in (".c", ".cc", ".cpp", ".cu", ".h", ".hpp"):
        return "c"
    return None


def source_files():
    for entry in SCANNED:
        top = ROOT / entry
        files = [top] if top.is_file() else sorted(top.rglob("*")) if top.is_dir() else []
        for path in files:
            rel = path.relative_to(ROOT)
            if any(part in ("build", "_build", "__pycache__") or part.startswith(".")
                   for part in rel.parts):
                continue
            if path.resolve() == pathlib.Path(__file__).resolve():
                continue  # this file's scanner examples are not reads
            if path.is_file() and kind_of(path) and path.suffix in SOURCE_SUFFIXES | {""}:
                yield path


def read_by_code():
    """{variable: [files that read it]}."""
    found = {}
    for path in source_files():
        text = path.read_text(errors="replace")
        for name in reads_in(text, kind_of(path)):
            found.setdefault(name, []).append(str(path.relative_to(ROOT)))
    return found


def documented(text):
    """The variables of the page: the first cell of a table row, `DLARRAY_X` (or several)."""
    names = set()
    for line in text.splitlines():
        m = re.match(r"^\|([^|]*)\|", line)
        if m:
            names |= set(re.findall(r"`" + NAME + r"`", m.group(1)))
    return names


def test_every_variable_read_is_documented():
    found = read_by_code()
    missing = {name: files for name, files in found.items() if name not in documented(
        PAGE.read_text())}
    assert not missing, (
        "DLARRAY_* environment variables read by the code but not in docs/environment.md (add a "
        "row: what it does, default, example): %s" % missing)


def test_every_documented_variable_is_read():
    stale = documented(PAGE.read_text()) - set(read_by_code())
    assert not stale, ("docs/environment.md lists variables no source reads any more (remove "
                       "them, or the scanner misses how they are read): %s" % sorted(stale))


def test_the_known_variables_are_found():
    """The scanner sees the reads the page was written from, one of each way of reading."""
    found = read_by_code()
    for name, where in [("DLARRAY_PLUGIN_PATH", "runtime/src/plugin_loader.cc"),   # getenv
                        ("DLARRAY_NCCL_LIBRARY", "backends/cuda/nccl_library.cc"),  # Env()
                        ("DLARRAY_GEMM_SLABS", "backends/cpu/matrix_multiply.cc"),
                        ("DLARRAY_OPENCL_KERNELS", "backends/opencl/opencl_device.cc"),
                        ("DLARRAY_DIST_TIMEOUT", "python/dlarray/distributed/__init__.py"),
                        ("DLARRAY_AOT_ALLOWED_DIRS", "python/dlarray/custom.py"),  # constant
                        ("DLARRAY_LOG", "python/dlarray/_log.py"),
                        ("DLARRAY_NVCC", "scripts/sanitize.sh")]:                  # shell
        assert where in found.get(name, []), (name, where, found.get(name))


def test_scanner_reads_and_ignores():
    c = ('const char* a = std::getenv("DLARRAY_A"); Env("DLARRAY_B"); puts("DLARRAY_C is bad");'
         ' setenv("DLARRAY_Q", "1", 1); monkeypatch.setenv("DLARRAY_R", "1")')
    assert reads_in(c, "c") == {"DLARRAY_A", "DLARRAY_B"}
    py = "\n".join([
        'x = os.environ.get("DLARRAY_D", "1")', "y = os.environ['DLARRAY_E']",
        'if "DLARRAY_F" in os.environ: pass', '_K = "DLARRAY_G"', "z = os.environ.get(_K)",
        '_UNUSED = "DLARRAY_H"', 't = _env_float("DLARRAY_I", None, 3.0)',
        'raise ValueError("set DLARRAY_J to a folder")', 'env = dict(DLARRAY_K="1")'])
    assert reads_in(py, "python") == {"DLARRAY_D", "DLARRAY_E", "DLARRAY_F", "DLARRAY_G",
                                      "DLARRAY_I"}
    assert reads_in('echo "${DLARRAY_L:-}" $DLARRAY_M\ncmake -DDLARRAY_N=ON', "shell") == {
        "DLARRAY_L", "DLARRAY_M"}
    assert reads_in('if(DEFINED ENV{X})\nset(a "$ENV{DLARRAY_O}")\noption(DLARRAY_P "" ON)',
                    "cmake") == {"DLARRAY_O"}


def test_page_parser():
    text = "\n".join(["| variable | default |", "| --- | --- |",
                      "| `DLARRAY_A` | `1`, see `DLARRAY_B` |", "| `DLARRAY_C`, `DLARRAY_D` | x |",
                      "Prose about `DLARRAY_E`.", "| `OMP_NUM_THREADS` | y |"])
    assert documented(text) == {"DLARRAY_A", "DLARRAY_C", "DLARRAY_D"}


def test_page_is_in_the_docs_index():
    assert re.search(r"^environment$", (ROOT / "docs" / "index.md").read_text(), re.M)
