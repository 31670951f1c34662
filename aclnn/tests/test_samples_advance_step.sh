#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CANN's aclnnAdvanceStep and aclnnAdvanceStepV2 sample programs, built the way CANN's docs
# build them, against an install of this build used as ASCEND_HOME_PATH; their output is
# compared with the expected results of shared/spec/advance_step.md.
#   test_samples_advance_step.sh BUILD_DIR SAMPLES_DIR [EXTRA_CXXFLAGS]
set -euo pipefail
# shellcheck source=samples_common.sh
. "$(dirname "$0")/samples_common.sh"
need include/aclnnop/aclnn_advance_step.h include/aclnnop/aclnn_advance_step_v2.h

# lines VALUES...: "mean result[i] is: v" for each value.
lines() { local i=0; for v in "$@"; do echo "mean result[$i] is: $v"; i=$((i + 1)); done; }

# --- aclnnAdvanceStep: CANN's first build line.
cp "$samples/advance_step.cpp" "$tmp/t1.cpp"
line1 "$tmp/t1.cpp" "$tmp/as"
$EMU "$tmp/as" > "$tmp/as.out"
{
  lines 0 1 2 3 0 0 0 0        # inputTokens
  lines 0 1 2 3 0 0 0 0        # inputPositions
  lines 1 2 3 4 4 5 6 7        # seqLens
  lines 0 3 6 9 -1 -1 -1 -1    # slotMapping (CANN's flattened lookup)
} > "$tmp/as.expected"
check advance_step "$tmp/as.expected" "$tmp/as.out"

# --- aclnnAdvanceStepV2: CANN's second build line.
cp "$samples/advance_step_v2.cpp" "$tmp/t2.cpp"
line2 "$tmp/t2.cpp" "$tmp/as2"
$EMU "$tmp/as2" > "$tmp/as2.out"
{
  lines 1 0 3 1 5 2 7 3 1 4 3 5 5 6 7 7              # inputTokens
  lines 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7              # sampledTokenIds, unchanged
  echo "copy result from device to host failed. ERROR: 107000"   # 8000 elements of a 16-element block
  lines 2 3 5 6 8 9 11 12                            # seqLens[0..7]
  lines 0 1 2 3 4 5 6 7                              # specToken (in slotMapping's variable)
} > "$tmp/as2.expected"
check advance_step_v2 "$tmp/as2.expected" "$tmp/as2.out"

# --- the headers compile as C too.
headers_as_c aclnnop/aclnn_advance_step.h aclnnop/aclnn_advance_step_v2.h
finish test_samples_advance_step
