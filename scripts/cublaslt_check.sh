#!/usr/bin/env bash
# The GPU check of the fused products (issue 23): dlarray.linear / linear_weight_grad, how the
# CUDA plugin runs each (cuBLASLt algorithms timed against the unfused kernels,
# backends/cuda/cublaslt_tune.cc), the executor's dense-layer patterns, and the MNIST step.
# Run from the repository root on an H100/H200 after
#     CUDA_ARCHS=90-real scripts/gpu_check.sh build
# (which installs into /tmp/dlarray_site and builds the test plugins in build/gpu/test_plugins).
# Steps, each under its own timeout (at most 4 minutes in all):
#   native         per dtype: the MLP's first layer natively, its values and the plugin's choices
#   fused_tests    test_fused_matmul.py and test_fused_matmul_tune.py (cuda and cpu)
#   executor_tests the executor / fusion / CUDA graph / MNIST tests the products touch
#   mlp_step       bench/mlp_step.py --step-only: the step with and without the products,
#                  PyTorch eager and graphed, the kernels' floor, the choices
#   mlp_step_tune0 the same with DLARRAY_CUBLASLT_TUNE=0 (cuBLASLt's first heuristic result)
# then a summary. Logs go to $OUT/cublaslt_logs (or /tmp/cublaslt_logs). Exits non-zero when a
# step failed.
set -uo pipefail
logs=${OUT:+$OUT/}cublaslt_logs
[ -n "${OUT:-}" ] || logs=/tmp/cublaslt_logs
mkdir -p "$logs"
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/dlarray_site DLARRAY_CACHE_DIR=/tmp/dlarray_cache
export DLARRAY_TEST_PLUGIN_DIR=$PWD/build/gpu/test_plugins
status=0
failed=()
step() { echo "== $1 ($(date +%T))"; }
run() {  # run <name> <seconds> <lines of tail> <command...>: logs to $logs/<name>.log
  local name=$1 limit=$2 lines=$3
  shift 3
  step "$name"
  timeout "$limit" "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  tail -"$lines" "$logs/$name.log"
  if ((rc != 0)); then
    echo "!! $name failed (exit $rc; 124: timed out after ${limit}s)"
    status=1
    failed+=("$name")
  fi
}
# pytest in tests/python (a command for timeout, not a function)
pytest_q=(bash -c 'cd tests/python && exec python3 -X faulthandler -m pytest -q -ra \
  -p no:cacheprovider "$@"' pytest)

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
run native 30 40 python3 - <<'PY'
import numpy as np
import dlarray
from dlarray import _linear_api
g = dlarray.gpu(0)
print("linear kernels on:", dlarray.ops.op_info("linear")["devices"])
names = ["float32", "float16", "float64"] + (["bfloat16"] if hasattr(dlarray, "bfloat16") else [])
for name in names:
    dt = np.dtype(dlarray.bfloat16) if name == "bfloat16" else np.dtype(name)
    x = dlarray.array(np.ones((1000, 784), dt), g, dt)
    w = dlarray.array(np.ones((784, 256), dt), g, dt)
    b = dlarray.array(np.ones(256, dt), g, dt)
    before = len(_linear_api.native_failures())
    out = dlarray.linear(x, w, b, relu=True)
    dw, db = dlarray.linear_weight_grad(x, out)
    dlarray.synchronize(g)
    why = _linear_api.native_failures()[before:]
    print("%-8s out[0, 0] %s (want 785), dbias[0] %s (want 785000 but for rounding): %s" % (
        name, out.asnumpy()[0, 0], db.asnumpy()[0],
        "native for both" if not why else "composite for %s" % why))
print("choices:")
print("\n".join(_linear_api.native_choices(g)))
PY
run fused_tests 60 12 "${pytest_q[@]}" -s test_fused_matmul.py test_fused_matmul_tune.py
run executor_tests 75 8 "${pytest_q[@]}" test_fuse_executor.py test_fuse_sgd_executor.py \
  test_cuda_graphs.py test_mnist.py
run mlp_step 45 40 python3 bench/mlp_step.py --device gpu --step-only \
  --json "$logs/mlp_step_gpu.json"
run mlp_step_tune0 30 30 env DLARRAY_CUBLASLT_TUNE=0 python3 bench/mlp_step.py --device gpu \
  --step-only --json "$logs/mlp_step_gpu_tune0.json"

step summary
for name in fused_tests executor_tests; do
  printf '%-15s %s\n' "$name" "$(grep -E '(passed|failed|error)' "$logs/$name.log" | tail -1)"
done
python3 - "$logs" <<'PY'
import json, os, sys
for name, what in (("mlp_step_gpu.json", "timed choices"),
                   ("mlp_step_gpu_tune0.json", "DLARRAY_CUBLASLT_TUNE=0")):
    path = os.path.join(sys.argv[1], name)
    if not os.path.exists(path):
        print("%s: no result" % what)
        continue
    r = json.load(open(path))
    print("%s: step %.4f ms (again %.4f), without the fused products %.4f ms, torch graphed "
          "%s ms, kernel floor %s ms (target <= 0.10 ms)" % (
              what, r["step_ms"], r.get("step_again_ms", float("nan")),
              r.get("step_no_products_ms", float("nan")),
              "%.4f" % r["torch_graph_step_ms"] if "torch_graph_step_ms" in r else "-",
              "%.4f" % r["kernel_floor_ms"] if "kernel_floor_ms" in r else "-"))
    for line in r.get("cublaslt_choices", []):
        print("    " + line)
    if name == "mlp_step_gpu.json" and "kernel_us" in r:
        print("  the step's calls, slowest first (us, each recorded alone):")
        for text, us in sorted(r["kernel_us"], key=lambda c: -c[1]):
            print("    %7.2f  %s" % (us, text))
PY
((status == 0)) || echo "FAILED: ${failed[*]}"
step done
exit $status
