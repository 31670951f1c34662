# SPDX-License-Identifier: Apache-2.0
# The common part of the test_samples_*.sh scripts, sourced by each of them with their
# arguments (BUILD_DIR SAMPLES_DIR [EXTRA_CXXFLAGS]): installs the build into a fresh
# prefix under a temporary $tmp, whose CANN-compatible subtree $P (lib/llmk/ascend) is
# used as ASCEND_HOME_PATH, and gives
#   need FILE...          each file present under $P, or FAIL and exit 1
#   check NAME EXP OUT    the output file equals the expected one, else FAIL (fail=1)
#   line1 / line2 SRC EXE CANN's first / second build line for a sample program
#   headers_as_c HDR...   acl/acl.h and the op's headers compile as C11, warnings errors
#   finish NAME           prints "NAME: passed" when nothing failed; exits with $fail
# EXTRA_CXXFLAGS: e.g. -fsanitize=address,undefined when the library was built with them.
# The environment names the build's compilers and how to run what they make: CC, CXX
# (default gcc, g++) and EMU (empty natively; qemu-aarch64 -L SYSROOT in a cross build).
build=$1
samples=$2
extra=${3:-}
CC=${CC:-gcc} CXX=${CXX:-g++} EMU=${EMU:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
P=$(find "$tmp/prefix" -type d -path '*/llmk/ascend' | head -n1)
[ -n "$P" ] || { echo "FAIL: no llmk/ascend subtree in the install"; exit 1; }
export ASCEND_HOME_PATH=$P
fail=0

need() {
  for f in "$@"; do
    [ -e "$P/$f" ] || { echo "FAIL: $P/$f missing"; exit 1; }
  done
}
check() { # name expected-file output-file
  if diff -u "$2" "$3" > "$tmp/diff" ; then echo "$1: output as expected"
  else head -40 "$tmp/diff"; echo "FAIL: $1 output differs"; fail=1; fi
}
line1() { # CANN's first build line: source output
  # shellcheck disable=SC2086
  $CXX "$1" -o "$2" $extra -I "$P/include" -I "$P/include/aclnnop" -I "$P/include/aclnn" \
    -L "$P/lib64" -lopapi_nn -lopapi_math -lascendcl -lnnopbase -Wl,-rpath,"$P/lib64"
}
line2() { # CANN's second build line
  # shellcheck disable=SC2086
  $CXX "$1" -o "$2" $extra -I "$P/include" -I "$P/include/aclnn" -I "$P/include/aclnnop" \
    -L "$P/lib64" -lopapi_math -lopapi_transformer -lascendcl -lnnopbase -lc_sec \
    -Wl,-rpath,"$P/lib64"
}
headers_as_c() { # header...
  {
    echo '#include "acl/acl.h"'
    for h in "$@"; do echo "#include \"$h\""; done
    echo 'int main(void){return ACL_SUCCESS + OK;}'
  } > "$tmp/c.c"
  # shellcheck disable=SC2086
  $CC -std=c11 -Wall -Wextra -Wpedantic -Werror $extra "$tmp/c.c" -o "$tmp/c" -I "$P/include" \
    -L "$P/lib64" -lascendcl -Wl,-rpath,"$P/lib64" || { echo "FAIL: headers as C"; fail=1; }
}
finish() { # name
  if [ "$fail" -eq 0 ]; then echo "$1: passed"; fi
  exit "$fail"
}
