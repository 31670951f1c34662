#!/usr/bin/env bash
# CANN's aclnnScatterPaKvCache sample program, built the way CANN's docs build it,
# against an install of this build used as ASCEND_HOME_PATH; its output is compared
# with the results that shared/spec/kv_cache_scatter.md describes (computed here, not
# by the layer).
#   test_samples_scatter_pa_kv_cache.sh BUILD_DIR SAMPLES_DIR [EXTRA_CXXFLAGS]
set -euo pipefail
build=$1
samples=$2
extra=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
P=$tmp/ascend
cmake --install "$build" --prefix "$P" > "$tmp/install.log"
for f in aclnn_scatter_pa_kv_cache.h; do
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
# --- scatter, the PA_NZ example: NZ cache [1, 4, 32, 16], slots 0 and 1 of block 0;
# element (o, c) of channel group c lives at c*512 + o*16 + (channel % 16), so rows 0 and 1
# of each group (elements c*512 + 0..31) get the zero keys/values; the rest stay 1.
cp "$samples/scatter_pa_kv_cache.cpp" "$tmp/scatter.cpp"
line2 "$tmp/scatter.cpp" "$tmp/scatter"
"$tmp/scatter" > "$tmp/scatter.out"
awk 'BEGIN { for (n = 0; n < 2; n++) for (i = 0; i < 2048; i++)
               printf "%s[%d] is: %d\n", n ? "valueCache" : "keyCache", i, (i % 512 < 32) ? 0 : 1 }' \
  > "$tmp/scatter.expected"
check scatter_pa_kv_cache "$tmp/scatter.expected" "$tmp/scatter.out"
line1 "$tmp/scatter.cpp" "$tmp/scatter1"
"$tmp/scatter1" | cmp -s - "$tmp/scatter.expected" || { echo "FAIL: scatter, first build line"; fail=1; }

# --- the headers compile as C too.
printf '#include "acl/acl.h"\n#include "aclnnop/aclnn_scatter_pa_kv_cache.h"\nint main(void){return ACL_SUCCESS + OK;}\n' > "$tmp/c.c"
# shellcheck disable=SC2086
gcc -std=c11 -Wall -Wextra -Wpedantic -Werror $extra "$tmp/c.c" -o "$tmp/c" -I "$P/include" \
  -L "$P/lib64" -lascendcl -Wl,-rpath,"$P/lib64" || { echo "FAIL: headers as C"; fail=1; }

[ $fail -eq 0 ] && echo "test_samples_scatter_pa_kv_cache: passed"
exit $fail
