# Toolchain file: bare-metal Arm Cortex-M7 (FPv5 double-precision FPU, hard
# float ABI) with Debian's gcc-arm-none-eabi and libnewlib-arm-none-eabi.
#
#   cmake -S tests/cross/baremetal -B build-cross-m7 \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/arm-none-eabi-cortex-m7.cmake \
#     -DCOREAI_GEN_EXECUTABLE=/path/to/host/coreai-gen
#
# COREAI_ARM_CPU_FLAGS picks another core, e.g. Cortex-M4 with its
# single-precision FPU: "-mcpu=cortex-m4 -mfpu=fpv4-sp-d16 -mfloat-abi=hard".
# Executables link newlib with nosys.specs (system calls that fail with
# ENOSYS: no OS, no semihosting library). ctest runs them on QEMU's MPS2 AN500 board (a
# Cortex-M7) when qemu-system-arm is installed; the image must then start
# with a Cortex-M vector table and fit that board's memory (tests/cross/
# baremetal has a startup file and a linker script for it).

set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_AR arm-none-eabi-ar CACHE FILEPATH "")
set(CMAKE_RANLIB arm-none-eabi-ranlib CACHE FILEPATH "")
# No OS to link a test program for: compiler checks build a static library.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

if(NOT DEFINED COREAI_ARM_CPU_FLAGS)
  set(COREAI_ARM_CPU_FLAGS "-mcpu=cortex-m7 -mfpu=fpv5-d16 -mfloat-abi=hard")
endif()
set(CMAKE_C_FLAGS_INIT "${COREAI_ARM_CPU_FLAGS} -mthumb")
set(CMAKE_EXE_LINKER_FLAGS_INIT "--specs=nosys.specs")

if(NOT DEFINED COREAI_ARM_QEMU_MACHINE)
  set(COREAI_ARM_QEMU_MACHINE mps2-an500)
endif()
find_program(COREAI_QEMU_SYSTEM_ARM qemu-system-arm)
if(COREAI_QEMU_SYSTEM_ARM AND COREAI_ARM_QEMU_MACHINE)
  # the executable follows -kernel; its semihosting calls print and exit
  set(CMAKE_CROSSCOMPILING_EMULATOR "${COREAI_QEMU_SYSTEM_ARM};-M;${COREAI_ARM_QEMU_MACHINE};-nographic;-monitor;none;-serial;none;-semihosting-config;enable=on,target=native;-kernel")
endif()

set(CMAKE_FIND_ROOT_PATH /usr/lib/arm-none-eabi)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES COREAI_ARM_CPU_FLAGS COREAI_ARM_QEMU_MACHINE)
