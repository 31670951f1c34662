#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CANN's aclnnGatherPaKvCache sample program, built the way CANN's docs build it,
# against an install of this build used as ASCEND_HOME_PATH; its output is compared
# with the result worked out here from the gather's formula (not by the layer).
#   test_samples_gather_pa_kv_cache.sh BUILD_DIR SAMPLES_DIR [EXTRA_CXXFLAGS]
set -euo pipefail
# shellcheck source=samples_common.sh
. "$(dirname "$0")/samples_common.sh"
need include/aclnnop/aclnn_gather_pa_kv_cache.h

# --- the Norm example: 4 sequences of 3 tokens, block size 2, seqOffset 2 (table column
# 2 / 2 = 1), every table entry 1: tokens 0..2 of each sequence come from block 1
# (columns 1 and 2), whose elements are all the bits 0x0001; the first 256 of key's 768
# elements (tokens 0..3, 32 heads x 2) print as 1.
cp "$samples/gather_pa_kv_cache.cpp" "$tmp/gather.cpp"
line2 "$tmp/gather.cpp" "$tmp/gather"
$EMU "$tmp/gather" > "$tmp/gather.out"
awk 'BEGIN { for (i = 0; i < 256; i++) printf "result[%d] is: 1\n", i }' > "$tmp/gather.expected"
check gather_pa_kv_cache "$tmp/gather.expected" "$tmp/gather.out"
line1 "$tmp/gather.cpp" "$tmp/gather1"
$EMU "$tmp/gather1" | cmp -s - "$tmp/gather.expected" || { echo "FAIL: gather, first build line"; fail=1; }

# --- the headers compile as C too.
headers_as_c aclnnop/aclnn_gather_pa_kv_cache.h
finish test_samples_gather_pa_kv_cache
