#!/usr/bin/env bash
# CANN's aclnnInplaceFusedCausalConv1d sample program, built the way CANN's docs build
# it, against an install of this build used as ASCEND_HOME_PATH; its output is compared
# with the results that shared/spec/causal_conv1d.md describes (computed here, not by
# the layer).
#   test_samples_fused_causal_conv1d.sh BUILD_DIR SAMPLES_DIR [EXTRA_CXXFLAGS]
set -euo pipefail
build=$1
samples=$2
extra=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
P=$tmp/ascend
cmake --install "$build" --prefix "$P" > "$tmp/install.log"
for f in aclnn_inplace_fused_causal_conv1d.h aclnn_inplace_fused_causal_conv1d_v2.h; do
  [ -e "$P/include/aclnnop/$f" ] || { echo "FAIL: $P/include/aclnnop/$f missing"; exit 1; }
done

fail=0
check() { # name expected-file output-file
  if diff -u "$2" "$3" > "$tmp/diff" ; then echo "$1: output as expected"
  else head -40 "$tmp/diff"; echo "FAIL: $1 output differs"; fail=1; fi
}
line1() { # CANN's first build line: source output
  # shellcheck disable=SC2086
  g++ "$1" -o "$2" $extra -I "$P/include" -I "$P/include/aclnnop" -I "$P/include/aclnn" \
    -L "$P/lib64" -lopapi_nn -lopapi_math -lascendcl -lnnopbase -Wl,-rpath,"$P/lib64"
}
line2() { # CANN's second build line
  # shellcheck disable=SC2086
  g++ "$1" -o "$2" $extra -I "$P/include" -I "$P/include/aclnn" -I "$P/include/aclnnop" \
    -L "$P/lib64" -lopapi_math -lopapi_transformer -lascendcl -lnnopbase -lc_sec \
    -Wl,-rpath,"$P/lib64"
}
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
"$tmp/conv" > "$tmp/conv.out"
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
"$tmp/conv_old" > "$tmp/conv_old.out"
conv_expected 0.000000 1.000000 > "$tmp/conv_old.expected"
check causal_conv1d_c2 "$tmp/conv_old.expected" "$tmp/conv_old.out"

# --- the headers compile as C too.
printf '#include "acl/acl.h"\n#include "aclnnop/aclnn_inplace_fused_causal_conv1d.h"\n#include "aclnnop/aclnn_inplace_fused_causal_conv1d_v2.h"\nint main(void){return ACL_SUCCESS + OK;}\n' > "$tmp/c.c"
# shellcheck disable=SC2086
gcc -std=c11 -Wall -Wextra -Wpedantic -Werror $extra "$tmp/c.c" -o "$tmp/c" -I "$P/include" \
  -L "$P/lib64" -lascendcl -Wl,-rpath,"$P/lib64" || { echo "FAIL: headers as C"; fail=1; }

[ $fail -eq 0 ] && echo "test_samples_fused_causal_conv1d: passed"
exit $fail
