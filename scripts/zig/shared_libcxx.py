#!/usr/bin/env python3
"""One shared libc++ for every library of the portable wheel, made from zig's own libc++.a and
libc++abi.a (built for glibc 2.28):

    python scripts/zig/shared_libcxx.py ZIG LIBCXX_A LIBCXXABI_A OUT_SO

Why: libc++ matches a thrown exception to a `catch` by the address of the type's type_info. With a
static copy of libc++ in each library, std::exception and std::runtime_error have one type_info
per library, so an exception thrown in one library and caught as std::exception in another falls
to `catch (...)` (the C API then said "unknown C++ exception"). With all of them linked against
this one library there is one type_info per standard type.

zig compiles its libc++ with hidden visibility (it only ever links it statically), so linking the
archives into a shared library exports nothing. The objects are taken out of the archives and
their defined global symbols made default-visible (the ELF symbol tables patched in place), then
linked into OUT_SO, whose soname is OUT_SO's file name. -Bsymbolic binds the library's own
references to its own definitions, as the hidden visibility did (the code was compiled for that:
PC-relative references to its data), and -s drops the debug information.

Every exported symbol gets the version DLARRAY_LIBCXX_1 (a version script), and the libraries
linked against it ask for that version. Without it, names that libc++abi and GCC's libstdc++ share
(__cxa_throw, operator new, std::exception's type_info, ...) could bind across the two when one
of them is in the process's global scope: a libstdc++ user would run libc++abi's exception code,
or ours libstdc++'s. Versioned references bind only to a definition of the same version. The unwinder is the system's libgcc_s, as
for the rest of the wheel (scripts/zig/c++ says why).
"""
import os
import pathlib
import shutil
import struct
import subprocess
import sys
import tempfile

SHT_SYMTAB = 2
STV_MASK = 3  # the visibility bits of st_other; 0 is STV_DEFAULT
SHN_UNDEF = 0
LOCAL_BINDING = 0


def export_symbols(path):
    """Makes every defined non-local symbol of the ELF64 little-endian object ``path`` default
    visible; returns how many were changed."""
    data = bytearray(pathlib.Path(path).read_bytes())
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise SystemExit("%s: not an ELF64 little-endian object" % path)
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    changed = 0
    for i in range(shnum):
        sh = shoff + i * shentsize
        sh_type, = struct.unpack_from("<I", data, sh + 4)
        if sh_type != SHT_SYMTAB:
            continue
        offset, size = struct.unpack_from("<QQ", data, sh + 24)
        entsize, = struct.unpack_from("<Q", data, sh + 56)
        for sym in range(offset, offset + size, entsize):
            info, other, shndx = struct.unpack_from("<BBH", data, sym + 4)
            if info >> 4 != LOCAL_BINDING and shndx != SHN_UNDEF and other & STV_MASK:
                data[sym + 5] = other & ~STV_MASK
                changed += 1
    pathlib.Path(path).write_bytes(bytes(data))
    return changed


def extract(archive, folder):
    """The objects of ``archive``, extracted into ``folder``. zig names members by their path:
    an absolute one (a cache outside the build's folder) ar extracts by its base name, with a
    warning; a relative one (ZIG_GLOBAL_CACHE_DIR under the working folder, as in a fresh clone)
    ar writes to that path, so its folders are made first."""
    folder.mkdir()
    path = os.path.abspath(archive)
    members = subprocess.run(["ar", "t", path], check=True, capture_output=True,
                             text=True).stdout.splitlines()
    for name in members:
        member = pathlib.PurePosixPath(name)
        if not member.is_absolute() and ".." not in member.parts:
            (folder / member.parent).mkdir(parents=True, exist_ok=True)
    subprocess.run(["ar", "x", path], cwd=folder, check=True, stderr=subprocess.DEVNULL)
    objects = sorted(folder.rglob("*.o"))
    if not objects:
        raise SystemExit("no objects in %s" % archive)
    return objects


VERSION_SCRIPT = "DLARRAY_LIBCXX_1 { global: *; };\n"


def main(zig, libcxx, libcxxabi, out):
    out = pathlib.Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        objects = []
        for n, archive in enumerate((libcxx, libcxxabi)):
            objects += extract(archive, pathlib.Path(tmp) / str(n))
        exported = sum(export_symbols(o) for o in objects)
        part = out.with_name(out.name + ".part")
        script = pathlib.Path(tmp) / "version.map"
        script.write_text(VERSION_SCRIPT)
        subprocess.run([zig, "cc", "-target", "x86_64-linux-gnu.2.28", "-shared", "-o", str(part),
                        "-Wl,-soname," + out.name, "-Wl,-Bsymbolic", "-s",
                        "-Wl,--version-script=" + str(script), *map(str, objects),
                        "/lib/x86_64-linux-gnu/libgcc_s.so.1", "-Wl,--allow-shlib-undefined"],
                       check=True)
        shutil.move(str(part), str(out))
    print("%s: %d objects, %d symbols exported" % (out, len(objects), exported), file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 5:
        raise SystemExit(__doc__)
    main(*sys.argv[1:])
