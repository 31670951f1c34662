#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CANN's aclnnInplaceFusedCausalConv1d and aclnnFusedCausalConv1d sample programs,
# built the way CANN's docs build them, against an install of this build used as
# ASCEND_HOME_PATH; their output is compared with the results that
# shared/spec/causal_conv1d.md describes (computed here, not by the layer).
#   test_samples_fused_causal_conv1d.sh BUILD_DIR SAMPLES_DIR [EXTRA_CXXFLAGS]
set -euo pipefail
# shellcheck source=samples_common.sh
. "$(dirname "$0")/samples_common.sh"
need include/aclnnop/aclnn_inplace_fused_causal_conv1d.h \
     include/aclnnop/aclnn_inplace_fused_causal_conv1d_v2.h \
     include/aclnnop/aclnn_fused_causal_conv1d.h

conv_expected() { # x-value conv-states-value
  echo "=== x output (inplace, first 10 elements) ==="
  for i in 0 1 2 3 4 5 6 7 8 9; do echo "  x[$i] = $1"; done
  echo "  ..."
  echo "=== convStates output (first 10 elements) ==="
  for i in 0 1 2 3 4 5 6 7 8 9; do echo "  convStates[$i] = $2"; done
  echo "Test completed successfully!"
}

# --- causal conv1d, the newest sample (C = 8, maxQueryLen 7): row 0 of line 0 is not
# written (2 + 5 rows of padded input for 8 rows of state), x's first row is the zero
# history.
cp "$samples/causal_conv1d.cpp" "$tmp/conv.cpp"
line1 "$tmp/conv.cpp" "$tmp/conv"
$EMU "$tmp/conv" > "$tmp/conv.out"
conv_expected 0.000000 0.000000 > "$tmp/conv.expected"
check causal_conv1d "$tmp/conv.expected" "$tmp/conv.out"

# --- the older sample: C = K - 1 = 2 and maxQueryLen = cuSeqLen; line 0 holds the last
# two tokens of sequence 0 (1.0).
sed -e 's/int64_t stateLen = 8;/int64_t stateLen = K - 1;/' \
    -e 's/int64_t maxQueryLen = 7;/int64_t maxQueryLen = cuSeqLen;/' \
    "$samples/causal_conv1d.cpp" > "$tmp/conv_old.cpp"
grep -q 'stateLen = K - 1;' "$tmp/conv_old.cpp" && grep -q 'maxQueryLen = cuSeqLen;' "$tmp/conv_old.cpp" \
  || { echo "FAIL: could not derive the older conv sample"; fail=1; }
line2 "$tmp/conv_old.cpp" "$tmp/conv_old"
$EMU "$tmp/conv_old" > "$tmp/conv_old.out"
conv_expected 0.000000 1.000000 > "$tmp/conv_old.expected"
check causal_conv1d_c2 "$tmp/conv_old.expected" "$tmp/conv_old.out"

# --- aclnnFusedCausalConv1d (separate y), CANN's current sample: prefill, x all 1,
# weight 1 on tap 0 only, zero history, no residual: y's row 0 is the first zero
# history row (0); line 0 holds the last two tokens of sequence 0 (1). Both of CANN's
# build lines.
{
  echo "=== y output (first 10 elements) ==="
  for i in 0 1 2 3 4 5 6 7 8 9; do echo "  y[$i] = 0.000000"; done
  echo "  ..."
  echo "=== convStates output (first 10 elements) ==="
  for i in 0 1 2 3 4 5 6 7 8 9; do echo "  convStates[$i] = 1.000000"; done
  echo "  ..."
  echo "Test completed successfully!"
} > "$tmp/fcc.expected"
for l in 1 2; do
  "line$l" "$samples/fused_causal_conv1d.cpp" "$tmp/fcc$l"
  $EMU "$tmp/fcc$l" > "$tmp/fcc$l.out"
  check "fused_causal_conv1d (build line $l)" "$tmp/fcc.expected" "$tmp/fcc$l.out"
done

# --- the headers compile as C too.
headers_as_c aclnnop/aclnn_inplace_fused_causal_conv1d.h \
  aclnnop/aclnn_inplace_fused_causal_conv1d_v2.h aclnnop/aclnn_fused_causal_conv1d.h
finish test_samples_fused_causal_conv1d
