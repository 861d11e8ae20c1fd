#!/usr/bin/env bash
# The CPU op tests once per instruction set path this CPU runs (cpu_backend.so picks the best at
# load; DLARRAY_CPU_ISA forces one): baseline, avx2, avx512. Op tests only, to stay cheap.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
paths=$("$PY" - <<'PYEOF'
import re
flags = set(open("/proc/cpuinfo").read().split("flags", 1)[1].split("\n", 1)[0].split())
paths = ["baseline"]
if {"avx2", "fma", "bmi2"} <= flags:
    paths.append("avx2")
if {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"} <= flags:
    paths.append("avx512")
print(" ".join(paths))
PYEOF
)
if [ ! -e "$("$PY" -c 'import dlarray, pathlib; print(pathlib.Path(dlarray.__file__).parent)')/lib/cpu_backend_baseline.so" ]; then
  echo "isa paths: built with DLARRAY_NATIVE=ON (one path): nothing to run"
  exit 0
fi
for isa in $paths; do
  echo "::: CPU op tests on the $isa path"
  (cd tests/python && DLARRAY_CPU_ISA=$isa ../../"$PY" -m pytest -q -p no:cacheprovider \
     test_ops.py test_cpu_sort_radix.py -k "cpu" -x)
done
