#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What an install puts where. A default install into a scratch prefix, listed: no
# CANN-named file or directory (acl/, aclnn/, aclnnop/, acl*.h, libascendcl, libopapi*,
# libnnopbase, libc_sec, libacl_rt, lib64) outside the aclnn layer's subtree <libdir>/llmk/ascend, which has the
# layout of a CANN installation (a real lib64 directory); the SONAME is
# libllmk.so.MAJOR.MINOR while MAJOR is 0; and the components (runtime, development,
# tools, docs, ascend) are disjoint and together make the default install.
# Usage: test_layout.sh BUILD_DIR VERSION_FILE ACLNN(0|1) TOOLS(0|1)
set -euo pipefail
build=$1 version=$(head -n1 "$2") aclnn=$3 tools=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
list() { (cd "$1" && find . -mindepth 1 \( -type f -o -type l \) | sed 's|^\./||' | sort); }

cmake --install "$build" --prefix "$work/default" > /dev/null
list "$work/default" > "$work/default.list"
echo "default install: $(wc -l < "$work/default.list") files"
sub=$(cd "$work/default" && find . -type d -path '*/llmk/ascend' | sed 's|^\./||')
outside=$(grep -v "^${sub:-//none//}/" "$work/default.list" |
  grep -E '(^|/)(acl|aclnn|aclnnop|lib64)/|(^|/)acl[^/]*\.h$|(^|/)lib(ascendcl|opapi[^/]*|nnopbase|c_sec|acl_rt)\.so' || true)
if [ -n "$outside" ]; then
  echo "FAIL: CANN-named files outside the layer's subtree:"; echo "$outside"; fail=1
fi
[ ! -e "$work/default/lib64" ] || { echo "FAIL: the install made <prefix>/lib64"; fail=1; }
if [ "$aclnn" = 1 ]; then
  [ -n "$sub" ] || { echo "FAIL: no llmk/ascend subtree"; exit 1; }
  echo "aclnn layer subtree: $sub ($(grep -c "^$sub/" "$work/default.list") files)"
  [ -d "$work/default/$sub/lib64" ] && [ ! -L "$work/default/$sub/lib64" ] ||
    { echo "FAIL: $sub/lib64 is not a directory"; fail=1; }
  for f in include/acl/acl.h include/aclnn/aclnn_base.h include/aclnnop/aclnn_apply_top_k_top_p.h \
           lib64/libascendcl.so lib64/libopapi.so lib64/libnnopbase.so; do
    [ -e "$work/default/$sub/$f" ] || { echo "FAIL: $sub/$f missing"; fail=1; }
  done
else
  [ -z "$sub" ] || { echo "FAIL: aclnn layer installed though LLMK_ACLNN is off"; fail=1; }
fi

major=${version%%.*} rest=${version#*.} minor=${rest%%.*}
want=libllmk.so.$major
[ "$major" != 0 ] || want=libllmk.so.$major.$minor
lib=$(grep -E '(^|/)libllmk\.so\.[0-9.]+$' "$work/default.list" | head -n1)
soname=$(readelf -d "$work/default/$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "$want" ] || { echo "FAIL: SONAME $soname, want $want"; fail=1; }
echo "SONAME: $soname (version $version)"

comps="runtime development docs"
[ "$tools" = 1 ] && comps+=" tools"
[ "$aclnn" = 1 ] && comps+=" ascend"
: > "$work/union.list"
for c in $comps; do
  cmake --install "$build" --prefix "$work/$c" --component "$c" > /dev/null
  list "$work/$c" > "$work/$c.list"
  [ -s "$work/$c.list" ] || { echo "FAIL: component $c installs nothing"; fail=1; }
  both=$(comm -12 "$work/union.list" "$work/$c.list")
  [ -z "$both" ] || { echo "FAIL: component $c repeats: $both"; fail=1; }
  sort -m -o "$work/union.list" "$work/union.list" "$work/$c.list"
  printf '  %-12s %3d files: %s\n' "$c" "$(wc -l < "$work/$c.list")" \
    "$(sed 's|/[^/]*$||' "$work/$c.list" | sort -u | head -n 4 | tr '\n' ' ')"
done
if ! diff -u "$work/default.list" "$work/union.list" > "$work/diff"; then
  echo "FAIL: the components ($comps) do not make up the default install:"; head -20 "$work/diff"
  fail=1
fi
runtime_other=$(grep -v -E 'libllmk\.so\.[0-9.]+$' "$work/runtime.list" || true)
[ -z "$runtime_other" ] || { echo "FAIL: runtime holds more than the library: $runtime_other"; fail=1; }
[ "$fail" -eq 0 ] && echo "install layout: passed"
exit "$fail"
