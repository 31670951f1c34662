#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the build tools llmk needs on Debian when any is missing (needs root): a C and
# a C++ compiler (the aclnn layer), the C library's headers, make, cmake, pkg-config.
# Needs only bash and apt-get, so that it runs on a minimal Debian before make exists.
# Extra package names may be passed as arguments. Elsewhere (no dpkg) it checks commands.
set -euo pipefail
need=()
if command -v dpkg-query > /dev/null; then
  installed() { [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2> /dev/null)" = installed ]; }
  for p in gcc g++ libc6-dev make cmake pkg-config "$@"; do installed "$p" || need+=("$p"); done
else
  for c in cc c++ make cmake pkg-config; do command -v "$c" > /dev/null || need+=("$c"); done
  if [ ${#need[@]} -gt 0 ]; then
    echo "missing: ${need[*]}; install them with the system's package manager" >&2
    exit 1
  fi
  exit 0
fi
# An interrupted earlier run can leave dpkg half-way (unpacked, not configured): finish it.
# (Captured, not piped into grep -q: under pipefail that would fail the test itself.)
pending=$(dpkg --audit 2> /dev/null || true)$(ls -A /var/lib/dpkg/updates 2> /dev/null || true)
if [ "$(id -u)" -eq 0 ] && [ -n "$pending" ]; then
  echo "deps: finishing an interrupted package installation (dpkg --configure -a)" >&2
  export DEBIAN_FRONTEND=noninteractive
  dpkg --configure -a || true
  apt-get install -y -qq -f --no-install-recommends > /dev/null
fi
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "missing: ${need[*]}; run as root, or: sudo apt-get install -y ${need[*]}" >&2
  exit 1
fi
echo "deps: installing ${need[*]} (apt-get)" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" > /dev/null
