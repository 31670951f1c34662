#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The official CANN sample programs, built the way CANN's docs build them, against an
# install of this build used as ASCEND_HOME_PATH, and their output compared.
#   test_samples_apply_top_k_top_p.sh BUILD_DIR SAMPLES_DIR [EXTRA_CXXFLAGS]
set -euo pipefail
# shellcheck source=samples_common.sh
. "$(dirname "$0")/samples_common.sh"
need include/acl/acl.h include/aclnn/acl_meta.h include/aclnn/aclnn_base.h \
     include/aclnn/opdev/op_errno.h include/aclnnop/aclnn_util.h \
     include/aclnnop/aclnn_apply_top_k_top_p.h lib64/libascendcl.so lib64/libnnopbase.so \
     lib64/libopapi.so lib64/libopapi_nn.so lib64/libopapi_math.so \
     lib64/libopapi_transformer.so lib64/libc_sec.so lib64/libacl_rt.so

# --- apply_top_k_top_p: CANN's first build line; the output as on the NPU.
cp "$samples/apply_top_k_top_p.cpp" "$tmp/t.cpp"
line1 "$tmp/t.cpp" "$tmp/top_k_top_p"
$EMU "$tmp/top_k_top_p" > "$tmp/top_k_top_p.out"
: > "$tmp/top_k_top_p.expected"
for i in $(seq 0 11); do
  case $i in
    3) v=4.000000 ;; 7) v=8.000000 ;; 11) v=12.000000 ;; *) v=-inf ;;
  esac
  echo "result[$i] is: $v" >> "$tmp/top_k_top_p.expected"
done
check apply_top_k_top_p "$tmp/top_k_top_p.expected" "$tmp/top_k_top_p.out"

# --- the second build line (transformer ops, libc_sec) links too.
line2 "$tmp/t.cpp" "$tmp/top_k_top_p2"
$EMU "$tmp/top_k_top_p2" | cmp -s - "$tmp/top_k_top_p.expected" || { echo "FAIL: second link line"; fail=1; }

# --- the acl headers are valid C.
headers_as_c aclnnop/aclnn_apply_top_k_top_p.h
finish test_samples_apply_top_k_top_p
