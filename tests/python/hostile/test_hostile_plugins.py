"""Hostile plugin files given to load_plugin: text, empty, random bytes, truncated and damaged
ELF files, directories, FIFOs, symlink loops, libraries that are not plugins. Each must give a
clear RuntimeError (or ValueError/TypeError for a bad path), never a crash, and leave the CPU
working. All cases run in one child interpreter (a crash there fails the cases after it)."""
import json
import os
import struct

import pytest

import proc_util
from conftest import TEST_PLUGIN_DIR


def real_plugin():
    if TEST_PLUGIN_DIR is None:
        return None
    p = TEST_PLUGIN_DIR / "fake_device_plugin.so"
    return p if p.exists() else None


def elf_header(e_type=3, machine=62, phnum=0, cls=2, data=1):
    ident = b"\x7fELF" + bytes([cls, data, 1, 0]) + bytes(8)
    return ident + struct.pack("<HHIQQQIHHHHHH", e_type, machine, 1, 0, 64, 0, 0, 64, 56,
                               phnum, 64, 0, 0)


def make_cases(root):
    """{case name: (path, expected exception name, text expected in the message)}."""
    cases = {}

    def write(name, data, expect="RuntimeError", text=""):
        path = root / name
        path.write_bytes(data)
        cases[name] = (str(path), expect, text)

    write("text.so", b"this is not a library\n", text="not an ELF file")
    write("empty.so", b"", text="not an ELF file")
    write("random.so", os.urandom(4096), text="not an ELF file")
    write("magic_only.so", b"\x7fELF", text="not an ELF file")
    write("header_only.so", elf_header(), text="program header")
    write("elf32.so", elf_header(cls=1), text="64-bit")
    write("big_endian.so", elf_header(data=2), text="little-endian")
    write("executable.so", elf_header(e_type=2), text="not a shared library")
    write("object_file.so", elf_header(e_type=1), text="not a shared library")
    write("aarch64.so", elf_header(machine=183), text="another machine")
    write("phnum_huge.so", elf_header(phnum=60000), text="program header")
    segment = struct.pack("<IIQQQQQQ", 1, 5, 0, 0, 0, 1 << 20, 1 << 20, 4096)
    write("segment_past_end.so", elf_header(phnum=1) + segment, text="truncated")
    plugin = real_plugin()
    if plugin is not None:
        data = plugin.read_bytes()
        phoff, = struct.unpack_from("<Q", data, 32)
        phnum, = struct.unpack_from("<H", data, 56)
        headers = [struct.unpack_from("<IIQQQQQQ", data, phoff + 56 * i) for i in range(phnum)]
        # Where the loadable segments end (section headers and symbols may follow, unneeded).
        loads_end = max(h[2] + h[5] for h in headers if h[0] == 1)
        for name, n in (("64", 64), ("200", 200), ("1000", 1000), ("4096", 4096),
                        ("third", loads_end // 3), ("last_byte", loads_end - 1)):
            write(f"truncated_{name}.so", data[:n], text="truncated")
        # Damaged in place: the program header table moved past the end; the file size of the
        # first loadable segment made larger than the file.
        moved = bytearray(data)
        struct.pack_into("<Q", moved, 32, len(data) + 4096)
        write("phdrs_past_end.so", bytes(moved), text="truncated")
        first_load = next(phoff + 56 * i for i in range(phnum)
                          if struct.unpack_from("<I", data, phoff + 56 * i)[0] == 1)
        grown = bytearray(data)
        struct.pack_into("<QQ", grown, first_load + 32, len(data) * 4, len(data) * 4)
        write("segment_grown.so", bytes(grown), text="truncated")
    (root / "a_directory.so").mkdir()
    cases["a_directory.so"] = (str(root / "a_directory.so"), "RuntimeError", "directory")
    os.mkfifo(root / "fifo.so")
    cases["fifo.so"] = (str(root / "fifo.so"), "RuntimeError", "FIFO")
    os.symlink(root / "loop_b.so", root / "loop_a.so")
    os.symlink(root / "loop_a.so", root / "loop_b.so")
    cases["symlink_loop.so"] = (str(root / "loop_a.so"), "RuntimeError", "symbolic links")
    os.symlink(root / "nowhere.so", root / "dangling.so")
    cases["dangling_symlink.so"] = (str(root / "dangling.so"), "RuntimeError", "no such file")
    cases["missing.so"] = (str(root / "missing.so"), "RuntimeError", "no such file")
    cases["long_path"] = ("/" + "x" * 5000 + ".so", "RuntimeError", "")
    cases["nul_in_path"] = (str(root / "text.so") + "\0.so", "ValueError", "NUL")
    cases["empty_path"] = ("", "ValueError", "empty")
    for lib in ("/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libz.so.1"):
        if os.path.exists(lib):
            cases["not_a_plugin_" + os.path.basename(lib)] = (lib, "RuntimeError",
                                                              "missing entry symbol")
    return cases


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile_plugins")
    cases = make_cases(root)
    spec = root / "cases.json"
    spec.write_text(json.dumps(cases))
    r = proc_util.run(f"""
import json
import numpy as np
import dlarray
from dlarray import ops
cases = json.load(open({str(spec)!r}))
for name, (path, _, _) in cases.items():
    print("trying", name, flush=True)
    try:
        dlarray.load_plugin(path)
        outcome = ["ok", ""]
    except Exception as e:
        outcome = [type(e).__name__, str(e)]
    x = np.array([-1.0, 2.0], np.float32)
    a, b = dlarray.array(x), dlarray.empty((2,))
    ops.relu(a, b)
    outcome.append(bool((b.asnumpy() == [0, 2]).all()))
    print("RESULT " + json.dumps([name] + outcome), flush=True)
""", timeout=120)
    results = {}
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            name, kind, msg, cpu_ok = json.loads(line[len("RESULT "):])
            results[name] = (kind, msg, cpu_ok)
    return cases, results, r


CASE_NAMES = ["text.so", "empty.so", "random.so", "magic_only.so", "header_only.so", "elf32.so",
              "big_endian.so", "executable.so", "object_file.so", "aarch64.so", "phnum_huge.so",
              "segment_past_end.so", "truncated_64.so", "truncated_200.so", "truncated_1000.so",
              "truncated_4096.so", "truncated_third.so", "truncated_last_byte.so",
              "phdrs_past_end.so", "segment_grown.so", "a_directory.so", "fifo.so",
              "symlink_loop.so", "dangling_symlink.so", "missing.so", "long_path", "nul_in_path",
              "empty_path",
              "not_a_plugin_libm.so.6", "not_a_plugin_libz.so.1"]


@pytest.mark.parametrize("case", CASE_NAMES)
def test_hostile_plugin_file(outcomes, case):
    cases, results, r = outcomes
    if case not in cases:
        pytest.skip(f"{case} is not available here")
    assert case in results, f"the child died before or at {case}: {r}"
    kind, msg, cpu_ok = results[case]
    _, expect, text = cases[case]
    assert kind == expect, (case, kind, msg)
    assert text in msg, (case, msg)
    assert cpu_ok, f"the CPU backend stopped working after {case}"
