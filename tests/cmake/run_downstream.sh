#!/bin/bash
# usage: run_downstream.sh INSTALL_PREFIX SOURCE_DIR
#
# Builds tests/cmake/downstream against a coreai-codegen installed in
# INSTALL_PREFIX (cmake --install), once with Ninja and once with Unix
# Makefiles, and checks that:
#   * find_package(coreai-codegen) provides coreai::runtime, coreai::runner,
#     coreai::coreai-gen and coreai_add_model();
#   * the generated model matches PyTorch (downstream app and <target>-run);
#   * coreai_add_model(PYTHON_SCRIPT) converts a PyTorch model at build time
#     with the installed coreai_torch;
#   * a second build does nothing (Ninja), touching the weights file
#     regenerates, and changing the model's <weights href> reconfigures and
#     tracks the new file;
#   * coreai_add_model() rejects bad arguments with a clear message.
# SOURCE_DIR is the coreai-codegen source tree (for the test project and the
# feedforward example model). PYTHON is the interpreter with torch and numpy
# (ctest passes COREAI_PYTHON_EXECUTABLE; default python3); the downstream
# project gets it as its COREAI_PYTHON_EXECUTABLE. Exits non-zero on the
# first failure.
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 INSTALL_PREFIX SOURCE_DIR" >&2
    exit 2
fi
prefix=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
python=${PYTHON:-python3}

fail() {
    echo "run_downstream: FAIL: $*" >&2
    exit 1
}
step() {
    echo "run_downstream: $*"
}

add_model_cmake=$(find "$prefix" -path '*/cmake/coreai-codegen/CoreaiAddModel.cmake' -print -quit)
[ -n "$add_model_cmake" ] || fail "no lib*/cmake/coreai-codegen/CoreaiAddModel.cmake under $prefix (was it installed?)"

work=$(mktemp -d "${TMPDIR:-/tmp}/coreai-downstream.XXXXXX")
trap 'rm -rf "$work"' EXIT

# A private copy of the model, so the test may touch and edit it.
mkdir "$work/model"
for f in feedforward.xml feedforward.weights reference_input.npy reference_output.npy; do
    cp "$src/examples/feedforward/$f" "$work/model/"
done

# Compares OUT.npy with REF.npy (max abs error <= 1e-5).
compare_npy() {
    "$python" - "$1" "$2" <<'EOF'
import sys
import numpy as np
out, ref = np.load(sys.argv[1]), np.load(sys.argv[2])
assert out.dtype == np.float32 and out.shape == ref.shape, (out.dtype, out.shape, ref.shape)
err = float(np.abs(out.astype(np.float64) - ref).max())
print(f"runner: max abs error vs PyTorch: {err:.3g}")
sys.exit(0 if err <= 1e-5 else 1)
EOF
}

run_generator() { # GENERATOR TAG
    local generator=$1 tag=$2
    local build="$work/build-$tag" log="$work/build-$tag.log"

    step "[$tag] configure"
    cmake -S "$src/tests/cmake/downstream" -B "$build" -G "$generator" \
        -DCMAKE_BUILD_TYPE=Debug -DCMAKE_PREFIX_PATH="$prefix" -DMODEL_DIR="$work/model" \
        -DCOREAI_PYTHON_EXECUTABLE="$python" >"$log" 2>&1 || { cat "$log"; fail "[$tag] configure failed"; }

    step "[$tag] build"
    cmake --build "$build" >"$log" 2>&1 || { cat "$log"; fail "[$tag] build failed"; }
    grep -q "Generating C for Core AI model" "$log" || { cat "$log"; fail "[$tag] the model was not generated"; }
    for f in feedforward.h feedforward.c feedforward_weights.c; do
        [ -f "$build/coreai/ff_model/$f" ] || fail "[$tag] missing $build/coreai/ff_model/$f (default OUTPUT_DIR/PREFIX)"
    done

    grep -q "Converting PyTorch model with export_tiny.py" "$log" \
        || { cat "$log"; fail "[$tag] the PYTHON_SCRIPT model was not converted"; }
    step "[$tag] run"
    "$build/tiny_app" || fail "[$tag] tiny_app (model converted at build time)"
    "$build/downstream" "$work/model/reference_input.npy" "$work/model/reference_output.npy" \
        || fail "[$tag] downstream app"
    "$build/ff_model-run" --in "x=$work/model/reference_input.npy" --out "$work/out-$tag" \
        || fail "[$tag] ff_model-run"
    compare_npy "$work/out-$tag/output.npy" "$work/model/reference_output.npy" \
        || fail "[$tag] runner output differs from PyTorch"

    step "[$tag] incremental builds"
    if [ "$generator" = Ninja ]; then
        ninja -C "$build" -n -d explain >"$log" 2>&1
        grep -q "no work to do" "$log" || { cat "$log"; fail "[$tag] a second build is not a no-op"; }
    fi
    sleep 1 # coarse mtimes
    touch "$work/model/feedforward.weights"
    cmake --build "$build" >"$log" 2>&1 || { cat "$log"; fail "[$tag] rebuild failed"; }
    grep -q "Generating C for Core AI model" "$log" \
        || { cat "$log"; fail "[$tag] touching the weights file did not regenerate"; }
    if [ "$generator" = Ninja ]; then
        ninja -C "$build" -n -d explain >"$log" 2>&1
        grep -q "no work to do" "$log" || { cat "$log"; fail "[$tag] not a no-op after regenerating"; }
    fi
}

run_generator Ninja ninja
run_generator "Unix Makefiles" make

# A changed <weights href> is seen: the build reconfigures and then depends on
# the new weights file (checked with Ninja, whose dry run is reliable).
step "[ninja] weights href change"
build="$work/build-ninja"
log="$work/href.log"
cp "$work/model/feedforward.weights" "$work/model/renamed.weights"
sed -i 's/href="feedforward.weights"/href="renamed.weights"/' "$work/model/feedforward.xml"
grep -q 'href="renamed.weights"' "$work/model/feedforward.xml" || fail "could not edit the model's href"
rm "$work/model/feedforward.weights"
cmake --build "$build" >"$log" 2>&1 || { cat "$log"; fail "build after the href change failed"; }
"$build/downstream" "$work/model/reference_input.npy" "$work/model/reference_output.npy" \
    || fail "downstream app after the href change"
sleep 1
touch "$work/model/renamed.weights"
ninja -C "$build" -n >"$log" 2>&1
grep -q "Generating C for Core AI model" "$log" \
    || { cat "$log"; fail "touching the new weights file does not regenerate"; }

# Argument errors are reported by coreai_add_model itself.
step "argument errors"
expect_error() { # MESSAGE-REGEX CALL
    local want=$1 call=$2 dir
    dir=$(mktemp -d "$work/err.XXXXXX")
    cat >"$dir/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.20)
project(err LANGUAGES C)
find_package(coreai-codegen REQUIRED)
$call
EOF
    if cmake -S "$dir" -B "$dir/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >"$dir/log" 2>&1; then
        fail "'$call' was accepted"
    fi
    grep -Eq "$want" "$dir/log" || { cat "$dir/log"; fail "'$call' did not report /$want/"; }
}
model="$work/model/feedforward.xml"
expect_error "MODEL <file> or PYTHON_SCRIPT <script> is required" "coreai_add_model(m)"
expect_error "unknown arguments: BOGUS" "coreai_add_model(m MODEL \"$model\" BOGUS)"
expect_error "model file not found" "coreai_add_model(m MODEL \"$work/nope.xml\")"
expect_error "PREFIX '1bad' is not a C identifier" "coreai_add_model(m MODEL \"$model\" PREFIX 1bad)"
expect_error "PREFIX needs a value" "coreai_add_model(m MODEL \"$model\" PREFIX)"

echo "run_downstream: all checks passed"
