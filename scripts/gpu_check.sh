#!/usr/bin/env bash
# The GPU machine's whole check in one command: build and install (no package downloads), the
# doctest and pytest suites, compute-sanitizer (memcheck, racecheck, synccheck) over the GPU
# tests, and the GPU benchmarks.
# Logs go to $OUT (or ./gpu_logs). Usage: scripts/gpu_check.sh [quick|full]
set -uo pipefail
mode=${1:-full}
out=${OUT:-$PWD/gpu_logs}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 DLARRAY_TEST_PLUGIN_DIR=$PWD/build/gpu/test_plugins
site=/tmp/dlarray_site
step() { echo "== $1 ($(date +%T))"; }

step build
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$out/gpu.txt"
CC=/usr/bin/gcc CXX=/usr/bin/g++ CUDAHOSTCXX=/usr/bin/g++ python3 -m pip install -q --no-build-isolation --no-deps --target "$site" --upgrade \
  --config-settings=build-dir=build/gpu --config-settings=cmake.define.DLARRAY_BUILD_TESTS=ON \
  . >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
export PYTHONPATH=$site
grep -i "warning" "$out/build.log" | head -5

step ctest
ctest --test-dir build/gpu --output-on-failure -j8 >"$out/ctest.log" 2>&1
tail -3 "$out/ctest.log"

step pytest
(cd tests/python && python3 -X faulthandler -m pytest -q -ra -p no:cacheprovider . ) \
  >"$out/pytest.log" 2>&1
tail -15 "$out/pytest.log"

if [ "$mode" = full ]; then
  # memcheck: out-of-bounds and misaligned accesses; racecheck: shared-memory hazards between
  # threads of a block; synccheck: barriers that not every thread reaches. The 1e8-element
  # reductions (marked large) and the out-of-memory test run in the pytest step above.
  for tool in memcheck racecheck synccheck; do
    step "$tool"
    (cd tests/python && compute-sanitizer --tool "$tool" --error-exitcode 9 \
       python3 -m pytest -q -x -p no:cacheprovider -m "not large" \
       test_cuda.py test_ops.py -k "gpu" ) \
      >"$out/$tool.log" 2>&1
    echo "$tool exit $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed|failed" "$out/$tool.log" | tail -3
  done

  step bench-ops
  python3 bench/ops.py --device gpu --repeat 15 --json "$out/ops_gpu.json" >"$out/ops_gpu.txt" 2>&1
  cat "$out/ops_gpu.txt"

  step bench-mlp
  python3 bench/mlp_step.py --device gpu >"$out/mlp_gpu.txt" 2>&1
  cat "$out/mlp_gpu.txt"

  step mnist
  python3 examples/mnist.py --device gpu --model mlp --epochs 10 >"$out/mnist_gpu.txt" 2>&1
  tail -4 "$out/mnist_gpu.txt"
fi
step done
