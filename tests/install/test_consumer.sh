#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the build into a fresh prefix, then builds and runs a program against it
# three ways: pkg-config + shared library, pkg-config + static library, and CMake's
# find_package(llmk).  Usage: test_install.sh BUILD_DIR TEST_SRC_DIR [EXTRA_CFLAGS]
set -euo pipefail
build=$1 src=$2 extra=${3:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
pc=$(find "$prefix" -name llmk.pc | head -n1)
[ -n "$pc" ] || { echo "FAIL: no llmk.pc under $prefix"; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc")
libdir=$(pkg-config --variable=libdir llmk)
for f in include/llmk/llmk.h include/llmk/advance_step.h; do
  [ -f "$prefix/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
[ -f "$libdir/libllmk.a" ] && ls "$libdir"/libllmk.so* > /dev/null || {
  echo "FAIL: libraries missing in $libdir"; exit 1; }
echo "pkg-config --cflags --libs llmk: $(pkg-config --cflags --libs llmk)"

# shellcheck disable=SC2046,SC2086
cc -std=c11 $extra "$src/consumer.c" $(pkg-config --cflags --libs llmk) \
   -Wl,-rpath,"$libdir" -o "$work/consumer_shared"
"$work/consumer_shared"
# (captured first: grep -q closing the pipe early would fail the pipeline under pipefail)
deps=$(ldd "$work/consumer_shared")
grep -q "$libdir/libllmk.so" <<< "$deps" || {
  echo "FAIL: consumer_shared does not use the installed libllmk.so"; exit 1; }

# shellcheck disable=SC2046,SC2086
cc -std=c11 $extra "$src/consumer.c" $(pkg-config --cflags llmk) "$libdir/libllmk.a" \
   $(pkg-config --libs-only-other --static llmk) $(pkg-config --static --libs llmk | sed 's/-L[^ ]*//; s/-lllmk//') \
   -o "$work/consumer_static"
"$work/consumer_static"

cmake -S "$src/cmake_consumer" -B "$work/cm" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_C_FLAGS="$extra" -DCMAKE_EXE_LINKER_FLAGS="$extra" > "$work/cm.log"
cmake --build "$work/cm" > "$work/cm-build.log" || { cat "$work/cm-build.log"; exit 1; }
"$work/cm/consumer"
"$work/cm/consumer_static"
echo "install: 3 passed, 0 failed"
