#!/usr/bin/env bash
# CANN's aclnnAdvanceStep and aclnnAdvanceStepV2 sample programs, built the way CANN's docs
# build them, against an install of this build used as ASCEND_HOME_PATH; their output is
# compared with the expected results of shared/spec/advance_step.md.
#   test_samples_advance_step.sh BUILD_DIR SAMPLES_DIR [EXTRA_CXXFLAGS]
set -euo pipefail
build=$1
samples=$2
extra=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
P=$tmp/ascend
cmake --install "$build" --prefix "$P" > "$tmp/install.log"
for f in include/aclnnop/aclnn_advance_step.h include/aclnnop/aclnn_advance_step_v2.h; do
  [ -e "$P/$f" ] || { echo "FAIL: $P/$f missing"; exit 1; }
done

# lines VALUES...: "mean result[i] is: v" for each value.
lines() { local i=0; for v in "$@"; do echo "mean result[$i] is: $v"; i=$((i + 1)); done; }

fail=0
check() { # name expected-file output-file
  if diff -u "$2" "$3"; then echo "$1: output as expected"; else echo "FAIL: $1 output differs"; fail=1; fi
}

# --- aclnnAdvanceStep: CANN's first build line.
cp "$samples/advance_step.cpp" "$tmp/t1.cpp"
# shellcheck disable=SC2086
g++ "$tmp/t1.cpp" -o "$tmp/as" $extra -I "$P/include" -I "$P/include/aclnnop" \
  -I "$P/include/aclnn" -L "$P/lib64" -lopapi_nn -lopapi_math -lascendcl -lnnopbase \
  -Wl,-rpath,"$P/lib64"
"$tmp/as" > "$tmp/as.out"
{
  lines 0 1 2 3 0 0 0 0        # inputTokens
  lines 0 1 2 3 0 0 0 0        # inputPositions
  lines 1 2 3 4 4 5 6 7        # seqLens
  lines 0 3 6 9 -1 -1 -1 -1    # slotMapping (CANN's flattened lookup)
} > "$tmp/as.expected"
check advance_step "$tmp/as.expected" "$tmp/as.out"

# --- aclnnAdvanceStepV2: CANN's second build line.
cp "$samples/advance_step_v2.cpp" "$tmp/t2.cpp"
# shellcheck disable=SC2086
g++ "$tmp/t2.cpp" -o "$tmp/as2" $extra -I "$P/include" -I "$P/include/aclnn" \
  -I "$P/include/aclnnop" -L "$P/lib64" -lopapi_math -lopapi_transformer -lascendcl \
  -lnnopbase -lc_sec -Wl,-rpath,"$P/lib64"
"$tmp/as2" > "$tmp/as2.out"
{
  lines 1 0 3 1 5 2 7 3 1 4 3 5 5 6 7 7              # inputTokens
  lines 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7              # sampledTokenIds, unchanged
  echo "copy result from device to host failed. ERROR: 107000"   # 8000 elements of a 16-element block
  lines 2 3 5 6 8 9 11 12                            # seqLens[0..7]
  lines 0 1 2 3 4 5 6 7                              # specToken (in slotMapping's variable)
} > "$tmp/as2.expected"
check advance_step_v2 "$tmp/as2.expected" "$tmp/as2.out"

# --- the headers compile as C too.
printf '#include "acl/acl.h"\n#include "aclnnop/aclnn_advance_step.h"\n#include "aclnnop/aclnn_advance_step_v2.h"\nint main(void){return ACL_SUCCESS + OK;}\n' > "$tmp/c.c"
# shellcheck disable=SC2086
gcc -std=c11 -Wall -Wextra -Wpedantic -Werror $extra "$tmp/c.c" -o "$tmp/c" -I "$P/include" \
  -L "$P/lib64" -lascendcl -Wl,-rpath,"$P/lib64" || { echo "FAIL: headers as C"; fail=1; }

[ $fail -eq 0 ] && echo "test_samples_advance_step: passed"
exit $fail
