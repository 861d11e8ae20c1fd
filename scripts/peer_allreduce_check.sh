#!/usr/bin/env bash
# The peer-memory all-reduce on 2 GPUs (issue 24): its tests, the multi-GPU tests it changes the
# path of (every small all-reduce, the data-parallel buckets, barriers), then the two benches
# (all_reduce 4 KB-16 MB peer vs NCCL vs torch; data-parallel MNIST with the peer path on and
# off). Each step under its own time limit, about 5 minutes at most in all. Run from the
# repository root after
#     CUDA_ARCHS=90-real scripts/gpu_check.sh build
# (which installs into /tmp/dlarray_site). Full logs go to $OUT/peer_allreduce_logs (or
# /tmp/peer_allreduce_logs); stdout gets the summaries. A hang shows up as pytest's faulthandler
# dump (-o faulthandler_timeout=60) in the step's log, then the step's time limit.
set -uo pipefail
logs=${OUT:+$OUT/}peer_allreduce_logs
[ -n "${OUT:-}" ] || logs=/tmp/peer_allreduce_logs
mkdir -p "$logs"
logs=$(realpath "$logs")  # the tests run in tests/python: every path absolute
export PYTHONPATH=/tmp/dlarray_site PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN DLARRAY_CACHE_DIR=/tmp/dlarray_cache
export DLARRAY_DIST_TIMEOUT=60 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
step() { echo "== $1 ($(date +%T))"; }

# tests <seconds> <log> <files...>: pytest in tests/python under timeout; the summary lines
tests() {
  local limit=$1 log=$2 rc
  shift 2
  (cd tests/python && timeout -k 10 "$limit" python3 -X faulthandler -m pytest -v -s -ra \
     -p no:cacheprovider -o faulthandler_timeout=60 --durations=6 "$@" >"$log" 2>&1)
  rc=$?
  echo "exit $rc$( ((rc == 124)) && echo ' (TIMED OUT)')"
  grep -E "^test_peer.*::|^test_.*::.*(FAILED|ERROR)|^(FAILED|ERROR|SKIPPED) " "$log" \
    | sed -E 's/ +\[ *[0-9]+%\]//' | cut -c1-170 | head -40
  grep -E "Timeout \(0:|^peer all-reduce on 2|^1000\+ calls" "$log" | cut -c1-170 | head -8
  if ((rc != 0)); then
    grep -nE "^E  |Error:|error:|did not finish|peer all-reduce" "$log" | cut -c1-220 | head -30
  fi
  tail -1 "$log"
}

# bench <seconds> <log> <args...>: a bench on 2 GPUs through the launcher, under timeout
bench() {
  local limit=$1 log=$2 rc
  shift 2
  timeout -k 10 "$limit" python3 -X faulthandler -m dlarray.distributed.run --nproc-per-node 2 \
    "$@" >"$log" 2>&1
  rc=$?
  echo "exit $rc$( ((rc == 124)) && echo ' (TIMED OUT)')"
  if ((rc != 0)); then tail -30 "$log" | cut -c1-200; fi
  grep -vE "^\[|^NCCL|^ *$|NCCL INFO" "$log" | tail -24 | cut -c1-200
}

step "machine"
git log -1 --format='%h %s' | cut -c1-100
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader
nvidia-smi topo -m 2>/dev/null | head -3
python3 -c "import dlarray, dlarray.distributed as d; print('dlarray', dlarray.__file__); \
print('NCCL', d.nccl_library())" 2>&1 | tail -2

step "2 GPUs: test_peer_allreduce.py"
tests 120 "$logs/peer_tests.log" test_peer_allreduce.py

step "2 GPUs: multi-GPU tests (all-reduces up to 4 MB now take the peer path)"
tests 160 "$logs/multigpu.log" test_multigpu.py test_distributed_gpu.py test_ddp_gpu.py \
  test_ddp_graph.py

step "2 GPUs: bench/distributed.py all_reduce 4 KB-16 MB (peer = ours by default; nccl us)"
bench 60 "$logs/distributed.txt" bench/distributed.py --parts all_reduce \
  --sizes 4KB,64KB,1MB,4MB,16MB --json "$logs/distributed.json"

step "2 GPUs: bench/ddp_overlap.py MNIST batch 1000 (peer on; _nccl rows: off)"
bench 60 "$logs/ddp_overlap.txt" bench/ddp_overlap.py --models mnist --steps 20 \
  --json "$logs/ddp_overlap.json"
step done
