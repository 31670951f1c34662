#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the build into a fresh prefix, then builds and runs the consumer example
# (examples/consumer: consumer.c and consumer.cpp) against it, the ways an engine would:
#   pkg-config, cc and c++, shared and static library;
#   find_package(llmk) from a C project, a C++ project and a mixed one, shared and static.
# No consumer compile line may carry -fopenmp (the static library's OpenMP runtime is a
# link dependency only). Usage: test_consumer.sh BUILD_DIR CONSUMER_DIR [EXTRA_FLAGS]
# The environment names the build's compilers (CC, CXX; default cc, c++), how to run what
# they make (EMU: empty natively, qemu-aarch64 -L SYSROOT in a cross build) and the
# toolchain file the CMake consumers are configured with (LLMK_TOOLCHAIN_FILE).
set -euo pipefail
build=$1 src=$2 extra=${3:-}
CC=${CC:-cc} CXX=${CXX:-c++} EMU=${EMU:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
pc=$(find "$prefix" -name llmk.pc | head -n1)
[ -n "$pc" ] || { echo "FAIL: no llmk.pc under $prefix"; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc")
libdir=$(cd "$(pkg-config --variable=libdir llmk)" && pwd -P)
for f in include/llmk/llmk.h include/llmk/version.h include/llmk/advance_step.h; do
  [ -f "$prefix/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
[ -f "$libdir/libllmk.a" ] && ls "$libdir"/libllmk.so* > /dev/null || {
  echo "FAIL: libraries missing in $libdir"; exit 1; }
echo "pkg-config --cflags --libs llmk: $(pkg-config --cflags --libs llmk)"
case " $(pkg-config --cflags llmk) " in
  *-fopenmp*) echo "FAIL: pkg-config --cflags carries -fopenmp"; exit 1 ;;
esac
passed=0

uses_shared() { # program: yes when it loads the installed libllmk.so (ld.so lists what it loads)
  local deps
  # (captured: grep -q closing a pipe early fails under pipefail)
  if [ -n "$EMU" ]; then deps=$(QEMU_SET_ENV=LD_TRACE_LOADED_OBJECTS=1 $EMU "$1")  # the guest's ld.so
  else deps=$(LD_TRACE_LOADED_OBJECTS=1 "$1"); fi
  grep -q "$libdir/libllmk.so" <<< "$deps"
}
run() { # program shared|static
  $EMU "$1" || { echo "FAIL: $(basename "$1") exited with $?"; exit 1; }
  if [ "$2" = shared ]; then
    uses_shared "$1" || { echo "FAIL: $(basename "$1") does not use the installed libllmk.so"; exit 1; }
  else
    ! uses_shared "$1" || { echo "FAIL: $(basename "$1") loads libllmk.so"; exit 1; }
  fi
  passed=$((passed + 1))
}

static_libs=$(pkg-config --static --libs llmk | sed "s|-L[^ ]*||; s|-lllmk|$libdir/libllmk.a|")
langs_pc="c cxx" langs_cm=(C CXX "C;CXX")
if ! command -v "${CXX%% *}" > /dev/null; then
  echo "SKIP (the C++ consumers): no C++ compiler ($CXX)"
  langs_pc=c langs_cm=(C)
fi
for lang in $langs_pc; do
  if [ $lang = c ]; then compiler="$CC -std=c11" file=consumer.c; else compiler="$CXX -std=c++17" file=consumer.cpp; fi
  # shellcheck disable=SC2046,SC2086
  $compiler $extra "$src/$file" $(pkg-config --cflags --libs llmk) -Wl,-rpath,"$libdir" \
    -o "$work/pc_${lang}_shared"
  run "$work/pc_${lang}_shared" shared
  # shellcheck disable=SC2046,SC2086
  $compiler $extra "$src/$file" $(pkg-config --cflags llmk) $static_libs -o "$work/pc_${lang}_static"
  run "$work/pc_${lang}_static" static
done

toolchain=()
# (a cross toolchain confines find_package to the sysroot: the package is named directly)
[ -z "${LLMK_TOOLCHAIN_FILE:-}" ] ||
  toolchain=(-DCMAKE_TOOLCHAIN_FILE="$LLMK_TOOLCHAIN_FILE" -Dllmk_DIR="$(dirname "$(find "$prefix" -name llmkConfig.cmake)")")
for langs in "${langs_cm[@]}"; do
  b=$work/cm-${langs/;/-}
  cmake -S "$src" -B "$b" "${toolchain[@]}" -DCMAKE_PREFIX_PATH="$prefix" \
        -DCMAKE_C_COMPILER="${CC%% *}" -DCMAKE_CXX_COMPILER="${CXX%% *}" -DCONSUMER_LANGUAGES="$langs" \
        -DCMAKE_C_FLAGS="$extra" -DCMAKE_CXX_FLAGS="$extra" -DCMAKE_EXE_LINKER_FLAGS="$extra" \
        > "$b.log" 2>&1 || { cat "$b.log"; echo "FAIL: find_package(llmk) in a $langs project"; exit 1; }
  cmake --build "$b" > "$b-build.log" 2>&1 || { cat "$b-build.log"; exit 1; }
  if grep -q -- '-fopenmp' "$b/compile_commands.json"; then
    echo "FAIL: -fopenmp reached a $langs consumer's compile line"; exit 1
  fi
  n=0
  for l in c cxx; do
    [ -x "$b/consumer_$l" ] || continue
    run "$b/consumer_$l" shared
    run "$b/consumer_${l}_static" static
    n=$((n + 1))
  done
  [ "$n" -eq "$(tr ';' '\n' <<< "$langs" | wc -l)" ] || { echo "FAIL: $langs project built $n programs"; exit 1; }
  echo "find_package(llmk) from a $langs project: shared and static run"
done
echo "consumer: $passed passed, 0 failed (pkg-config: cc, c++; find_package: C, CXX, C+CXX; shared and static each)"
