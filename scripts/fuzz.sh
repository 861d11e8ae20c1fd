#!/usr/bin/env bash
# make fuzz: builds the libFuzzer targets with clang (ASan + UBSan, CUDA off) in build/fuzz and
# runs each for FUZZ_SECONDS (default 60). The seed corpora are in tests/fuzz/corpus/<target>;
# new inputs go to build/fuzz/corpus/<target>, crashes to build/fuzz/artifacts/ (the run fails:
# fix the bug, then add the input to the seed corpus).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${FUZZ_SECONDS:-60}
JOBS=${JOBS:-2}
dir=build/fuzz
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER="${FUZZ_CC:-clang}" -DCMAKE_CXX_COMPILER="${FUZZ_CXX:-clang++}" \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" -DDLARRAY_CUDA=OFF -DDLARRAY_NATIVE=ON \
  -DDLARRAY_BUILD_PYTHON=OFF -DDLARRAY_BUILD_TESTS=OFF -DDLARRAY_BUILD_FUZZERS=ON >/dev/null
cmake --build "$dir" -j "$JOBS" --target c_api_fuzzer load_plugin_fuzzer dlpack_import_fuzzer cpu_backend
mkdir -p "$dir/artifacts"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export ASAN_OPTIONS="detect_leaks=0"  # the loader keeps every library it opened, on purpose
status=0
for target in c_api_fuzzer load_plugin_fuzzer dlpack_import_fuzzer; do
  work="$dir/corpus/$target"
  mkdir -p "$work"
  if [ "$target" = load_plugin_fuzzer ]; then
    # Damaged copies of a real plugin (never a whole one: see load_plugin_fuzzer.cc).
    lib="$dir/dlarray/plugins/cpu_backend.so"
    size=$(stat -c %s "$lib")
    for n in 64 120 400 1000 4096 $((size / 2)); do
      head -c "$n" "$lib" >"$work/truncated_$n"
    done
  fi
  echo "::: fuzzing $target for ${SECONDS_EACH} s"
  if ! "$dir/tests/fuzz/$target" -max_total_time="$SECONDS_EACH" -timeout=30 -rss_limit_mb=4096 \
      -print_final_stats=1 -artifact_prefix="$dir/artifacts/$target-" \
      "$work" "tests/fuzz/corpus/$target" 2>"$dir/$target.log"; then
    status=1
    tail -n 60 "$dir/$target.log"
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb|Done [0-9]+ runs" "$dir/$target.log" || true
done
exit $status
