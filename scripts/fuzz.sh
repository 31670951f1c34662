#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGETS...]
# Builds the libFuzzer targets of tests/fuzz with clang (ASan + UBSan) in build-fuzz/ and
# runs each on a temporary copy of its seed corpus tests/fuzz/corpus/<target>; prints
# executions and coverage per target; exit 1 if any target crashed, leaked or hung
# (FUZZ_TIMEOUT, default 30 s for one input: the instrumented build runs every input on
# every ISA and thread count).
# Default 60 s per target; long runs: scripts/fuzz.sh 600 (tests/fuzz/README.md).
# FUZZ_RUNS=N: N inputs per target instead of a time (with FUZZ_SEED, default 1, the
# same inputs on every run: CI's short run, reproducible).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
secs=${1:-60}
[ $# -gt 0 ] && shift
all=(fuzz_advance_step fuzz_scatter_pa_kv_cache fuzz_gather_pa_kv_cache
  fuzz_apply_top_k_top_p fuzz_fused_causal_conv1d fuzz_aclnn)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")

cc=${FUZZ_CC:-clang}
cxx=${FUZZ_CXX:-clang++}
if ! command -v "$cc" > /dev/null || ! command -v "$cxx" > /dev/null; then
  echo "SKIP: fuzz: clang not found"
  exit 0
fi
bdir=${FUZZ_BUILD_DIR:-$root/build-fuzz}
jobs=${FUZZ_JOBS:-$(nproc)}
nice=(nice -n 10)
if [ ! -f "$bdir/CMakeCache.txt" ]; then
  "${nice[@]}" cmake -S "$root" -B "$bdir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link" -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link" \
    -DLLMK_SANITIZE=ON -DLLMK_FUZZ=ON -DLLMK_EXAMPLES=OFF -DLLMK_TOOLS=OFF > "$bdir.configure.log" 2>&1 ||
    { cat "$bdir.configure.log"; echo "fuzz: configure failed" >&2; exit 1; }
fi
"${nice[@]}" cmake --build "$bdir" -j "$jobs" --target "${targets[@]}" > "$bdir.build.log" 2>&1 ||
  { tail -50 "$bdir.build.log"; echo "fuzz: build failed" >&2; exit 1; }

fail=0
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
for t in "${targets[@]}"; do
  tmp=$(mktemp -d)
  mkdir -p "$tmp/corpus" "$tmp/artifacts"
  [ -d "tests/fuzz/corpus/$t" ] && cp -r "tests/fuzz/corpus/$t/." "$tmp/corpus/"
  log=$bdir/$t.log
  if [ -n "${FUZZ_RUNS:-}" ]; then
    limit=(-runs="$FUZZ_RUNS" -seed="${FUZZ_SEED:-1}")
  else
    limit=(-max_total_time="$secs")
    [ -n "${FUZZ_SEED:-}" ] && limit+=(-seed="$FUZZ_SEED")
  fi
  "${nice[@]}" "$bdir/tests/fuzz/$t" "${limit[@]}" -timeout="${FUZZ_TIMEOUT:-30}" -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$tmp/artifacts/" "$tmp/corpus" > "$log" 2>&1
  rc=$?
  stats=$(grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE|INITED)' "$log" | tail -1)
  execs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<< "$stats")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<< "$stats")
  if [ $rc -ne 0 ]; then
    fail=1
    mkdir -p "$bdir/artifacts/$t"
    cp "$tmp/artifacts/"* "$bdir/artifacts/$t/" 2> /dev/null
    echo "FAIL: $t rc=$rc execs=${execs:-?} cov=${cov:-?} ft=${ft:-?}; log $log, inputs $bdir/artifacts/$t/"
    grep -m 3 -E 'ERROR: |runtime error|fuzz: ' "$log" | sed 's/^/  /'
  else
    if [ -n "${FUZZ_RUNS:-}" ]; then span="$FUZZ_RUNS runs"; else span="${secs}s"; fi
    echo "ok: $t $span execs=${execs:-?} cov=${cov:-?} ft=${ft:-?}"
  fi
  rm -rf "$tmp"
done
exit $fail
