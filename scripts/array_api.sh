#!/usr/bin/env bash
# The array API standard's conformance suite (2024.12) on one dlarray device.
#
#   scripts/array_api.sh [pytest arguments...]      e.g. array_api_tests/test_creation_functions.py
#
# The suite is the pinned checkout in ../shared/peer/array-api-tests (ARRAY_API_TESTS_DIR); it is
# copied to a temporary folder and run there, never edited. Without it the script says so and
# exits 0. Settings (environment):
#   DEVICE        the device the suite's arrays go to (DLARRAY_DEFAULT_DEVICE), default cpu
#   MAX_EXAMPLES  Hypothesis examples per test, default 20 (the suite's own default): about 1 minute
#                 on cpu and 2-4 on opencl:0 (PoCL) on the 2-core CI machine. Examples are drawn
#                 derandomised and without Hypothesis's deadline, so a run's failures are the same
#                 every time (the expected-failure lists stay exact)
#   XFAIL_MARK    what becomes of the tests listed in tests/array_api/xfails.txt (and, for DEVICE's
#                 type, xfails-<type>.txt, e.g. xfails-opencl.txt): skip (default:
#                 they are not run; an xfail is run and its failure minimised, which costs minutes)
#                 or xfail
#   XFAILS        none: read no expected-failures list (every failure counts; with FAILED_OUT,
#                 how the lists are remade)
#   FAILED_OUT    a file to write the ids of the failed tests to, one per line (and <file>.why:
#                 each id, a tab and the first line of its error)
#   PY            the Python with dlarray installed, default .venv/bin/python (relative to the
#                 repo; a bare name such as python3 is looked up on PATH)
# Prints the pass / skip / xfail / fail counts per test file; exits non-zero when a test that is
# not listed fails.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PY:-.venv/bin/python}
case $PY in /*) ;; */*) PY=$ROOT/$PY ;; esac  # a relative path is the repo's; a bare name: PATH
SUITE=${ARRAY_API_TESTS_DIR:-$ROOT/../shared/peer/array-api-tests}
if [ ! -d "$SUITE/array_api_tests" ]; then
  echo "array API suite: no checkout at $SUITE (set ARRAY_API_TESTS_DIR): skipped"
  exit 0
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cp -r "$SUITE" "$WORK/suite"
cd "$WORK/suite"
# The expected failures: every device's, then those of DEVICE's type (xfails-<type>.txt).
DEVICE=${DEVICE:-cpu}
: > "$WORK/xfails.txt"
[ "${XFAILS:-}" = none ] || cat "$ROOT/tests/array_api/xfails.txt" > "$WORK/xfails.txt"
if [ "${XFAILS:-}" != none ] && [ -f "$ROOT/tests/array_api/xfails-${DEVICE%%:*}.txt" ]; then
  cat "$ROOT/tests/array_api/xfails-${DEVICE%%:*}.txt" >> "$WORK/xfails.txt"
fi
status=0
ARRAY_API_TESTS_MODULE=dlarray ARRAY_API_TESTS_VERSION=2024.12 \
  DLARRAY_DEFAULT_DEVICE=$DEVICE ARRAY_API_TESTS_XFAIL_MARK=${XFAIL_MARK:-skip} \
  "$PY" -m pytest -q -p no:cacheprovider --tb=line -rf \
  --max-examples="${MAX_EXAMPLES:-20}" --derandomize --disable-deadline \
  --xfails-file "$WORK/xfails.txt" \
  --json-report --json-report-file="$WORK/report.json" \
  "${@:-array_api_tests/}" || status=$?
"$PY" - "$WORK/report.json" "${FAILED_OUT:-}" <<'PYEOF'
import collections, json, sys

counts = collections.defaultdict(collections.Counter)
failed = []
for test in json.load(open(sys.argv[1]))["tests"]:
    counts[test["nodeid"].split("::")[0]][test["outcome"]] += 1
    if test["outcome"] in ("failed", "error"):
        stage = test.get("call") or test.get("setup") or {}
        why = (stage.get("crash") or {}).get("message", "").strip().splitlines()
        failed.append((test["nodeid"], why[0] if why else ""))
if sys.argv[2]:  # the ids, and beside them (<file>.why) each one's first line of error
    with open(sys.argv[2], "w") as f, open(sys.argv[2] + ".why", "w") as w:
        for nodeid, why in sorted(failed):
            f.write(nodeid + "\n")
            w.write(nodeid + "\t" + why + "\n")
kinds = ["passed", "skipped", "xfailed", "xpassed", "failed", "error"]
print("%-48s" % "array API suite, per file" + "".join("%9s" % k for k in kinds))
total = collections.Counter()
for name in sorted(counts):
    total.update(counts[name])
    print("%-48s" % name.replace("array_api_tests/", "") +
          "".join("%9d" % counts[name][k] for k in kinds))
print("%-48s" % "total" + "".join("%9d" % total[k] for k in kinds))
PYEOF
exit $status
