#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ThreadSanitizer CI job: a pthreads-runtime build with -fsanitize=thread, then the
# concurrency stress test (every op from several threads: own contexts, a shared one,
# plans handed between threads) and the core test. Any TSan report fails the job
# (halt_on_error=1 makes the program exit non-zero at the first report).
#   usage: scripts/ci_tsan.sh [build-dir]      (default build-ci-tsan)
#   LLMK_STRESS_ITERS: iterations of the stress test (default 40)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-ci-tsan}
jobs=${JOBS:-$(nproc)}

nice cmake -S . -B "$build" -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DLLMK_TSAN=ON -DLLMK_THREADING=pthreads -DLLMK_SIMD=ON -DLLMK_WERROR=ON \
  -DLLMK_EXAMPLES=OFF -DLLMK_TOOLS=OFF -DLLMK_ACLNN=OFF >/dev/null
nice cmake --build "$build" -j "$jobs" --target test_stress test_core

export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:exitcode=66${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
status=0
run() {
  echo "== $*"
  if ! nice "$@"; then
    echo "ci_tsan: FAILED: $*" >&2
    status=1
  fi
}
run "$build/tests/test_core"
run "$build/tests/stress/test_stress" "${LLMK_STRESS_ITERS:-40}"
# every ISA the machine has, forced from the start (the stress test also switches it)
for isa in scalar avx2; do
  LLMK_ISA=$isa run "$build/tests/stress/test_stress" 8
done
exit $status
