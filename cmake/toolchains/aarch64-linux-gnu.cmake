# SPDX-License-Identifier: Apache-2.0
# Cross build for aarch64 Linux with Debian's cross compilers (crossbuild-essential-arm64);
# tests run under qemu-user (qemu-user package) with the cross sysroot:
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
#   cmake --build build-arm64 -j && ctest --test-dir build-arm64
# LLMK_CROSS_PREFIX / LLMK_CROSS_SYSROOT override the compilers' prefix and the sysroot.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
if(NOT LLMK_CROSS_PREFIX)
  set(LLMK_CROSS_PREFIX aarch64-linux-gnu-)
endif()
if(NOT LLMK_CROSS_SYSROOT)
  set(LLMK_CROSS_SYSROOT /usr/aarch64-linux-gnu)
endif()
set(CMAKE_C_COMPILER ${LLMK_CROSS_PREFIX}gcc)
set(CMAKE_CXX_COMPILER ${LLMK_CROSS_PREFIX}g++)
set(CMAKE_FIND_ROOT_PATH ${LLMK_CROSS_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# Passed on to try_compile projects and to the consumer projects the tests configure.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES LLMK_CROSS_PREFIX LLMK_CROSS_SYSROOT)
find_program(LLMK_QEMU_AARCH64 qemu-aarch64)
if(LLMK_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${LLMK_QEMU_AARCH64} -L ${LLMK_CROSS_SYSROOT})
endif()
