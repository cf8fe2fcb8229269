# Toolchain file: cross build for 64-bit Arm Linux (AArch64) with Debian's
# gcc-aarch64-linux-gnu, tests run by qemu-user.
#
#   cmake -S . -B build-aarch64 \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
#     -DCOREAI_BUILD_GENERATOR=OFF -DCOREAI_GEN_EXECUTABLE=/path/to/host/coreai-gen
#
# Debian packages: gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user;
# target libraries the tests link (cmocka) come from multiarch:
#   dpkg --add-architecture arm64 && apt-get update && apt-get install libcmocka-dev:arm64
# (scripts/cross-check does all of this.)
#
# Overridable: COREAI_AARCH64_PREFIX (compiler prefix, default
# aarch64-linux-gnu-), COREAI_AARCH64_SYSROOT (libraries for qemu's -L,
# default /usr/aarch64-linux-gnu), COREAI_AARCH64_EMULATOR (default
# qemu-aarch64; empty: run the binaries directly, e.g. on an AArch64 host).

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

if(NOT DEFINED COREAI_AARCH64_PREFIX)
  set(COREAI_AARCH64_PREFIX aarch64-linux-gnu-)
endif()
if(NOT DEFINED COREAI_AARCH64_SYSROOT)
  set(COREAI_AARCH64_SYSROOT /usr/aarch64-linux-gnu)
endif()
if(NOT DEFINED COREAI_AARCH64_EMULATOR)
  set(COREAI_AARCH64_EMULATOR qemu-aarch64)
endif()

set(CMAKE_C_COMPILER ${COREAI_AARCH64_PREFIX}gcc)
set(CMAKE_AR ${COREAI_AARCH64_PREFIX}ar CACHE FILEPATH "")
set(CMAKE_RANLIB ${COREAI_AARCH64_PREFIX}ranlib CACHE FILEPATH "")

# ctest (and try_run) run target binaries through the emulator; -L makes it
# load the dynamic linker from the cross sysroot. Libraries that are not
# there (multiarch :arm64 packages in /usr/lib/aarch64-linux-gnu) are found
# by qemu's fallback to the host path.
#
# LD_LIBRARY_PATH pins libc.so.6 to the sysroot's too: the dynamic linker
# searches /lib/aarch64-linux-gnu first, which the fallback maps to the
# multiarch libc6:arm64 (pulled in by libcmocka-dev:arm64), a different build
# from the cross sysroot's ld.so. The two share private state (_rtld_global,
# e.g. the thread stack cache list); mixed, pthread_create walks that list
# forever, so every program that starts a thread hung.
if(COREAI_AARCH64_EMULATOR)
  find_program(COREAI_AARCH64_EMULATOR_PATH ${COREAI_AARCH64_EMULATOR})
  if(NOT COREAI_AARCH64_EMULATOR_PATH)
    message(FATAL_ERROR "${COREAI_AARCH64_EMULATOR} not found (Debian: apt-get install qemu-user)")
  endif()
  set(CMAKE_CROSSCOMPILING_EMULATOR
      "${COREAI_AARCH64_EMULATOR_PATH};-L;${COREAI_AARCH64_SYSROOT};-E;LD_LIBRARY_PATH=${COREAI_AARCH64_SYSROOT}/lib")
endif()

# Target headers and libraries: the cross sysroot and multiarch.
set(CMAKE_FIND_ROOT_PATH ${COREAI_AARCH64_SYSROOT})
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# pkg-config (cmocka): the arm64 .pc files only, never the host's.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# Keep the cache variables above visible inside try_compile projects.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES
     COREAI_AARCH64_PREFIX COREAI_AARCH64_SYSROOT COREAI_AARCH64_EMULATOR)
