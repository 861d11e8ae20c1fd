#!/usr/bin/env bash
# The GPU check of the cuBLASLt fused products (issue 23): dlarray.linear / linear_weight_grad
# and the executor's dense-layer patterns. Run from the repository root on an H100/H200 after
#     CUDA_ARCHS=90-real scripts/gpu_check.sh build
# (which installs into /tmp/dlarray_site and builds the test plugins in build/gpu/test_plugins).
# Steps, each under its own timeout (about 4 minutes in all): which products run natively per
# dtype (else why not), test_fused_matmul.py on cpu and cuda, the existing executor / fusion /
# MNIST / CUDA graph tests, then bench/mlp_step.py --device gpu (the step with and without the
# products, against PyTorch). Summaries go to stdout, logs to $OUT/cublaslt_logs (or
# /tmp/cublaslt_logs). Exits non-zero when a step failed.
set -uo pipefail
logs=${OUT:+$OUT/}cublaslt_logs
[ -n "${OUT:-}" ] || logs=/tmp/cublaslt_logs
mkdir -p "$logs"
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/dlarray_site DLARRAY_CACHE_DIR=/tmp/dlarray_cache
export DLARRAY_TEST_PLUGIN_DIR=$PWD/build/gpu/test_plugins
status=0
step() { echo "== $1 ($(date +%T))"; }
run() {  # run <name> <seconds> <command...>: logs to $logs/<name>.log, prints its tail
  local name=$1 limit=$2
  shift 2
  step "$name"
  timeout "$limit" "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  tail -25 "$logs/$name.log"
  if ((rc != 0)); then
    echo "!! $name failed (exit $rc; 124: timed out after ${limit}s)"
    status=1
  fi
}

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run native 45 python3 - <<'PY'
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
PY
run test_fused_matmul 60 bash -c "cd tests/python && python3 -X faulthandler -m pytest -q -ra \
  -p no:cacheprovider -s test_fused_matmul.py"
existing=$(cd tests/python && ls test_fuse*.py test_executor*.py test_mnist*.py \
  test_cuda_graphs.py 2>/dev/null | grep -v test_fused_matmul | tr '\n' ' ')
run existing_tests 150 bash -c "cd tests/python && python3 -X faulthandler -m pytest -q -ra \
  -p no:cacheprovider $existing"
run mlp_step 100 python3 bench/mlp_step.py --device gpu --no-busy --epoch-repeats 1 \
  --json "$logs/mlp_step_gpu.json"
step done
exit $status
