#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The benchmark: `llmk bench --quick` once (table on stdout, BUILD/bench.json and
# BUILD/bench.svg), then the examples. Extra arguments go to llmk bench (e.g. an op name,
# or --threads N, or --baseline OLD.json to compare with an earlier bench.json). Exits
# non-zero if a case fails its check or an example fails (a missed target does not).
set -euo pipefail
build=${1:-build}
shift || true
"$build/tools/llmk" bench --quick --json "$build/bench.json" --plot "$build/bench.svg" "$@"
bash "$(dirname "$0")/examples.sh" "$build"
