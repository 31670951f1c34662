#!/usr/bin/env bash
# Runs every benchmark program, then the examples.
set -euo pipefail
build=${1:-build}
for b in "$build"/bench/bench_*; do
  [ -x "$b" ] || continue
  echo "== $(basename "$b")"
  "$b"
done
bash "$(dirname "$0")/examples.sh" "$build"
