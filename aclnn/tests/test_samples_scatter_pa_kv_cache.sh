#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CANN's aclnnScatterPaKvCache sample program, built the way CANN's docs build it,
# against an install of this build used as ASCEND_HOME_PATH; its output is compared
# with the results that shared/spec/kv_cache_scatter.md describes (computed here, not
# by the layer).
#   test_samples_scatter_pa_kv_cache.sh BUILD_DIR SAMPLES_DIR [EXTRA_CXXFLAGS]
set -euo pipefail
# shellcheck source=samples_common.sh
. "$(dirname "$0")/samples_common.sh"
need include/aclnnop/aclnn_scatter_pa_kv_cache.h

# --- scatter, the PA_NZ example: NZ cache [1, 4, 32, 16], slots 0 and 1 of block 0;
# element (o, c) of channel group c lives at c*512 + o*16 + (channel % 16), so rows 0 and 1
# of each group (elements c*512 + 0..31) get the zero keys/values; the rest stay 1.
cp "$samples/scatter_pa_kv_cache.cpp" "$tmp/scatter.cpp"
line2 "$tmp/scatter.cpp" "$tmp/scatter"
$EMU "$tmp/scatter" > "$tmp/scatter.out"
awk 'BEGIN { for (n = 0; n < 2; n++) for (i = 0; i < 2048; i++)
               printf "%s[%d] is: %d\n", n ? "valueCache" : "keyCache", i, (i % 512 < 32) ? 0 : 1 }' \
  > "$tmp/scatter.expected"
check scatter_pa_kv_cache "$tmp/scatter.expected" "$tmp/scatter.out"
line1 "$tmp/scatter.cpp" "$tmp/scatter1"
$EMU "$tmp/scatter1" | cmp -s - "$tmp/scatter.expected" || { echo "FAIL: scatter, first build line"; fail=1; }

# --- the headers compile as C too.
headers_as_c aclnnop/aclnn_scatter_pa_kv_cache.h
finish test_samples_scatter_pa_kv_cache
