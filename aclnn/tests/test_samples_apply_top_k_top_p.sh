#!/usr/bin/env bash
# The official CANN sample programs, built the way CANN's docs build them, against an
# install of this build used as ASCEND_HOME_PATH, and their output compared.
#   test_samples_apply_top_k_top_p.sh BUILD_DIR SAMPLES_DIR [EXTRA_CXXFLAGS]
# EXTRA_CXXFLAGS: e.g. -fsanitize=address,undefined when the library was built with them.
set -euo pipefail
build=$1
samples=$2
extra=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
P=$tmp/ascend
cmake --install "$build" --prefix "$P" > "$tmp/install.log"
for f in include/acl/acl.h include/aclnn/acl_meta.h include/aclnn/aclnn_base.h \
         include/aclnn/opdev/op_errno.h include/aclnnop/aclnn_util.h \
         include/aclnnop/aclnn_apply_top_k_top_p.h lib64/libascendcl.so lib64/libnnopbase.so \
         lib64/libopapi.so lib64/libopapi_nn.so lib64/libopapi_math.so \
         lib64/libopapi_transformer.so lib64/libc_sec.so lib64/libacl_rt.so; do
  [ -e "$P/$f" ] || { echo "FAIL: $P/$f missing"; exit 1; }
done

fail=0
# --- apply_top_k_top_p: CANN's first build line.
cp "$samples/apply_top_k_top_p.cpp" "$tmp/t.cpp"
# shellcheck disable=SC2086
g++ "$tmp/t.cpp" -o "$tmp/top_k_top_p" $extra -I "$P/include" -I "$P/include/aclnnop" \
  -I "$P/include/aclnn" -L "$P/lib64" -lopapi_nn -lopapi_math -lascendcl -lnnopbase \
  -Wl,-rpath,"$P/lib64"
"$tmp/top_k_top_p" > "$tmp/top_k_top_p.out"
: > "$tmp/top_k_top_p.expected"
for i in $(seq 0 11); do
  case $i in
    3) v=4.000000 ;; 7) v=8.000000 ;; 11) v=12.000000 ;; *) v=-inf ;;
  esac
  echo "result[$i] is: $v" >> "$tmp/top_k_top_p.expected"
done
if diff -u "$tmp/top_k_top_p.expected" "$tmp/top_k_top_p.out"; then
  echo "apply_top_k_top_p: output as on the NPU"
else
  echo "FAIL: apply_top_k_top_p output differs"
  fail=1
fi

# --- the second build line (transformer ops, libc_sec) links too.
# shellcheck disable=SC2086
g++ "$tmp/t.cpp" -o "$tmp/top_k_top_p2" $extra -I "$P/include" -I "$P/include/aclnn" \
  -I "$P/include/aclnnop" -L "$P/lib64" -lopapi_math -lopapi_transformer -lascendcl \
  -lnnopbase -lc_sec -Wl,-rpath,"$P/lib64"
"$tmp/top_k_top_p2" | cmp -s - "$tmp/top_k_top_p.expected" || { echo "FAIL: second link line"; fail=1; }

# --- the acl headers are valid C.
printf '#include "acl/acl.h"\n#include "aclnnop/aclnn_apply_top_k_top_p.h"\nint main(void){return ACL_SUCCESS + OK;}\n' > "$tmp/c.c"
# shellcheck disable=SC2086
gcc -std=c11 -Wall -Wextra -Wpedantic -Werror $extra "$tmp/c.c" -o "$tmp/c" -I "$P/include" \
  -L "$P/lib64" -lascendcl -Wl,-rpath,"$P/lib64" || { echo "FAIL: headers as C"; fail=1; }

[ $fail -eq 0 ] && echo "test_samples_apply_top_k_top_p: passed"
exit $fail
