#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's commands (./make.sh bench, ./make.sh test) on any Debian 12, a minimal one
# included: installs what the build needs (as root, with apt-get: scripts/deps.sh), then
# runs make with the same arguments (Makefile: bench, test, install, clean, ...).
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/deps.sh
exec make "$@"
