#!/bin/bash
# usage: run_pkgconfig_app.sh INSTALL_PREFIX SOURCE_DIR
#
# Builds tests/cmake/pkgconfig_app, a plain Makefile application, against a
# coreai-codegen installed in INSTALL_PREFIX (cmake --install), with nothing
# but pkg-config and the installed coreai-gen:
#   * the prefix is copied elsewhere first, so the .pc file must be
#     relocatable (paths relative to ${pcfiledir});
#   * `pkg-config --cflags --libs coreai-runtime` (PKG_CONFIG_PATH=<copy>/lib*/pkgconfig)
#     names the copy's include and library directories and -lcoreai_runtime;
#   * the copy's bin/coreai-gen generates examples/feedforward's model into a
#     temporary directory, `make` builds the app with -Wall -Wextra -Werror,
#     and its output matches PyTorch's reference output (max abs error <= 1e-5).
# Exits non-zero on the first failure.
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 INSTALL_PREFIX SOURCE_DIR" >&2
    exit 2
fi
installed=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)

fail() {
    echo "run_pkgconfig_app: FAIL: $*" >&2
    exit 1
}
step() {
    echo "run_pkgconfig_app: $*"
}

command -v pkg-config >/dev/null || fail "pkg-config not found"
pc=$(find "$installed" -path '*/pkgconfig/coreai-runtime.pc' -print -quit)
[ -n "$pc" ] || fail "no */pkgconfig/coreai-runtime.pc under $installed (was it installed?)"
[ -x "$installed/bin/coreai-gen" ] || fail "no $installed/bin/coreai-gen (was it installed?)"

work=$(mktemp -d "${TMPDIR:-/tmp}/coreai-pkgconfig.XXXXXX")
trap 'rm -rf "$work"' EXIT

step "copy of the prefix in $work/prefix"
prefix="$work/prefix"
mkdir "$prefix"
cp -r "$installed/bin" "$installed/include" "$prefix/"
pcdir_rel=$(dirname "${pc#"$installed"/}")
libdir_rel=$(dirname "$pcdir_rel")
mkdir -p "$prefix/$libdir_rel"
cp -r "$installed/$libdir_rel/." "$prefix/$libdir_rel/"
export PKG_CONFIG_PATH="$prefix/$pcdir_rel"
unset PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR

step "pkg-config --cflags --libs coreai-runtime"
flags=$(pkg-config --cflags --libs coreai-runtime) || fail "pkg-config --cflags --libs coreai-runtime"
echo "  $flags"
# pkg-config may print the paths with or without ${pcfiledir}'s ".." resolved
for want in "-I" "-L" "-lcoreai_runtime"; do
    [[ " $flags " == *" $want"* ]] || fail "no $want in: $flags"
done
cflags_dir=$(pkg-config --cflags-only-I coreai-runtime | sed 's/^ *-I//; s/ *$//')
libs_dir=$(pkg-config --libs-only-L coreai-runtime | sed 's/^ *-L//; s/ *$//')
[ "$(cd "$cflags_dir" && pwd)" = "$(cd "$prefix/include" && pwd)" ] || fail "-I$cflags_dir is not the copy's include/"
[ "$(cd "$libs_dir" && pwd)" = "$(cd "$prefix/$libdir_rel" && pwd)" ] || fail "-L$libs_dir is not the copy's $libdir_rel/"
[ "$(pkg-config --modversion coreai-runtime)" != "" ] || fail "no Version"

step "coreai-gen generate (installed)"
"$prefix/bin/coreai-gen" generate "$src/examples/feedforward/feedforward.xml" -o "$work/model" --prefix feedforward \
    || fail "coreai-gen generate"

step "make"
cp "$src/tests/cmake/pkgconfig_app/Makefile" "$src/tests/cmake/pkgconfig_app/main.c" "$work/"
make -C "$work" MODEL_DIR="$work/model" >"$work/make.log" 2>&1 || { cat "$work/make.log"; fail "make"; }
grep -q -- "-lcoreai_runtime" "$work/make.log" || { cat "$work/make.log"; fail "the link did not use pkg-config's flags"; }

step "run"
"$work/app" "$src/examples/feedforward/reference_input.npy" "$src/examples/feedforward/reference_output.npy" \
    || fail "the app's output differs from PyTorch's"

echo "run_pkgconfig_app: all checks passed"
