#!/usr/bin/env bash
# A manylinux_2_28 wheel (glibc >= 2.28 x86-64; auditwheel adds manylinux_2_27 too, as nothing
# in it needs more) built on a newer machine: compiled by zig's clang against glibc 2.28's symbol
# versions with one shared libc++ for all its libraries (scripts/zig/c++), then repaired by
# auditwheel, which checks the tag. The CUDA plugin is left out: nvcc accepts neither zig's clang nor libc++ as its
# host compiler (docs/install.md).
#
#   bash scripts/build_portable_wheel.sh [OUTDIR]     # default build/dist; prints the wheel
#
# PY (default .venv/bin/python) is the interpreter the wheel is for; its venv gets ziglang.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
OUT=${1:-build/dist}
BUILD=${PORTABLE_BUILD_DIR:-build/portable}
ZIG_VERSION=0.17.1  # the toolchain is pinned: a new zig may bring a new clang and new warnings

"$PY" -m pip install -q "ziglang==$ZIG_VERSION"
DLARRAY_ZIG=$("$PY" -c 'import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))')
export DLARRAY_ZIG
# zig's own cache (libc++ and the glibc stubs, built once per target) beside the build.
export ZIG_GLOBAL_CACHE_DIR=${ZIG_GLOBAL_CACHE_DIR:-$PWD/build/zig-cache}
export CC=$PWD/scripts/zig/cc CXX=$PWD/scripts/zig/c++
# zig's libc++ and libc++abi archives for this target (it builds them at the first C++ link and
# names them in -v's output), made into one shared library that every C++ library of the wheel
# links (scripts/zig/shared_libcxx.py says why);
# scripts/zig/c++ links it, with libgcc_s as the unwinder.
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
echo 'int dlarray_probe() { return 0; }' >"$probe/p.cc"
"$DLARRAY_ZIG" c++ -target x86_64-linux-gnu.2.28 -shared -fPIC "$probe/p.cc" -o "$probe/p.so" -v \
  >"$probe/log" 2>&1
libcxx=$(grep -oE '[^ ]*/libc\+\+\.a' "$probe/log" | head -1)
libcxxabi=$(grep -oE '[^ ]*/libc\+\+abi\.a' "$probe/log" | head -1)
[[ -f $libcxx && -f $libcxxabi ]] || { cat "$probe/log" >&2; echo "no libc++ archives from zig" >&2; exit 1; }
LIBCXX_DIR=$PWD/build/zig-libcxx
"$PY" scripts/zig/shared_libcxx.py "$DLARRAY_ZIG" "$libcxx" "$libcxxabi" "$LIBCXX_DIR/libdlarray_c++.so.1"
export DLARRAY_ZIG_LIBCXX=$LIBCXX_DIR/libdlarray_c++.so.1
echo "portable wheel: zig $("$DLARRAY_ZIG" version) for glibc 2.28 (scripts/zig/c++)," \
  "shared libc++: $DLARRAY_ZIG_LIBCXX" >&2

rm -rf "$OUT/linux" "$OUT"/dlarray-*.whl  # the dlarray-cuda wheel (make cuda-wheel) stays
mkdir -p "$OUT"
# CMake learns the Debian multiarch folder (/usr/lib/x86_64-linux-gnu, where libOpenCL.so is)
# from the compiler's link folders; zig's has none: CMAKE_LIBRARY_ARCHITECTURE says it.
"$PY" -m pip wheel -q --no-build-isolation --no-deps -w "$OUT/linux" \
  --config-settings=build-dir="$BUILD" \
  --config-settings=cmake.define.DLARRAY_CUDA=OFF \
  --config-settings=cmake.define.DLARRAY_BUILD_TESTS=OFF \
  --config-settings=cmake.define.CMAKE_LIBRARY_ARCHITECTURE=x86_64-linux-gnu .
# The OpenCL ICD loader stays the system's: Debian 12's libOpenCL.so.1 needs glibc 2.34, and
# every OpenCL driver comes with a loader (Debian/Ubuntu: ocl-icd-libopencl1, RHEL: ocl-icd).
# Without one the OpenCL plugin reports that it cannot open libOpenCL.so.1; the rest works.
# auditwheel finds the shared libc++ on LD_LIBRARY_PATH and copies it into the wheel.
LD_LIBRARY_PATH=$LIBCXX_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
  "$PY" scripts/repair_wheel.py --plat manylinux_2_28_x86_64 --exclude 'libOpenCL.so.*' \
  "$OUT"/linux/dlarray-*.whl "$OUT"
