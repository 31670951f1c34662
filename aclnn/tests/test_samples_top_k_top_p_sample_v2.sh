#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CANN's aclnnTopKTopPSampleV2 sample program, built the way CANN's docs build it, against
# an install of this build used as ASCEND_HOME_PATH; its output is compared with the
# result worked out here from CANN's formula (not by the layer).
#   test_samples_top_k_top_p_sample_v2.sh BUILD_DIR SAMPLES_DIR [EXTRA_CXXFLAGS]
set -euo pipefail
# shellcheck source=samples_common.sh
. "$(dirname "$0")/samples_common.sh"
need include/aclnnop/aclnn_top_k_top_p_sample_v2.h

# --- 48 rows of 131072 equal logits, topK 128, topP and minPs a tiny positive bf16, q
# all 1, inputIsLogits: the 128 kept entries are the first indices (equal values: lower
# index first), each of probability 1/128; the running sum reaches p at the first, so
# one entry is left (min-p keeps it: its threshold is below 1/128) and every row gives
# index 0.
cp "$samples/top_k_top_p_sample_v2.cpp" "$tmp/tkps.cpp"
line1 "$tmp/tkps.cpp" "$tmp/tkps"
$EMU "$tmp/tkps" > "$tmp/tkps.out"
awk 'BEGIN { for (i = 0; i < 48; i++) printf "result[%d] is: 0\n", i }' > "$tmp/tkps.expected"
check top_k_top_p_sample_v2 "$tmp/tkps.expected" "$tmp/tkps.out"
line2 "$tmp/tkps.cpp" "$tmp/tkps2"
$EMU "$tmp/tkps2" | cmp -s - "$tmp/tkps.expected" || { echo "FAIL: top_k_top_p_sample_v2, second build line"; fail=1; }

# --- the headers compile as C too.
headers_as_c aclnnop/aclnn_top_k_top_p_sample_v2.h
finish test_samples_top_k_top_p_sample_v2
