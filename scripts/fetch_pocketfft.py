#!/usr/bin/env python3
"""Fetches pocketfft's header-only C++ FFT (BSD-3-Clause) into an ignored folder, by default
third_party/pocketfft/: pocketfft_hdronly.h and its LICENSE.md.

pocketfft is not a Debian package; NumPy's source distribution on PyPI carries it (NumPy's own
numpy.fft is built on it). The archive is pinned by URL and SHA-256, and the two extracted files
are checked against their own SHA-256, so every machine builds the same code. The CPU backend's
CMake runs this script when the header is missing; a machine without a network (the GPU machine)
gets the folder copied from one that has it, or names another with -DDLARRAY_POCKETFFT_DIR=...
Usage: fetch_pocketfft.py [destination folder]
"""
import hashlib
import io
import os
import sys
import tarfile
import urllib.request

# numpy 2.4.6's sdist, as https://pypi.org/simple/numpy/ lists it.
URL = ("https://files.pythonhosted.org/packages/d0/ad/"
       "fed0499ce6a338d2a03ebae59cd15093910c8875328855781952abf6c2fe/numpy-2.4.6.tar.gz")
ARCHIVE_SHA256 = "f3a3570c4a2a16746ac2c31a7c7c7b0c186b95ce902e33db6f28094ed7387dda"
MEMBERS = {  # path in the archive -> SHA-256 of the file
    "numpy-2.4.6/numpy/fft/pocketfft/pocketfft_hdronly.h":
        "50f4ddbe60432325f560c706b6f1c49f9e0949fc7f20ae6499f2299e37d9790c",
    "numpy-2.4.6/numpy/fft/pocketfft/LICENSE.md":
        "a85ca13fdf90160b64a0698215868c13b74d835ad0a4e2ba44713b8c5058a056",
}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    default = os.path.join(here, "..", "third_party", "pocketfft")
    dest = sys.argv[1] if len(sys.argv) > 1 else default
    wanted = {os.path.join(dest, os.path.basename(m)): h for m, h in MEMBERS.items()}
    if all(os.path.exists(p) and sha256(open(p, "rb").read()) == h for p, h in wanted.items()):
        return 0
    print("fetch_pocketfft: downloading %s" % URL, file=sys.stderr)
    try:
        with urllib.request.urlopen(URL, timeout=120) as response:
            archive = response.read()
    except OSError as e:
        print("fetch_pocketfft: cannot download %s (%s). Copy third_party/pocketfft/ from a "
              "machine that has it, or pass -DDLARRAY_POCKETFFT_DIR=<folder with "
              "pocketfft_hdronly.h>" % (URL, e), file=sys.stderr)
        return 1
    if sha256(archive) != ARCHIVE_SHA256:
        print("fetch_pocketfft: %s has SHA-256 %s, expected %s" % (URL, sha256(archive),
                                                                   ARCHIVE_SHA256), file=sys.stderr)
        return 1
    os.makedirs(dest, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        for member, digest in MEMBERS.items():
            data = tar.extractfile(member).read()
            if sha256(data) != digest:
                print("fetch_pocketfft: %s has SHA-256 %s, expected %s" % (member, sha256(data),
                                                                           digest), file=sys.stderr)
                return 1
            with open(os.path.join(dest, os.path.basename(member)), "wb") as f:
                f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
