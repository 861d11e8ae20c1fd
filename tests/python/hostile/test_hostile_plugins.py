"""Hostile plugin files given to load_plugin: text, empty, random bytes, truncated and damaged
ELF files, another machine's library, directories, FIFOs, symlink loops, libraries that are not
plugins. Each must give a clear RuntimeError (or ValueError/TypeError for a bad path), never a
crash, and leave the CPU working. All cases run in one child interpreter (a crash there fails the
cases after it).

Each case names who answers it: dlopen itself (its message is clear), the loader (paths, file
kinds, entry symbol), or the check before dlopen (runtime/src/elf_check.cc), which exists only
for what dlopen alone gets wrong: test_what_dlopen_alone_does shows it for each of its cases."""
import json
import os
import platform
import signal
import struct
import subprocess
import sys

import pytest

import proc_util
from conftest import TEST_PLUGIN_DIR

# Another machine than this one: (ELF e_machine, the name the check gives it).
OTHER_MACHINE = (62, "x86_64") if platform.machine() == "aarch64" else (183, "aarch64")


def real_plugin():
    if TEST_PLUGIN_DIR is None:
        return None
    p = TEST_PLUGIN_DIR / "fake_device_plugin.so"
    return p if p.exists() else None


def elf_header(e_type=3, machine=None, phnum=0, cls=2, data=1):
    if machine is None:
        machine = 183 if platform.machine() == "aarch64" else 62  # this machine
    ident = b"\x7fELF" + bytes([cls, data, 1, 0]) + bytes(8)
    return ident + struct.pack("<HHIQQQIHHHHHH", e_type, machine, 1, 0, 64, 0, 0, 64, 56,
                               phnum, 64, 0, 0)


def damaged_copies(data):
    """{name: bytes} of a real library cut short or damaged in its program headers."""
    phoff, = struct.unpack_from("<Q", data, 32)
    phnum, = struct.unpack_from("<H", data, 56)
    headers = [struct.unpack_from("<IIQQQQQQ", data, phoff + 56 * i) for i in range(phnum)]
    # Where the loadable segments end (section headers and symbols may follow, unneeded).
    loads_end = max(h[2] + h[5] for h in headers if h[0] == 1)
    out = {f"truncated_{name}.so": data[:n]
           for name, n in (("64", 64), ("200", 200), ("1000", 1000), ("4096", 4096),
                           ("third", loads_end // 3), ("half", loads_end // 2),
                           ("last_byte", loads_end - 1))}
    # The program header table moved past the end; the first loadable segment's file size made
    # larger than the file.
    moved = bytearray(data)
    struct.pack_into("<Q", moved, 32, len(data) + 4096)
    out["phdrs_past_end.so"] = bytes(moved)
    first_load = next(phoff + 56 * i for i in range(phnum)
                      if struct.unpack_from("<I", data, phoff + 56 * i)[0] == 1)
    grown = bytearray(data)
    struct.pack_into("<QQ", grown, first_load + 32, len(data) * 4, len(data) * 4)
    out["segment_grown.so"] = bytes(grown)
    return out


def make_cases(root):
    """{case name: (path, expected exception name, text expected in the message, who answers)}."""
    cases = {}

    def write(name, data, text, by, expect="RuntimeError"):
        path = root / name
        path.write_bytes(data)
        cases[name] = (str(path), expect, text, by)

    write("text.so", b"this is not a library\n", "file too short", "dlopen")
    write("long_text.so", b"this is not a library\n" * 10, "invalid ELF header", "dlopen")
    write("empty.so", b"", "file too short", "dlopen")
    write("random.so", b"\x00" + os.urandom(4095), "invalid ELF header", "dlopen")
    write("magic_only.so", b"\x7fELF", "file too short", "dlopen")
    write("header_only.so", elf_header(), "no loadable segments", "dlopen")
    write("elf32.so", elf_header(cls=1), "wrong ELF class: ELFCLASS32", "dlopen")
    write("big_endian.so", elf_header(data=2), "not little-endian", "dlopen")
    write("executable.so", elf_header(e_type=2), "no loadable segments", "dlopen")
    write("object_file.so", elf_header(e_type=1), "only ET_DYN and ET_EXEC can be loaded",
          "dlopen")
    write("other_machine.so", elf_header(machine=OTHER_MACHINE[0]),
          f"built for {OTHER_MACHINE[1]}, this process runs on {platform.machine()}", "check")
    write("phnum_huge.so", elf_header(phnum=60000), "program headers (truncated)", "check")
    segment = struct.pack("<IIQQQQQQ", 1, 5, 0, 0, 0, 1 << 20, 1 << 20, 4096)
    write("segment_past_end.so", elf_header(phnum=1) + segment, "segment (truncated)", "check")
    plugin = real_plugin()
    if plugin is not None:
        for name, data in damaged_copies(plugin.read_bytes()).items():
            write(name, data, "(truncated)", "check")
    (root / "a_directory.so").mkdir()
    cases["a_directory.so"] = (str(root / "a_directory.so"), "RuntimeError", "directory",
                               "loader")
    os.mkfifo(root / "fifo.so")
    cases["fifo.so"] = (str(root / "fifo.so"), "RuntimeError", "FIFO", "loader")
    os.symlink(root / "loop_b.so", root / "loop_a.so")
    os.symlink(root / "loop_a.so", root / "loop_b.so")
    cases["symlink_loop.so"] = (str(root / "loop_a.so"), "RuntimeError", "symbolic links",
                                "loader")
    os.symlink(root / "nowhere.so", root / "dangling.so")
    cases["dangling_symlink.so"] = (str(root / "dangling.so"), "RuntimeError", "no such file",
                                    "loader")
    cases["missing.so"] = (str(root / "missing.so"), "RuntimeError", "no such file", "loader")
    cases["long_path"] = ("/" + "x" * 5000 + ".so", "RuntimeError", "", "loader")
    cases["nul_in_path"] = (str(root / "text.so") + "\0.so", "ValueError", "NUL", "loader")
    cases["empty_path"] = ("", "ValueError", "empty", "loader")
    for lib in ("/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libz.so.1"):
        if os.path.exists(lib):
            cases["not_a_plugin_" + os.path.basename(lib)] = (lib, "RuntimeError",
                                                              "missing entry symbol", "loader")
    return cases


@pytest.fixture(scope="module")
def hostile_cases(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile_plugins")
    return root, make_cases(root)


@pytest.fixture(scope="module")
def outcomes(hostile_cases):
    root, cases = hostile_cases
    spec = root / "cases.json"
    spec.write_text(json.dumps(cases))
    r = proc_util.run(f"""
import json
import numpy as np
import dlarray
from dlarray import ops
cases = json.load(open({str(spec)!r}))
for name, (path, _, _, _) in cases.items():
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


CASE_NAMES = ["text.so", "long_text.so", "empty.so", "random.so", "magic_only.so",
              "header_only.so", "elf32.so", "big_endian.so", "executable.so", "object_file.so",
              "other_machine.so", "phnum_huge.so", "segment_past_end.so",
              "truncated_64.so", "truncated_200.so", "truncated_1000.so", "truncated_4096.so",
              "truncated_third.so", "truncated_half.so", "truncated_last_byte.so",
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
    path, expect, text, _ = cases[case]
    assert kind == expect, (case, kind, msg)
    assert text in msg, (case, msg)
    if expect == "RuntimeError" and case != "long_path":
        assert path in msg, (case, msg)  # every refusal names the file
    assert cpu_ok, f"the CPU backend stopped working after {case}"


DLOPEN_ALONE = """
import ctypes, sys
try:
    ctypes.CDLL(sys.argv[1])
except OSError as e:
    print(e)
else:
    print("loaded")
"""


def dlopen_alone(path, keep_preload=False, **kwargs):
    """A plain interpreter's dlopen of path (without make sanitize's preloaded ASan, whose
    handler would turn a SIGBUS into an abort). A library that loads runs its constructors: one
    built with ASan (under make sanitize) then needs the preloaded runtime, so keep_preload
    leaves it in place for a case that must load."""
    env = {k: v for k, v in os.environ.items() if keep_preload or k != "LD_PRELOAD"}
    return subprocess.run([sys.executable, "-c", DLOPEN_ALONE, path], env=env, **kwargs)


@pytest.mark.parametrize("case", CASE_NAMES)
def test_what_dlopen_alone_does(hostile_cases, case):
    """The cases answered by the check before dlopen are those dlopen alone gets wrong: a
    truncated library crashes it (SIGBUS) and another machine's library gets "No such file or
    directory". Should this test fail for a case, glibc now handles it and the check's part
    for it (runtime/src/elf_check.cc) can go. The cases answered by dlopen give its message; of
    the loader's, a FIFO blocks dlopen and a directory gets "Is a directory"."""
    _, cases = hostile_cases
    if case not in cases:
        pytest.skip(f"{case} is not available here")
    path, _, text, by = cases[case]
    if case == "fifo.so":  # why the loader refuses what is not a regular file: dlopen waits
        with pytest.raises(subprocess.TimeoutExpired):
            dlopen_alone(path, timeout=5)
        return
    if by == "loader" and case != "a_directory.so":
        pytest.skip("refused by the loader before any file is read")
    run = dlopen_alone(path, keep_preload=case == "truncated_last_byte.so", capture_output=True,
                       text=True, timeout=60)
    if case == "a_directory.so":
        assert "Is a directory" in run.stdout, run
        return
    if by == "dlopen":
        assert run.returncode == 0 and text in run.stdout, run
    elif case == "other_machine.so":
        said = run.stdout.replace(path, "")
        assert run.returncode == 0 and "No such file or directory" in said, run
        assert OTHER_MACHINE[1] not in said and "machine" not in said, run
    elif case in ("truncated_1000.so", "truncated_4096.so", "truncated_third.so",
                  "truncated_half.so"):
        assert run.returncode == -signal.SIGBUS, run
    elif case == "truncated_last_byte.so":
        assert run.stdout.strip() == "loaded", run  # its last page is zero-filled: no crash
    else:  # damaged program headers: dlopen's own refusal is vaguer than the check's
        assert run.returncode == 0 and "loaded" not in run.stdout, run
