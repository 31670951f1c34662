#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Allocation-failure CI job for the configuration ctest's default build does not cover:
# the pthreads runtime (whose pool allocates), with ASan/UBSan/LeakSanitizer on top of
# the test's own live-block count. (The default OpenMP build runs test_alloc_fail in
# ctest.)   usage: scripts/ci_alloc.sh [build-dir]     (default build-ci-alloc)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-ci-alloc}
nice cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLLMK_THREADING=pthreads \
  -DLLMK_SANITIZE=ON -DLLMK_WERROR=ON -DLLMK_EXAMPLES=OFF -DLLMK_TOOLS=OFF >/dev/null
nice cmake --build "$build" -j "${JOBS:-$(nproc)}" --target test_alloc_fail
ASAN_OPTIONS=detect_leaks=1 nice "$build/tests/alloc/test_alloc_fail"
