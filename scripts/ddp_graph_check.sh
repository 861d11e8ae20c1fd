#!/usr/bin/env bash
# Data-parallel plans as CUDA graph segments on 2 GPUs (issue 24): a one-GPU smoke test, the
# multi-GPU tests, then bench/ddp_overlap.py (MNIST batch 1000, MLP 4096x3), each step under its
# own time limit, about 9.5 minutes at most in all. Run from the repository root after
#     CUDA_ARCHS=90-real scripts/gpu_check.sh build
# (which installs into /tmp/dlarray_site). Full logs go to $OUT/ddp_graph_logs (or
# /tmp/ddp_graph_logs); stdout gets the summaries.
# A hang shows up as: pytest's faulthandler dump (-o faulthandler_timeout=60: a test running
# 60 s dumps, which a slow test may do without hanging), the ranks' own dumps
# (ddp_graph_worker.py re-arms a 60 s faulthandler at each progress line, then exits), and at a
# step's time limit the Python stacks of every process this script started, still running
# (a sitecustomize registers SIGUSR1 -> faulthandler into $logs/stacks/<pid>.txt; ranks run in
# sessions of their own, so they are found by an environment mark, not by process group), plus
# their native stacks where gdb is installed; then they are killed.
set -uo pipefail
logs=${OUT:+$OUT/}ddp_graph_logs
[ -n "${OUT:-}" ] || logs=/tmp/ddp_graph_logs
mkdir -p "$logs/stacks/site"
logs=$(realpath "$logs")  # the tests run in tests/python: every path absolute
stacks=$logs/stacks
mark=$$
cat >"$stacks/site/sitecustomize.py" <<EOF
import faulthandler, os, signal
if os.environ.get("DDP_GRAPH_CHECK") == "$mark":
    _stack_file = open(os.path.join("$stacks", "%d.txt" % os.getpid()), "w")
    faulthandler.register(signal.SIGUSR1, file=_stack_file, all_threads=True)
EOF
export DDP_GRAPH_CHECK=$mark PYTHONPATH=/tmp/dlarray_site:$stacks/site PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN DLARRAY_CACHE_DIR=/tmp/dlarray_cache
export DLARRAY_DIST_TIMEOUT=60 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
step() { echo "== $1 ($(date +%T))"; }

marked() {  # the Python processes this script started that still run
  local d
  for d in /proc/[0-9]*; do
    grep -qz "^DDP_GRAPH_CHECK=$mark\$" "$d/environ" 2>/dev/null || continue
    grep -qa python "$d/cmdline" 2>/dev/null && echo "${d#/proc/}"
  done
}

dump_stacks() {
  local pids p f
  pids=$(marked)
  for p in $pids; do kill -USR1 "$p" 2>/dev/null; done
  sleep 3
  for p in $pids; do
    f=$stacks/$p.txt
    echo "--- pid $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-150)"
    # the first thread's frames (faulthandler lists the most recent call first)
    [ -s "$f" ] && awk 'NR > 1 && /^(Thread|Current thread)/ {exit} {print}' "$f" | head -12 \
      | cut -c1-160
    if command -v gdb >/dev/null && ! grep -qa pytest "/proc/$p/cmdline"; then
      timeout 10 gdb -p "$p" -batch -ex "thread apply all bt 12" >"$stacks/$p.native.txt" 2>&1
      awk '/^Thread 1 / {f = 1} f && /^#/ {print; if (++n == 8) exit}' \
        "$stacks/$p.native.txt" | cut -c1-160  # the main thread's native frames
    fi
  done
}

# limited <seconds> <log> <command...>: runs the command in a session of its own; past the
# limit: the stacks of what still runs, then SIGTERM (the launcher stops its ranks), SIGKILL.
limited() {
  local limit=$1 log=$2 pid waited=0 rc p
  shift 2
  setsid "$@" >"$log" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null && ((waited < limit)); do
    sleep 1
    ((waited++))
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "TIMED OUT after $limit s; Python stacks of the processes still running:"
    dump_stacks
    kill -TERM -- "-$pid" 2>/dev/null
    sleep 8
    for p in $(marked); do kill -KILL "$p" 2>/dev/null; done
    kill -KILL -- "-$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    return 124
  fi
  wait "$pid"
  rc=$?
  return $rc
}

# tests <seconds> <log> <files...>: pytest in tests/python, a line per test as it ends
tests() {
  local limit=$1 log=$2 rc
  shift 2
  (cd tests/python && limited "$limit" "$log" python3 -X faulthandler -m pytest -v -s -ra \
     -p no:cacheprovider -o faulthandler_timeout=60 --durations=6 "$@")
  rc=$?
  echo "exit $rc"
  # every test of the data-parallel files, the others' failures, skips' reasons, hang dumps
  grep -E "^test_ddp.*::|^test_.*::.*(FAILED|ERROR)|^(FAILED|ERROR|SKIPPED) |Timeout \(0:" "$log" \
    | sed -E 's/ +\[ *[0-9]+%\]//' | cut -c1-170 | head -45
  if ((rc != 0)); then  # why: the failures' text
    grep -nE "^E  |Error:|error:|did not finish" "$log" | cut -c1-200 | head -30
  fi
  grep -A8 "slowest" "$log" | cut -c1-120
  tail -1 "$log"
}

step "machine"
git log -1 --format='%h %s' | cut -c1-100
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader
python3 -c "import dlarray, dlarray.distributed as d; print('dlarray', dlarray.__file__); \
print('NCCL', d.nccl_library())" 2>&1 | tail -2

step "1 GPU: segmented graphs in a one-rank group (smoke), graph and fused-update tests"
CUDA_VISIBLE_DEVICES=0 tests 120 "$logs/smoke.log" test_ddp_graph.py test_cuda_graphs.py \
  test_fuse_sgd_executor.py

step "2 GPUs: multi-GPU tests"
nvidia-smi topo -m 2>/dev/null | head -3
tests 280 "$logs/multigpu.log" test_ddp_graph.py test_ddp_gpu.py test_mnist_data_parallel.py \
  test_multigpu.py test_distributed_gpu.py test_ddp.py

step "2 GPUs: bench/ddp_overlap.py (MNIST batch 1000, MLP 4096x3)"
limited 120 "$logs/ddp_overlap.txt" python3 -X faulthandler -m dlarray.distributed.run \
  --nproc-per-node 2 bench/ddp_overlap.py --json "$logs/ddp_overlap.json"
rc=$?
echo "exit $rc"
if ((rc != 0)); then tail -30 "$logs/ddp_overlap.txt" | cut -c1-200; fi
grep -vE "^\[|^NCCL|^ *$|NCCL INFO" "$logs/ddp_overlap.txt" | tail -20 | cut -c1-200
find "$stacks" -maxdepth 1 -name "*.txt" -empty -delete
step done
