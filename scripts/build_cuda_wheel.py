#!/usr/bin/env python3
"""The dlarray-cuda wheel: the CUDA plugin of a dlarray build, packaged on its own.

    python scripts/build_cuda_wheel.py SOURCE_WHEEL OUTDIR     # prints the repaired wheel's path

SOURCE_WHEEL is a dlarray wheel built with the CUDA plugin (`make install`'s, build/wheel): the
plugin is taken from it as installed (RUNPATH $ORIGIN/../../nvidia/cu13/lib, NVIDIA's wheels), so
no second build is needed. The CUDA plugin cannot come from the portable (zig) build: nvcc accepts
neither zig's clang nor libc++ as host compiler (docs/install.md), so it is built by the system's
GCC and auditwheel tags it for this machine's glibc. It is a C library behind the plugin ABI, with
no Python extension: one wheel (py3-none) serves every Python version.

The package is python/dlarray_cuda; its entry point (group dlarray.plugins) makes `import dlarray`
load the plugin. It requires the dlarray of the same version and NVIDIA's runtime wheels for the
toolkit's major version; NCCL (dlarray.nccl) is the extra `nccl`.
"""
import base64
import hashlib
import pathlib
import re
import sys
import tempfile
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import repair_wheel  # noqa: E402

PLUGIN = "dlarray/plugins/cuda_backend.so"
# NVIDIA's wheels for CUDA 13 (the toolkit the plugin is built with; its RUNPATH names cu13).
REQUIRES = ["nvidia-cuda-runtime>=13,<14", "nvidia-cublas>=13,<14", "nvidia-cuda-nvrtc>=13,<14",
            "nvidia-cufft>=12,<13", "nvidia-cusolver>=12,<13"]
EXTRAS = {"nccl": ["nvidia-nccl-cu13"]}
TAG = "py3-none-linux_x86_64"


def metadata(version):
    lines = ["Metadata-Version: 2.1", "Name: dlarray-cuda", "Version: " + version,
             "Summary: The CUDA plugin of dlarray (pip install dlarray[cuda])",
             "License: Apache-2.0", "Requires-Python: >=3.9",
             "Classifier: Environment :: GPU :: NVIDIA CUDA",
             "Classifier: Operating System :: POSIX :: Linux",
             "Requires-Dist: dlarray==" + version]
    lines += ["Requires-Dist: " + r for r in REQUIRES]
    for extra, reqs in EXTRAS.items():
        lines.append("Provides-Extra: " + extra)
        lines += ['Requires-Dist: %s; extra == "%s"' % (r, extra) for r in reqs]
    return "\n".join(lines) + "\n"


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def build(source_wheel, outdir):
    with zipfile.ZipFile(source_wheel) as z:
        if PLUGIN not in z.namelist():
            raise SystemExit("%s has no %s: build it with the CUDA plugin (DLARRAY_CUDA=ON)"
                             % (source_wheel, PLUGIN))
        plugin = z.read(PLUGIN)
    version = (ROOT / "VERSION").read_text().strip()
    dist = "dlarray_cuda-%s.dist-info" % version
    files = {
        "dlarray_cuda/__init__.py": (ROOT / "python" / "dlarray_cuda" / "__init__.py").read_bytes(),
        "dlarray_cuda/lib/cuda_backend.so": plugin,
        dist + "/METADATA": metadata(version).encode(),
        dist + "/WHEEL": ("Wheel-Version: 1.0\nGenerator: dlarray build_cuda_wheel.py\n"
                          "Root-Is-Purelib: false\nTag: %s\n" % TAG).encode(),
        dist + "/entry_points.txt": b"[dlarray.plugins]\ncuda = dlarray_cuda:plugin_path\n",
        dist + "/LICENSE": (ROOT / "LICENSE").read_bytes(),
    }
    record = [record_line(n, d) for n, d in files.items()] + [dist + "/RECORD,,"]
    files[dist + "/RECORD"] = ("\n".join(record) + "\n").encode()
    with tempfile.TemporaryDirectory() as tmp:
        plain = pathlib.Path(tmp) / ("dlarray_cuda-%s-%s.whl" % (version, TAG))
        with zipfile.ZipFile(plain, "w", zipfile.ZIP_DEFLATED) as z:
            for name, data in files.items():
                info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
                info.external_attr = (0o755 if name.endswith(".so") else 0o644) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, data)
        # auditwheel: the manylinux tag this machine's glibc and libstdc++ allow; the CUDA
        # libraries stay out (repair_wheel.EXCLUDES), NVIDIA's wheels bring them.
        return repair_wheel.repair(plain, outdir)


if __name__ == "__main__":
    if len(sys.argv) != 3 or not re.search(r"\.whl$", sys.argv[1]):
        raise SystemExit(__doc__)
    print(build(sys.argv[1], sys.argv[2]))
