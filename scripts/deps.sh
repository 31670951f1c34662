#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the build tools llmk needs on Debian when any is missing (needs root).
# Extra package names may be passed as arguments.
set -euo pipefail
need=()
command -v cc > /dev/null || need+=(gcc)
command -v make > /dev/null || need+=(make)
command -v cmake > /dev/null || need+=(cmake)
command -v pkg-config > /dev/null || need+=(pkg-config)
for p in "$@"; do dpkg -s "$p" > /dev/null 2>&1 || need+=("$p"); done
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "missing: ${need[*]}; run as root, or: sudo apt-get install -y ${need[*]}" >&2
  exit 1
fi
echo "installing: ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" > /dev/null
