#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fails if any tracked C/C++ source differs from what clang-format makes of it with the
# committed .clang-format. `scripts/check_format.sh --fix` formats them in place.
set -euo pipefail
cd "$(dirname "$0")/.."
fmt=${CLANG_FORMAT:-clang-format}
if ! command -v "$fmt" > /dev/null; then
  echo "check_format: $fmt not found (apt-get install clang-format)" >&2
  exit 2
fi
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp')
if [ "${1:-}" = "--fix" ]; then
  "$fmt" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$fmt" --dry-run -Werror "$f" > /dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "check_format: ${#bad[@]} of ${#files[@]} files are not formatted ($fmt --version: $("$fmt" --version)):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "run scripts/check_format.sh --fix" >&2
  exit 1
fi
echo "check_format: ${#files[@]} files formatted"
