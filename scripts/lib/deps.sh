# shellcheck shell=bash
# scripts/lib/deps.sh - the Debian packages this project needs, and a check
# that installs them (as root) or says how to (otherwise). Sourced by
# scripts/demo and scripts/check.

COREAI_DEBIAN_PACKAGES=(
    build-essential gcc clang cmake ninja-build pkg-config
    libxml2-dev libxml2-utils libtalloc-dev nettle-dev libcmocka-dev
    bats python3 python3-numpy python3-torch python3-pytest
    libopenblas-dev valgrind git
)

# Prints the packages of "$@" that are not installed, one per line.
coreai_missing_packages() {
    local pkg status
    for pkg in "$@"; do
        status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
        if [ "$status" != installed ]; then
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
