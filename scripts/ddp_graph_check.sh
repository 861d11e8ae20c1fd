#!/usr/bin/env bash
# Data-parallel plans as CUDA graph segments on 2 GPUs (issue 24): a one-GPU smoke test, the
# multi-GPU tests, then bench/ddp_overlap.py (MNIST batch 1000, MLP 4096x3), each under its own
# timeout, in under 10 minutes. Run from the repository root after
#     CUDA_ARCHS=90-real scripts/gpu_check.sh build
# (which installs into /tmp/dlarray_site). Full logs go to $OUT/ddp_graph_logs (or
# /tmp/ddp_graph_logs); stdout gets the summaries. A hang shows up as: pytest's faulthandler dump
# (no test may go 60 s without one), the ranks' own dumps (ddp_graph_worker.py re-arms a 60 s
# faulthandler at each progress line, then exits), and `timeout` ending the step.
set -uo pipefail
logs=${OUT:+$OUT/}ddp_graph_logs
[ -n "${OUT:-}" ] || logs=/tmp/ddp_graph_logs
mkdir -p "$logs"
export PYTHONPATH=/tmp/dlarray_site PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN
export DLARRAY_CACHE_DIR=/tmp/dlarray_cache DLARRAY_DIST_TIMEOUT=60
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
step() { echo "== $1 ($(date +%T))"; }
# pytest <timeout s> <log> <files...>: in tests/python, the summary lines on stdout
run_pytest() {
  local limit=$1 log=$2
  shift 2
  (cd tests/python && timeout -k 10 "$limit" python3 -X faulthandler -m pytest -q -s -ra \
     -p no:cacheprovider -o faulthandler_timeout=60 "$@") >"$log" 2>&1
  local rc=$?
  echo "exit $rc$( ((rc == 124 || rc == 137)) && echo " (TIMED OUT after $limit s)")"
  grep -E "^(FAILED|ERROR)|^SKIPPED|Timeout \(0:|^\[rank [0-9].*(done|TIMED|differ)" "$log" \
    | cut -c1-300 | head -40
  if ((rc != 0)); then  # why: the failures' text, or the dumps of a hang
    grep -nE "Timeout \(0:|Thread 0x|File \"|Error|error|hang|did not finish" "$log" \
      | cut -c1-240 | head -60
    tail -25 "$log" | cut -c1-300
  fi
  tail -1 "$log"
}

step "machine"
git log -1 --format='%h %s' | cut -c1-100
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader
python3 -c "import dlarray, dlarray.distributed as d; print('dlarray', dlarray.__file__); \
print('NCCL', d.nccl_library())" 2>&1 | tail -2

step "1 GPU: segmented graphs, one-rank group (smoke), graph and fused-update tests"
CUDA_VISIBLE_DEVICES=0 run_pytest 110 "$logs/smoke.log" test_ddp_graph.py test_cuda_graphs.py \
  test_fuse_sgd_executor.py
grep -E "^\[rank 0 .*(done|group of)" "$logs/smoke.log" | cut -c1-300

step "2 GPUs: multi-GPU tests"
nvidia-smi topo -m 2>/dev/null | head -3
run_pytest 320 "$logs/multigpu.log" test_ddp_graph.py test_ddp_gpu.py test_ddp.py \
  test_mnist_data_parallel.py test_multigpu.py test_distributed_gpu.py
grep -E "^\[rank [01] .*done" "$logs/multigpu.log" | cut -c1-300

step "2 GPUs: bench/ddp_overlap.py (MNIST batch 1000, MLP 4096x3)"
timeout -k 10 140 python3 -X faulthandler -m dlarray.distributed.run --nproc-per-node 2 \
  bench/ddp_overlap.py --json "$logs/ddp_overlap.json" >"$logs/ddp_overlap.txt" 2>&1
rc=$?
echo "exit $rc$( ((rc == 124 || rc == 137)) && echo " (TIMED OUT after 140 s)")"
if ((rc != 0)); then tail -40 "$logs/ddp_overlap.txt" | cut -c1-240; fi
grep -v "^\[" "$logs/ddp_overlap.txt" | grep -v "^NCCL\|^ *$" | tail -14 | cut -c1-240
step done
