#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A/B timing of two revisions of the library in one process:
#
#   scripts/ab.sh REV_A [REV_B] [llmk_ab options...]
#
# Builds libllmk.so of git revision REV_A and of REV_B (default: the working tree,
# tracked and untracked files that git does not ignore) each in its own temporary
# directory (Release, library only), compiles tools/ab/llmk_ab.c of this tree against
# this tree's include/, and runs it on the two libraries with the remaining arguments
# (--case TEXT, --threads N, --min-pairs N, --list). REV_B is the second argument when
# it does not start with '-'. Exit status: llmk_ab's (0, 1 MISMATCH or op error, 2
# usage), or 2 when a build fails.
# Environment: JOBS (build jobs, default 2), CC (default cc), AB_KEEP=1 keeps the
# temporary directory.
set -euo pipefail

usage() {
  echo "usage: scripts/ab.sh REV_A [REV_B] [--case TEXT] [--threads N] [--min-pairs N] [--list]" >&2
  echo "       REV_B defaults to the working tree" >&2
  exit 2
}

[ $# -ge 1 ] || usage
case "$1" in -*) usage ;; esac
rev_a=$1
shift
rev_b=
if [ $# -ge 1 ] && [ "${1#-}" = "$1" ]; then
  rev_b=$1
  shift
fi
[ "${1:-}" = "--" ] && shift

root=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
cd "$root"
jobs=${JOBS:-2}
cc=${CC:-cc}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/llmk-ab.XXXXXX")
if [ "${AB_KEEP:-0}" = 1 ]; then
  echo "ab: keeping $tmp" >&2
else
  trap 'rm -rf "$tmp"' EXIT
fi

# export_tree REV DIR: the sources of REV (empty REV: the working tree) into DIR
export_tree() {
  mkdir -p "$2"
  if [ -n "$1" ]; then
    git archive "$1" | tar -x -C "$2"
  else
    git ls-files -z -co --exclude-standard |
      while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done |
      tar --null -T - -c | tar -x -C "$2"
  fi
}

# build SIDE REV: libllmk.so of REV in $tmp/SIDE; prints the library's path
build() {
  local dir=$tmp/$1 log=$tmp/$1.log
  export_tree "$2" "$dir/src"
  if ! { nice cmake -S "$dir/src" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release \
    -DLLMK_TESTS=OFF -DLLMK_EXAMPLES=OFF -DLLMK_TOOLS=OFF -DLLMK_ACLNN=OFF \
    -DLLMK_BENCH=OFF && nice cmake --build "$dir/build" --target llmk_shared \
    -j "$jobs"; } > "$log" 2>&1; then
    echo "ab: building $1 (${2:-working tree}) failed; its log:" >&2
    tail -n 40 "$log" >&2
    exit 2
  fi
  echo "$dir/build/libllmk.so"
}

describe() {
  if [ -n "$1" ]; then
    git log -1 --format='%h %s' "$1" | cut -c1-100
  else
    local dirty=
    [ -z "$(git status --porcelain --untracked-files=normal)" ] || dirty=" + uncommitted changes"
    echo "working tree (HEAD $(git rev-parse --short HEAD)$dirty)"
  fi
}

for r in "$rev_a" ${rev_b:+"$rev_b"}; do
  git rev-parse --verify --quiet "$r^{commit}" > /dev/null ||
    { echo "ab: not a git revision: $r" >&2; exit 2; }
done

echo "ab: A = $(describe "$rev_a")" >&2
echo "ab: B = $(describe "$rev_b")" >&2
echo "ab: building A..." >&2
lib_a=$(build a "$rev_a")
echo "ab: building B..." >&2
lib_b=$(build b "$rev_b")

"$cc" -O2 -std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
  -Wmissing-prototypes -Wformat=2 -Wvla -I"$tmp/b/build/include" -I"$root/include" "$root/tools/ab/llmk_ab.c" \
  -o "$tmp/llmk_ab" -ldl -lm

echo "ab: A = $(describe "$rev_a")"
echo "ab: B = $(describe "$rev_b")"
rc=0
"$tmp/llmk_ab" "$@" "$lib_a" "$lib_b" || rc=$?
exit $rc
