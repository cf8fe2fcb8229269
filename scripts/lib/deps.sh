# shellcheck shell=bash
# scripts/lib/deps.sh - the Debian packages this project needs, and a check
# that installs them (as root) or says how to (otherwise). Sourced by
# scripts/demo and scripts/check. The Python packages (PyTorch, NumPy,
# pytest, ...) come from PyPI into .venv/ (scripts/lib/venv.sh); Debian only
# provides python3 and python3-venv to create it.

COREAI_DEBIAN_PACKAGES=(
    build-essential gcc clang cmake ninja-build pkg-config
    libxml2-dev libxml2-utils libtalloc-dev nettle-dev libcmocka-dev
    bats python3 python3-venv
    libopenblas-dev valgrind git
    libclang-rt-14-dev llvm-14
)

# Prints the packages of "$@" that are not installed, one per line. A name
# may carry an architecture (libcmocka-dev:arm64); without one, the native
# (or arch-all) package counts: with a foreign architecture added to dpkg
# (scripts/cross-check adds arm64), dpkg-query reports one line per
# installed architecture of a Multi-Arch: same package.
coreai_missing_packages() {
    local pkg want native
    native=$(dpkg --print-architecture 2>/dev/null || true)
    for pkg in "$@"; do
        case $pkg in
            *:*) want=${pkg##*:} ;;
            *) want="($native|all)" ;;
        esac
        if ! dpkg-query -W -f='${db:Status-Status} ${Architecture}\n' "$pkg" 2>/dev/null |
            grep -Eqx "installed $want"; then
            echo "$pkg"
        fi
    done
}

# Makes sure every package is installed: installs the missing ones when
# running as root, otherwise prints the command to run and exits 1.
coreai_ensure_deps() {
    local missing
    if ! command -v dpkg-query >/dev/null 2>&1; then
        echo "warning: dpkg-query not found (not Debian?); make sure these are installed:" >&2
        echo "  ${COREAI_DEBIAN_PACKAGES[*]}" >&2
        return 0
    fi
    mapfile -t missing < <(coreai_missing_packages "${COREAI_DEBIAN_PACKAGES[@]}")
    if [ "${#missing[@]}" -eq 0 ]; then
        return 0
    fi
    if [ "$(id -u)" -eq 0 ]; then
        echo "==> installing missing packages: ${missing[*]}"
        apt-get update
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
        mapfile -t missing < <(coreai_missing_packages "${COREAI_DEBIAN_PACKAGES[@]}")
        if [ "${#missing[@]}" -ne 0 ]; then
            echo "error: still missing after apt-get install: ${missing[*]}" >&2
            exit 1
        fi
    else
        echo "error: missing Debian packages: ${missing[*]}" >&2
        echo "install them as root with:" >&2
        echo "  apt-get install -y --no-install-recommends ${missing[*]}" >&2
        exit 1
    fi
}

# The cross builds of scripts/cross-check: AArch64 gcc, qemu-user and the
# arm64 cmocka (multiarch); arm-none-eabi gcc, newlib and qemu-system-arm.
COREAI_CROSS_DEBIAN_PACKAGES=(
    gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user libcmocka-dev:arm64
    gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm
)

# Like coreai_ensure_deps for COREAI_CROSS_DEBIAN_PACKAGES; adds arm64 to
# dpkg's architectures first (multiarch: libcmocka-dev:arm64, the cmocka the
# AArch64 unit tests link).
coreai_ensure_cross_deps() {
    command -v dpkg-query >/dev/null 2>&1 || return 0
    local missing need_arch=0
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
        need_arch=1
    fi
    mapfile -t missing < <(coreai_missing_packages "${COREAI_CROSS_DEBIAN_PACKAGES[@]}")
    if [ "${#missing[@]}" -eq 0 ] && [ "$need_arch" -eq 0 ]; then
        return 0
    fi
    if [ "$(id -u)" -eq 0 ]; then
        if [ "$need_arch" -eq 1 ]; then
            echo "==> adding the arm64 architecture to dpkg (multiarch, for libcmocka-dev:arm64)"
            dpkg --add-architecture arm64
        fi
        echo "==> installing missing packages: ${missing[*]}"
        apt-get update
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
        mapfile -t missing < <(coreai_missing_packages "${COREAI_CROSS_DEBIAN_PACKAGES[@]}")
        if [ "${#missing[@]}" -ne 0 ]; then
            echo "error: still missing after apt-get install: ${missing[*]}" >&2
            exit 1
        fi
    else
        echo "error: missing Debian packages for the cross builds: ${missing[*]}" >&2
        echo "install them as root with:" >&2
        if [ "$need_arch" -eq 1 ]; then
            echo "  dpkg --add-architecture arm64 && apt-get update" >&2
        fi
        echo "  apt-get install -y --no-install-recommends ${missing[*]}" >&2
        exit 1
    fi
}
