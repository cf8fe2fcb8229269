#!/bin/bash
# usage: run_subproject.sh SOURCE_DIR
#
# Builds tests/cmake/subproject, a consumer that add_subdirectory()s the
# coreai-codegen SOURCE_DIR (its CMakeLists.txt asserts the subproject
# defaults), with an empty build type, and checks that:
#   * the only test is the consumer's own (ctest -N), which passes: the model
#     of coreai_add_model(MODEL examples/feedforward/feedforward.xml) matches
#     PyTorch's reference output;
#   * nothing is compiled with -Werror (COREAI_WERROR is OFF);
#   * the consumer's empty build type stays empty, and the runtime and the
#     model are compiled with -O3 all the same (COREAI_MODEL_OPTIMIZE), the
#     consumer's own code without it;
#   * -DCOREAI_MODEL_OPTIMIZE=OFF drops that -O3, and the OPTIMIZE keyword of
#     coreai_add_model overrides it per model (checked in a Debug configure).
# Exits non-zero on the first failure.
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 SOURCE_DIR" >&2
    exit 2
fi
src=$(cd "$1" && pwd)

fail() {
    echo "run_subproject: FAIL: $*" >&2
    exit 1
}
step() {
    echo "run_subproject: $*"
}

work=$(mktemp -d "${TMPDIR:-/tmp}/coreai-subproject.XXXXXX")
trap 'rm -rf "$work"' EXIT
build="$work/build"
log="$work/log"

# compile_flags FILE-REGEX: the compile commands of the sources matching
# FILE-REGEX in compile_commands.json, one per line (the runtime's dispatched
# kernels are compiled once per ISA variant, so a source may appear several
# times); none is an error
compile_flags() {
    python3 - "$build/compile_commands.json" "$1" <<'PY'
import json, re, sys
hits = [e for e in json.load(open(sys.argv[1])) if re.search(sys.argv[2], e["file"])]
if not hits:
    sys.exit(f"no compile command matches {sys.argv[2]}")
for hit in hits:
    print(hit.get("command") or " ".join(hit["arguments"]))
PY
}
# every_has_flag FLAG COMMANDS: each line of COMMANDS has FLAG
every_has_flag() {
    local line
    while IFS= read -r line; do
        has_flag "$1" "$line" || return 1
    done <<<"$2"
}
# some_has_flag FLAG COMMANDS: a line of COMMANDS has FLAG
some_has_flag() {
    local line
    while IFS= read -r line; do
        has_flag "$1" "$line" && return 0
    done <<<"$2"
    return 1
}
has_flag() { # FLAG COMMAND
    [[ " $2 " == *" $1 "* ]]
}

step "configure (add_subdirectory, no CMAKE_BUILD_TYPE)"
# The runtime with one dispatched variant beside baseline, not the default
# two: what is checked here is the flags and the consumer's build, and the
# AVX-512 variant's -O3 compile made this test 61 s instead of 39 idle here (the
# default set is built by the test tree itself and by python.runtime_objects).
cmake -S "$src/tests/cmake/subproject" -B "$build" -G Ninja -DCOREAI_SOURCE_DIR="$src" \
    -DCOREAI_RUNTIME_ISA_VARIANTS=avx2 -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$log" 2>&1 || { cat "$log"; fail "configure failed"; }
grep -q '^CMAKE_BUILD_TYPE:STRING=$' "$build/CMakeCache.txt" \
    || fail "the consumer's empty CMAKE_BUILD_TYPE was changed: $(grep '^CMAKE_BUILD_TYPE' "$build/CMakeCache.txt")"

step "ctest -N lists only the consumer's test"
ctest --test-dir "$build" -N >"$log" 2>&1 || { cat "$log"; fail "ctest -N failed"; }
grep -q "Total Tests: 1$" "$log" || { cat "$log"; fail "expected only the consumer's test"; }
grep -q "consumer.app" "$log" || { cat "$log"; fail "the consumer's test is missing"; }

step "compile flags"
if grep -q -- "-Werror" "$build/compile_commands.json"; then
    fail "something is compiled with -Werror: $(grep -m1 -o '"file": "[^"]*"' "$build/compile_commands.json")"
fi
model_cmd=$(compile_flags '/coreai/ff_model/feedforward\.c$')
runtime_cmd=$(compile_flags '/runtime-stubs/src/gemm_kernel\.c$')
app_cmd=$(compile_flags '/tests/cmake/downstream/main\.c$')
every_has_flag -O3 "$model_cmd" || fail "the model is not optimized: $model_cmd"
every_has_flag -O3 "$runtime_cmd" || fail "the runtime is not optimized: $runtime_cmd"
if has_flag -O3 "$app_cmd"; then fail "the consumer's own code got -O3: $app_cmd"; fi

step "build"
cmake --build "$build" >"$log" 2>&1 || { cat "$log"; fail "build failed"; }
grep -q "Generating C for Core AI model" "$log" || { cat "$log"; fail "the model was not generated"; }

step "run"
ctest --test-dir "$build" --output-on-failure >"$log" 2>&1 || { cat "$log"; fail "the consumer's test failed"; }
grep -q "100% tests passed" "$log" || { cat "$log"; fail "the consumer's test did not pass"; }

step "Debug, -DCOREAI_MODEL_OPTIMIZE=OFF: no -O3"
cmake "$build" -DCMAKE_BUILD_TYPE=Debug -DCOREAI_MODEL_OPTIMIZE=OFF >"$log" 2>&1 \
    || { cat "$log"; fail "reconfigure failed"; }
model_cmd=$(compile_flags '/coreai/ff_model/feedforward\.c$')
runtime_cmd=$(compile_flags '/runtime-stubs/src/gemm_kernel\.c$')
has_flag -O3 "$model_cmd" && fail "COREAI_MODEL_OPTIMIZE=OFF, yet the model has -O3: $model_cmd"
some_has_flag -O3 "$runtime_cmd" && fail "COREAI_MODEL_OPTIMIZE=OFF, yet the runtime has -O3: $runtime_cmd"

step "Debug, COREAI_MODEL_OPTIMIZE=OFF but OPTIMIZE ON for the model"
cmake "$build" -DCOREAI_SUBPROJECT_MODEL_OPTIMIZE=ON >"$log" 2>&1 || { cat "$log"; fail "reconfigure failed"; }
model_cmd=$(compile_flags '/coreai/ff_model/feedforward\.c$')
has_flag -O3 "$model_cmd" || fail "OPTIMIZE ON did not optimize the model: $model_cmd"
has_flag -g "$model_cmd" || fail "the Debug flags are gone: $model_cmd"

echo "run_subproject: all checks passed"
