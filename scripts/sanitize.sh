#!/usr/bin/env bash
# make sanitize: the runtime under the sanitizers, CUDA off.
#   asan  build/asan: core, CPU backend, test plugins and the Python module with ASan + UBSan
#         (-fno-sanitize-recover: the first finding fails the run); ctest, then pytest
#   tsan  build/tsan: core, CPU backend and the C API stress test with ThreadSanitizer
#   all   both (default)
# Findings fail the run; tests/sanitizers/*.supp hold suppressions, each with its reason.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
PY=${PY:-.venv/bin/python}
JOBS=${JOBS:-2}
SUPP=$PWD/tests/sanitizers
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

configure() {  # dir, flags, extra cmake args...
  local dir=$1 flags=$2
  shift 2
  # -O1 with line tables (-g1): what the sanitizers' reports need, and the pybind11 module
  # compiles much faster than at RelWithDebInfo's -O2 -g (CI builds this tree on 2 cores).
  cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" \
    -DCMAKE_MODULE_LINKER_FLAGS="$flags" -DDLARRAY_CUDA=OFF -DDLARRAY_BUILD_TESTS=ON \
    -DDLARRAY_NATIVE=ON -DDLARRAY_KERNEL_OPTIMIZE=-O1 "$@" >/dev/null
}

run_asan() {
  local dir=build/asan
  configure "$dir" "-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
    -DDLARRAY_BUILD_PYTHON=ON -DPython_EXECUTABLE="$PWD/$PY" \
    -Dpybind11_DIR="$("$PY" -m pybind11 --cmakedir)" -DDLARRAY_PACKAGE_LAYOUT=ON
  cmake --build "$dir" -j "$JOBS"
  # The package as the wheel lays it out (the SDK's headers and CMake package included, which the
  # custom-op and out-of-tree plugin tests build against), plus its Python files.
  local site=$dir/site
  rm -rf "$site"
  cmake --install "$dir" --prefix "$site" >/dev/null
  cp -r python/dlarray/. "$site/dlarray/"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$SUPP/ubsan.supp"
  export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:suppressions=$SUPP/asan.supp"
  export LSAN_OPTIONS="suppressions=$SUPP/lsan.supp"
  ctest --test-dir "$dir" --output-on-failure -j "$JOBS"
  # Python is not built with ASan: the runtime must come first (LD_PRELOAD), and libstdc++ with
  # it, or ASan's __cxa_throw interceptor finds no real function to call at the first C++ throw.
  # Leak detection is off for the interpreter: CPython deliberately leaves objects allocated at
  # exit (interned strings, static types), which LSan would report on every run.
  local preload
  preload="$(${CXX:-g++} -print-file-name=libasan.so) $(${CXX:-g++} -print-file-name=libstdc++.so)"
  # Child Python processes need the preload too, so it stays in the environment; the tools the
  # tests run that must not have it get wrappers, first on PATH, that drop it: nvcc (its own
  # programs crash with ASan preloaded) and ldd (which would list the preloaded libraries). The
  # wrapper folder mirrors the toolkit's lib64, which cpp_extension finds next to nvcc's bin/.
  local tools=$PWD/$dir/tools real
  rm -rf "$tools"
  mkdir -p "$tools/bin"
  wrap() {  # name, real path
    printf '#!/bin/sh\nunset LD_PRELOAD\nexec %s "$@"\n' "$2" >"$tools/bin/$1"
    chmod +x "$tools/bin/$1"
  }
  if real=$(command -v ldd); then wrap ldd "$real"; fi
  # nvcc where cpp_extension looks: $DLARRAY_NVCC, $CUDA_HOME/bin, PATH, /usr/local/cuda/bin.
  for real in "${DLARRAY_NVCC:-}" "${CUDA_HOME:+$CUDA_HOME/bin/nvcc}" "$(command -v nvcc || true)" \
    /usr/local/cuda/bin/nvcc; do
    if [ -n "$real" ] && [ -x "$real" ]; then
      wrap nvcc "$real"
      ln -s "$(dirname "$(dirname "$(readlink -f "$real")")")/lib64" "$tools/lib64"
      export DLARRAY_NVCC=$tools/bin/nvcc
      break
    fi
  done
  (cd tests/python &&
    PATH="$tools/bin:$PATH" \
    LD_PRELOAD="$preload" ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" PYTHONPATH="$PWD/../../$site" \
    DLARRAY_TEST_PLUGIN_DIR="$PWD/../../$dir/test_plugins" DLARRAY_CUDA_OFF=1 \
    "../../$PY" -m pytest -q -ra -p no:cacheprovider -m "not large" -n "${PYTEST_JOBS:-2}" \
      --dist loadfile .)
}

run_tsan() {
  local dir=build/tsan
  configure "$dir" "-fsanitize=thread -fno-omit-frame-pointer" -DDLARRAY_BUILD_PYTHON=OFF
  cmake --build "$dir" -j "$JOBS" --target c_api_stress cpu_backend
  # libgomp is not instrumented: one OpenMP thread, so no parallel region runs (the stress test's
  # own threads are what TSan watches).
  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
    TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$SUPP/tsan.supp" \
    "$dir/tests/c_api_stress" "${TSAN_SECONDS:-10}" 8
}

case "$what" in
  asan) run_asan ;;
  tsan) run_tsan ;;
  all) run_asan && run_tsan ;;
  *) echo "usage: $0 [asan|tsan|all]" >&2; exit 2 ;;
esac
