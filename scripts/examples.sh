#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every example program; fails if one fails.
set -euo pipefail
build=${1:-build}
for e in "$build"/examples/example_*; do
  [ -x "$e" ] || continue
  echo "== $(basename "$e")"
  "$e"
done
