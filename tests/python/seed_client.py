"""The dlsys seed's own ctypes client, for the tests of ``libc_runtime_api.so``.

Seed 000 (``../shared/seeds/000_*.txt`` from the repository root) holds ``_base.py``, ``ndarray.py``
and ``gpu_op.py`` as code blocks, each after a gutter of line numbers. They are extracted at test
time (never copied into this repository), only the typos in ``TYPO_FIXES`` are fixed, and they are
laid out so that the unchanged ``_base.py`` finds the library at its own relative path
``../../build/lib/libc_runtime_api.so``::

    <dest>/build/lib -> the installed dlarray package folder (libc_runtime_api.so and the core)
    <dest>/seed/ndarray/_base.py, ndarray.py, gpu_op.py

The folder is linked rather than the file, since the library finds ``libdlarray_runtime.so``
through ``$ORIGIN``, which the loader takes from the path it was given.
"""
import contextlib
import ctypes
import importlib
import pathlib
import re
import sys
import types

import dlarray

ROOT = pathlib.Path(__file__).resolve().parents[2]
SEEDS_DIR = ROOT.parent / "shared" / "seeds"

# The seed's obvious typos, each fixed where it occurs exactly once: (file, wrong, right, why).
TYPO_FIXES = (
    ("ndarray.py", "def __int__(self, device_id, device_type):",
     "def __init__(self, device_id, device_type):", "__int__ for __init__ (DLContext's constructor)"),
    ("ndarray.py", "DLArrayHadnle = ctypes.POINTER(DLArray)", "DLArrayHandle = ctypes.POINTER(DLArray)",
     "DLArrayHadnle for DLArrayHandle, the name empty() uses"),
)

MODULES = ("_base", "ndarray", "gpu_op")


def seed_file():
    """The seed text, or None."""
    found = sorted(SEEDS_DIR.glob("000_*.txt")) if SEEDS_DIR.is_dir() else []
    return found[0] if found else None


def missing_reason():
    """Why the seed's client cannot be built here, or None."""
    if seed_file() is None:
        return f"the seed's client comes from {SEEDS_DIR}/000_*.txt, which is absent here"
    try:
        dlarray.seed_lib_path()
    except FileNotFoundError as e:
        return str(e)
    return None


def code_blocks(text):
    """Every code block of the seed text: a gutter of lines 1..n, then the n lines of code."""
    lines = text.split("\n")
    blocks, i = [], 0
    while i < len(lines):
        n = 0
        while i + n < len(lines) and re.fullmatch(r"\s*%d" % (n + 1), lines[i + n]):
            n += 1
        if n == 0:
            i += 1
            continue
        blocks.append("\n".join(lines[i + n:i + 2 * n]) + "\n")
        i += 2 * n
    return blocks


def sources():
    """{file name: source} of the seed's client, typos fixed."""
    blocks = code_blocks(seed_file().read_text(encoding="utf-8"))
    base = next(i for i, b in enumerate(blocks) if "def _load_lib" in b)
    ops = next(i for i, b in enumerate(blocks) if "import ndarray as _nd" in b)
    files = {"_base.py": blocks[base], "ndarray.py": "\n\n".join(blocks[base + 1:ops]),
             "gpu_op.py": blocks[ops]}
    assert "class NDArray" in files["ndarray.py"] and "def empty" in files["ndarray.py"]
    for name, wrong, right, why in TYPO_FIXES:
        count = files[name].count(wrong)
        assert count == 1, f"seed typo ({why}) found {count} times in {name}"
        files[name] = files[name].replace(wrong, right)
    return files


def write(dest):
    """Lays the client out under dest; returns the folder holding its modules."""
    dest = pathlib.Path(dest)
    lib_dir = pathlib.Path(dlarray.seed_lib_path()).parent
    (dest / "build").mkdir(parents=True, exist_ok=True)
    link = dest / "build" / "lib"
    if not link.exists():
        link.symlink_to(lib_dir, target_is_directory=True)
    client = dest / "seed" / "ndarray"
    client.mkdir(parents=True, exist_ok=True)
    for name, source in sources().items():
        (client / name).write_text(source, encoding="utf-8")
    return client


@contextlib.contextmanager
def imported(dest):
    """Imports the seed's modules from dest (top-level names, as the seed does); yields a namespace
    with base, ndarray, gpu_op and lib (the seed's _LIB, with DLGetLastError's restype set)."""
    client = write(dest)
    saved = {m: sys.modules.pop(m) for m in MODULES if m in sys.modules}
    sys.path.insert(0, str(client))
    try:
        mods = {m: importlib.import_module(m) for m in MODULES}
        lib = mods["_base"]._LIB
        lib.DLGetLastError.restype = ctypes.c_char_p
        yield types.SimpleNamespace(base=mods["_base"], ndarray=mods["ndarray"],
                                    gpu_op=mods["gpu_op"], lib=lib)
    finally:
        sys.path.remove(str(client))
        for m in MODULES:
            sys.modules.pop(m, None)
        sys.modules.update(saved)
