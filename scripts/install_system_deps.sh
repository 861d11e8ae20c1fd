#!/usr/bin/env bash
# Installs the Debian packages the build needs, only those missing. The CUDA toolkit is optional
# (without it the build has no CUDA plugin) and is not installed here. OpenCL: headers and the ICD
# loader to build opencl_backend.so, PoCL (an OpenCL implementation on the CPU) to test it, clinfo
# to look at the devices, CLBlast for the matmul comparison in backends/opencl/NOTES.md.
# Usage: install_system_deps.sh [docs]   (docs: also what `make docs` needs)
set -euo pipefail
# clang, libclang-rt-dev (libFuzzer, sanitizer runtimes) and libomp-dev (OpenMP for clang) are
# for `make fuzz`.
packages=(build-essential cmake ninja-build python3 python3-venv python3-dev libboost-dev
          doctest-dev libopenblas-dev clang-format clang libc++-dev libc++abi-dev libclang-rt-dev
          libomp-dev opencl-headers ocl-icd-opencl-dev pocl-opencl-icd clinfo libclblast-dev)
# openmpi-bin: mpirun and libmpi.so.40 for dlarray.distributed on CPU arrays (tests/python/test_mpi.py);
# dlarray opens libmpi at run time, so no MPI headers are needed to build.
packages+=(openmpi-bin)
docs_packages=(doxygen graphviz)
if [ "${1:-}" = docs ]; then
  packages=("${docs_packages[@]}")
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "missing packages: ${missing[*]} (no apt-get here: install them by hand)" >&2
  exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing: ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
