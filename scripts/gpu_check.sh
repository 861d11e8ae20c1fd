#!/usr/bin/env bash
# The GPU machine's check in one command: build and install (no package downloads), the doctest
# and pytest suites, compute-sanitizer over the GPU tests, and the GPU benchmarks.
#
# Usage: scripts/gpu_check.sh [STAGE...]   stages: build test sanitize sanitize-api bench mnist
#        array-api multigpu bench-api
#        (default: build test sanitize bench mnist); "quick" = build test. Stages may be run in
#        separate calls on a warm machine: later stages reuse the install in /tmp/dlarray_site.
#        sanitize-api: compute-sanitizer over the array API's kernels. multigpu (two GPUs or more):
#        the several-GPU and NCCL tests, bench/distributed.py through the launcher, and MNIST
#        data-parallel on 2 GPUs against 1, then bench/distributed.py's all_reduce on two
#        one-GPU "nodes" with NCCL's network transport forced. array-api: the array API
#        conformance suite on cuda:0 (scripts/array_api.sh; the suite from ARRAY_API_TESTS_DIR,
#        e.g. a copy carried as .aapi, and its packages: hypothesis, ndindex, pytest-json-report).
# BASELINE=<dir of an older source tree>: the build stage also builds that tree, and the bench stage
#        runs its bench/ops.py in the same run, alternating with this tree's ROUNDS (default 3)
#        times each, so "no op got slower" is measured, not remembered (bench/compare.py).
# CUDA_ARCHS=<list> builds only those CUDA architectures (e.g. 90-real on an H100/H200).
# SANITIZE_TIMEOUT=<s> (default 540): the limit of each compute-sanitizer process.
# The CPU FFT needs third_party/pocketfft, which a build here fetches from PyPI (docs/fft.md): a
#        machine without network needs it carried along (or -DDLARRAY_POCKETFFT_DIR).
# PYTEST_JOBS=<n> (test stage, needs pytest-xdist): the pytest files in n processes.
# SHARD=<i>/<n> (test stage): ctest and the pytest files i, i+n, i+2n, ... (1-based; hostile/ with
#        shard 1), so that the suite fits calls of 10 minutes (serially it takes about 13 on an
#        H100): run SHARD=1/2 and SHARD=2/2 one after the other on the warm machine, never at
#        once (the large-array tests of two processes exhaust the GPU's memory between them).
# Summaries go to stdout; every log goes to $OUT/gpu_logs/ as it is written (so a run cut off by
# its time limit still returns what it did), or /tmp/gpu_logs without $OUT.
set -uo pipefail
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(build test sanitize bench mnist)
[ "${stages[*]}" = quick ] && stages=(build test)
[ "${stages[*]}" = full ] && stages=(build test sanitize bench mnist)
logs=${OUT:+$OUT/}gpu_logs
[ -n "${OUT:-}" ] || logs=/tmp/gpu_logs
mkdir -p "$logs"
export PYTHONUNBUFFERED=1 DLARRAY_TEST_PLUGIN_DIR=$PWD/build/gpu/test_plugins
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export DLARRAY_CACHE_DIR=/tmp/dlarray_cache CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
arch_define=()
[ -n "${CUDA_ARCHS:-}" ] && arch_define=(--config-settings=cmake.define.CMAKE_CUDA_ARCHITECTURES="$CUDA_ARCHS")
site=/tmp/dlarray_site
step() { echo "== $1 ($(date +%T))"; }
has() { [[ " ${stages[*]} " == *" $1 "* ]]; }
install_tree() {  # install_tree <source dir> <target site> <build dir> <log>
  (cd "$1" && CC=/usr/bin/gcc CXX=/usr/bin/g++ CUDAHOSTCXX=/usr/bin/g++ python3 -m pip install \
     -q --no-build-isolation --no-deps --target "$2" --upgrade \
     --config-settings=build-dir="$3" --config-settings=cmake.define.DLARRAY_BUILD_TESTS=ON \
     "${arch_define[@]}" . >"$4" 2>&1) || { tail -40 "$4"; return 1; }
}
trap 'step done' EXIT
final_status=0  # a failed check stage (sanitize) makes the script fail once every stage ran

if has build; then
  step build
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$logs/gpu.txt"
  if [ -n "${BASELINE:-}" ]; then
    install_tree "$BASELINE" /tmp/dlarray_base "$BASELINE/build/gpu" "$logs/build_base.log" &
  fi
  install_tree "$PWD" "$site" build/gpu "$logs/build.log" || exit 1
  wait
  grep -i "warning" "$logs/build.log" | head -5
fi
export PYTHONPATH=$site

if has test; then
  shard=${SHARD:-1/1}
  shard_i=${shard%/*} shard_n=${shard#*/}
  if ! [[ $shard_i =~ ^[0-9]+$ && $shard_n =~ ^[0-9]+$ ]] || ((shard_i < 1 || shard_i > shard_n)); then
    echo "SHARD=$shard: expected i/n with 1 <= i <= n" >&2
    exit 2
  fi
  tests=(.)
  if ((shard_n > 1)); then
    mapfile -t all < <(cd tests/python && ls test_*.py)
    tests=()
    ((shard_i == 1)) && tests=(hostile)
    for k in "${!all[@]}"; do
      ((k % shard_n == shard_i - 1)) && tests+=("${all[k]}")
    done
  fi
  if ((shard_i == 1)); then
    step ctest
    ctest --test-dir build/gpu --output-on-failure -j8 >"$logs/ctest.log" 2>&1
    tail -3 "$logs/ctest.log"
  fi
  step "pytest (shard $shard: ${#tests[@]} entries)"
  log="$logs/pytest${SHARD:+_${shard_i}of${shard_n}}.log"
  # PYTEST_JOBS=<n> (with pytest-xdist installed): the files spread over n processes. Mind the
  # GPU's memory: the large-array tests of several processes add up, and JAX would take 75 % of
  # it per process at import (4 processes on an H200 ran out of memory in 13 tests), so JAX
  # allocates as it goes then.
  jobs=()
  if [ -n "${PYTEST_JOBS:-}" ]; then
    jobs=(-n "$PYTEST_JOBS" --dist loadfile)
    export XLA_PYTHON_CLIENT_PREALLOCATE=false
  fi
  (cd tests/python && python3 -X faulthandler -m pytest -q -ra -p no:cacheprovider "${jobs[@]}" \
    "${tests[@]}") >"$log" 2>&1
  grep -E "^(FAILED|ERROR)" "$log" | head -30
  grep -E "^SKIPPED" "$log" | cut -c1-160 | head -15
  tail -1 "$log"
fi

# compute-sanitizer: <tool> runs pytest with -k <expression> over the test files; the log and the
# exit status go to $logs/<tool><suffix>.log/.rc. JAX would take 75 % of the GPU per process at
# import, so three sanitized processes ran out of memory (reported as errors by memcheck): it
# allocates as it goes here.
sanitize() {  # sanitize <tool> <log suffix> <pytest -k expression> <test files...>
  local tool=$1 suffix=$2 k=$3
  shift 3
  (cd tests/python && DLARRAY_UNDER_SANITIZER=1 XLA_PYTHON_CLIENT_PREALLOCATE=false \
     timeout "${SANITIZE_TIMEOUT:-540}" compute-sanitizer --tool "$tool" --error-exitcode 9 \
     python3 -m pytest -q -p no:cacheprovider -m "not large" -k "$k" "$@") \
    >"$logs/$tool$suffix.log" 2>&1
  echo $? >"$logs/$tool$suffix.rc"
}
sanitize_summary() {  # sanitize_summary <log suffix> <tools...>: fails the script on any report
  local suffix=$1 status=0 tool rc
  shift
  for tool in "$@"; do
    rc=$(cat "$logs/$tool$suffix.rc")
    echo "$tool$suffix exit $rc"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed|failed|no tests ran" "$logs/$tool$suffix.log" | tail -3
    [ "$rc" = 0 ] || status=1
  done
  [ "$status" = 0 ] || { echo "sanitize$suffix: FAILED (logs in $logs)"; final_status=1; }
}

if has sanitize; then
  # memcheck and synccheck: every GPU test of these files. racecheck: the tests of the kernels
  # that share memory or exchange values within a warp (reductions, softmax, cross-entropy, every
  # rtc kernel incl. the seeds' and the reorg layer's), but no training loop: under racecheck one
  # MNIST epoch takes minutes, the rest about 10 s. The three tools run at once (one GPU, separate
  # processes), each its own pytest; any report or failed test fails the stage. Tests are chosen by
  # their device id, cuda(N) ("gpu" names the tests written for the GPU).
  gpu_tests=(test_cuda.py test_ops.py test_sigmoid_plugin.py test_seed_ctypes.py
             test_custom.py test_custom_autodiff.py test_custom_op_node.py test_rtc_gpu.py
             test_rtc_layers.py test_dtypes.py test_views.py test_operators.py test_interop_gpu.py
             test_elementwise_table.py)
  race_tests=(test_cuda.py test_ops.py test_dtypes.py test_rtc_gpu.py test_rtc_layers.py
              test_custom_seed.py)
  race_k="(gpu or cuda) and (reduce or softmax or entropy or shared or reorg or rtc_gpu or seed)"
  race_k+=" and not mnist and not mlp"
  step "compute-sanitizer memcheck, synccheck, racecheck"
  sanitize memcheck "" "gpu or cuda" "${gpu_tests[@]}" &
  sanitize synccheck "" "gpu or cuda" "${gpu_tests[@]}" &
  sanitize racecheck "" "$race_k" "${race_tests[@]}" &
  wait
  sanitize_summary "" memcheck synccheck racecheck
fi

if has sanitize-api; then
  # The array API's kernels (a separate call: the set above fills its 10 minutes): reductions
  # and scans, complex math, linalg (cuSOLVER, batched), FFT, indexing, sort, fused kernels.
  # memcheck over all of them in two processes; racecheck over the reductions and the sort,
  # whose kernels share memory. Not test_fuse.py: NVRTC compiles each of its kernels under the
  # tool, about 7 s a test (66 tests with no report in 500 s on an H100); run it alone after a
  # change to the code generator.
  api_a=(test_api_reduce.py test_api_reduce_cumulative.py test_cmath.py
         test_cmath_compare_by_const.py test_api_index.py test_api_index_mixed.py)
  api_b=(test_linalg_complex.py test_api_linalg_main.py test_api_linalg_factor.py
         test_api_linalg_compose.py test_api_fft.py test_api_complex.py test_api_manip.py)
  api_b+=(test_gpulinalg.py)  # gpulinalg: the _nd cuFFT plans, batched Jacobi eigh/svd, Xpotrf
  step "compute-sanitizer memcheck (array API kernels), racecheck (reductions, sort)"
  sanitize memcheck _api_a "cuda" "${api_a[@]}" &
  sanitize memcheck _api_b "cuda" "${api_b[@]}" &
  sanitize racecheck _api "cuda and (reduc or sum or argm or sort or cumulative)" \
    test_api_reduce.py test_api_reduce_cumulative.py test_api_index.py &
  wait
  sanitize_summary _api_a memcheck
  sanitize_summary _api_b memcheck
  sanitize_summary _api racecheck
fi

if has multigpu; then
  step multigpu-tests
  nvidia-smi topo -m 2>/dev/null | head -4 | tee "$logs/topo.txt"
  (cd tests/python && python3 -X faulthandler -m pytest -q -s -ra -p no:cacheprovider \
     test_multigpu.py test_distributed_gpu.py test_distributed.py test_mnist_data_parallel.py \
     test_peer_allreduce.py) >"$logs/multigpu.log" 2>&1
  grep -E "^(FAILED|ERROR)|^(NCCL|MNIST|gpu\(0\)) " "$logs/multigpu.log" | cut -c1-200 | head -30
  grep -E "^SKIPPED" "$logs/multigpu.log" | cut -c1-160 | head -8
  tail -1 "$logs/multigpu.log"
  step bench-distributed
  timeout 480 python3 -m dlarray.distributed.run --nproc-per-node 2 bench/distributed.py \
    --json "$logs/distributed.json" >"$logs/distributed.txt" 2>&1
  echo "exit $?"
  grep -v "^\[" "$logs/distributed.txt" | tail -30
  step ddp-overlap  # the executor's data-parallel mode: tests, then 1 vs 2 GPUs (issue 24)
  (cd tests/python && python3 -X faulthandler -m pytest -q -ra -p no:cacheprovider \
     test_ddp_gpu.py test_ddp.py test_ddp_graph.py) >"$logs/ddp.log" 2>&1
  grep -E "^(FAILED|ERROR|SKIPPED)" "$logs/ddp.log" | cut -c1-200 | head -10
  tail -1 "$logs/ddp.log"
  timeout 480 python3 -m dlarray.distributed.run --nproc-per-node 2 bench/ddp_overlap.py \
    --json "$logs/ddp_overlap.json" >"$logs/ddp_overlap.txt" 2>&1
  echo "exit $?"
  grep -v "^\[" "$logs/ddp_overlap.txt" | tail -24
  # Two "nodes" of one GPU each on this host, NCCL's network transport forced (issue 24 item 4).
  step bench-two-nodes
  port=$((29600 + RANDOM % 300))
  for k in 0 1; do
    CUDA_VISIBLE_DEVICES=$k NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 timeout 300 python3 -m \
      dlarray.distributed.run --nnodes 2 --node-rank $k --nproc-per-node 1 --master-port $port \
      bench/distributed.py --parts all_reduce --json "$logs/two_nodes.json" \
      >"$logs/two_nodes_$k.txt" 2>&1 &
  done
  wait
  grep -v "^\[" "$logs/two_nodes_0.txt" | tail -12
fi

if has bench; then
  step bench-ops
  python3 bench/ops.py --device gpu --repeat 15 --json "$logs/ops_gpu.json" \
    >"$logs/ops_gpu.txt" 2>&1
  cat "$logs/ops_gpu.txt"
  if [ -n "${BASELINE:-}" ] && [ -d /tmp/dlarray_base ]; then
    # The two trees alternate, ROUNDS times each (the first round of this tree is the one above),
    # so that clock and load drift fall on both; bench/compare.py reduces the rounds per row.
    rounds=${ROUNDS:-3}
    ours=("$logs/ops_gpu.json") base=()
    for ((r = 1; r <= rounds; r++)); do
      step "bench-ops-baseline round $r"
      (cd "$BASELINE" && PYTHONPATH=/tmp/dlarray_base python3 bench/ops.py --device gpu \
         --repeat 15 --json "$logs/ops_gpu_base_$r.json") >"$logs/ops_gpu_base_$r.txt" 2>&1
      base+=("$logs/ops_gpu_base_$r.json")
      ((r == rounds)) && break
      python3 bench/ops.py --device gpu --repeat 15 --json "$logs/ops_gpu_$((r + 1)).json" \
        >/dev/null 2>&1
      ours+=("$logs/ops_gpu_$((r + 1)).json")
    done
    python3 bench/compare.py --ours "${ours[@]}" --base "${base[@]}" | tee "$logs/ops_compare.md"
  fi
  step bench-mlp
  python3 bench/mlp_step.py --device gpu --json "$logs/mlp_step_gpu.json" >"$logs/mlp_gpu.txt" 2>&1
  cat "$logs/mlp_gpu.txt"
  step bench-cpp-extension
  python3 bench/cpp_extension.py 2>&1 | tee "$logs/cpp_extension.txt"
  step bench-custom-ops
  python3 bench/custom_ops.py --json "$logs/custom_ops.json" 2>&1 | tee "$logs/custom_ops.txt"
  step bench-dlpack
  python3 bench/dlpack.py --json "$logs/dlpack_cpu.json" 2>&1 | tee "$logs/dlpack_cpu.txt"
  python3 bench/dlpack.py --device gpu --json "$logs/dlpack_gpu.json" 2>&1 |
    tee "$logs/dlpack_gpu.txt"
  step bench-half-precision
  python3 bench/half_precision.py --device gpu --json "$logs/half_precision_gpu.json" 2>&1 |
    tee "$logs/half_precision_gpu.txt"
  step bench-rtc
  python3 bench/rtc.py --json "$logs/rtc.json" 2>&1 | tee "$logs/rtc.txt"
fi

if has bench-api; then
  # Issue 21's speed table: the elementwise functions, reductions and indexing against PyTorch on
  # the GPU, and against NumPy on two of this machine's cores (as CI's machines have), idle.
  for dev in cuda:0 cpu; do
    pin=()
    [ "$dev" = cpu ] && pin=(env OMP_NUM_THREADS=2 taskset -c 0,1)
    for b in elementwise reductions indexing; do
      step "bench-api $b $dev"
      "${pin[@]}" python3 bench/$b.py --device "$dev" 2>&1 | tee "$logs/${b}_${dev%%:*}.txt"
    done
  done
fi

if has array-api; then
  step array-api
  DEVICE=cuda:0 PY=python3 MAX_EXAMPLES=${MAX_EXAMPLES:-200} scripts/array_api.sh \
    >"$logs/array_api_cuda.txt" 2>&1 || final_status=1
  grep -E "^(FAILED|ERROR)" "$logs/array_api_cuda.txt" | head -40
  sed -n '/array API suite, per file/,$p' "$logs/array_api_cuda.txt"
fi

if has mnist; then
  step mnist
  python3 examples/mnist.py --device gpu --model mlp --epochs 10 >"$logs/mnist_gpu.txt" 2>&1
  tail -4 "$logs/mnist_gpu.txt"
  step mnist-custom-ops
  python3 examples/mnist.py --device gpu --model mlp --epochs 10 --custom-ops \
    >"$logs/mnist_gpu_custom.txt" 2>&1
  tail -4 "$logs/mnist_gpu_custom.txt"
  step mnist-reorg
  python3 examples/mnist.py --device gpu --model reorg --epochs 10 >"$logs/mnist_reorg_gpu.txt" 2>&1
  tail -2 "$logs/mnist_reorg_gpu.txt"
fi
exit "$final_status"
