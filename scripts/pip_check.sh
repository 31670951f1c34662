#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Python package as a user installs it: a fresh virtual environment (seeing Debian's
# python3-torch, -setuptools, -wheel), `pip install --no-build-isolation --no-index .`
# offline from a copy of the tracked tree, then, from another directory and with no
# LLMK_LIBRARY or PYTHONPATH, `import llmk, torch` and torch.ops.llmk (tests/python/
# check_installed.py). Needs python3-venv, python3-setuptools, python3-wheel.
# Usage: scripts/pip_check.sh [WORKDIR]   (default: a temporary folder, removed after)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
work=${1:-}
if [ -z "$work" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
rm -rf "$work/src" "$work/venv" "$work/run"
mkdir -p "$work/src" "$work/run"
# tracked files only: no build folders of the checkout travel into the package build
if git -C "$src" rev-parse --git-dir > /dev/null 2>&1; then
  git -C "$src" ls-files -z | (cd "$src" && xargs -0 tar cf -) | tar xf - -C "$work/src"
else
  tar cf - -C "$src" --exclude='./build*' . | tar xf - -C "$work/src"
fi
"$py" -m venv --system-site-packages "$work/venv"
start=$SECONDS
env -u LLMK_LIBRARY "$work/venv/bin/pip" install -q --no-build-isolation --no-index "$work/src"
echo "pip_check: pip install --no-build-isolation . took $((SECONDS - start)) s"
cd "$work/run"
env -u LLMK_LIBRARY -u PYTHONPATH "$work/venv/bin/python" "$src/tests/python/check_installed.py" \
  "$work/venv"
