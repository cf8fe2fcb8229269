#!/bin/bash
# usage: run_incbin.sh SOURCE_DIR COREAI_GEN [COMPILER...]
#
# Builds tests/cmake/incbin with each COMPILER (default: gcc clang; one not
# installed is skipped with a note) and checks that:
#   * every model built with WEIGHTS_FORMAT incbin gives bit-identical outputs
#     to its C-initializer build (tests/e2e/same_bits.sh) on the case inputs;
#   * the weights object has its constants in .rodata.coreai_weights aligned
#     to 64 (2**6), and with --weights-section .coreai_weights --weights-align
#     256 in .coreai_weights aligned to 2**8, every constant a read-only
#     object of the size NAME.c declares;
#   * the source names the blob by its bare name (no build paths);
#   * without WEIGHTS_FORMAT the model is built incbin (the default for GCC
#     and Clang on ELF);
#   * a changed blob rebuilds the weights object (OBJECT_DEPENDS) and relinks
#     the runner, and a second build does nothing.
set -euo pipefail
if [ $# -lt 2 ]; then
    echo "usage: $0 SOURCE_DIR COREAI_GEN [COMPILER...]" >&2
    exit 2
fi
src=$(cd "$1" && pwd)
gen=$2
shift 2
compilers=("$@")
[ ${#compilers[@]} -gt 0 ] || compilers=(gcc clang)

fail() { echo "run_incbin: FAIL: $*" >&2; exit 1; }
step() { echo "run_incbin: $*"; }

work=$(mktemp -d "${TMPDIR:-/tmp}/coreai-incbin.XXXXXX")
trap 'rm -rf "$work"' EXIT

# the feedforward example as a case directory: its reference input
mkdir -p "$work/ff"
cp "$src/examples/feedforward/reference_input.npy" "$work/ff/in_x.npy"
case_dir() {
    if [ "$1" = feedforward ]; then echo "$work/ff"; else echo "$src/tests/e2e/cases/$1"; fi
}

# check_section OBJ SECTION ALIGN_POW: SECTION exists in OBJ with alignment
# 2**ALIGN_POW, and every symbol of it is a read-only object
check_section() {
    local obj=$1 sect=$2 pow=$3
    objdump -h "$obj" | awk -v s="$sect" -v a="2**$pow" '$2 == s { found = 1; if ($7 != a) bad = $7 }
        END { if (!found) { print "no section " s; exit 1 } if (bad) { print s " aligned " bad ", not " a; exit 1 } }' \
        || fail "$obj: section $sect"
    local n
    n=$(nm "$obj" | awk '$2 != "R" { bad++ } END { print NR - bad }')
    [ "$n" -gt 0 ] || fail "$obj: no read-only symbols"
    nm "$obj" | awk '$2 != "R" { print; bad = 1 } END { exit bad }' >&2 || fail "$obj: a symbol is not read-only data"
    # every symbol lies in the section
    objdump -t "$obj" | awk -v s="$sect" '/ g +O / && $4 != s { print; bad = 1 } END { exit bad }' >&2 \
        || fail "$obj: a constant outside $sect"
}

ran=0
for cc in "${compilers[@]}"; do
    if ! command -v "$cc" >/dev/null 2>&1; then
        echo "run_incbin: note: $cc is not installed, skipped"
        continue
    fi
    build=$work/build-$cc
    log=$work/log-$cc
    step "[$cc] configure and build"
    # one ISA variant of the kernels (no dispatch): what is checked here is
    # the weights' linking, which the kernels do not touch, and the three
    # variants were most of its time (127 -> 39 s on 2 cores)
    CC=$cc cmake -S "$src/tests/cmake/incbin" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCOREAI_RUNTIME_DISPATCH=OFF -DCOREAI_SOURCE_DIR="$src" -DCOREAI_GEN_EXECUTABLE="$gen" -DCOREAI_WERROR=ON >"$log" 2>&1 \
        || { cat "$log"; fail "[$cc] configure"; }
    cmake --build "$build" --target incbin_runners >"$log" 2>&1 || { cat "$log"; fail "[$cc] build"; }

    for name in feedforward gemm_residual conv_pool comp_rope_default norms comp_lstm_forward; do
        "$src/tests/e2e/same_bits.sh" "$build/${name}_c-run" "$build/${name}_incbin-run" "$(case_dir $name)" \
            "$work/out-$cc-$name" >/dev/null || fail "[$cc] $name: incbin and c outputs differ"
        w=$build/coreai/${name}_incbin/${name}_weights.c
        grep -q "\.incbin \\\\\"${name}_weights.bin\\\\\"" "$w" || fail "[$cc] $w does not .incbin ${name}_weights.bin"
        if grep -q "$build" "$w"; then fail "[$cc] $w names the build directory"; fi
        check_section "$(find "$build" -path "*${name}_incbin.dir/*${name}_weights.c.o")" .rodata.coreai_weights 6
    done
    "$src/tests/e2e/same_bits.sh" "$build/feedforward_c-run" "$build/feedforward_sect-run" "$work/ff" \
        "$work/out-$cc-sect" >/dev/null || fail "[$cc] feedforward with --weights-section: outputs differ"
    obj=$(find "$build" -path "*feedforward_sect.dir/*feedforward_weights.c.o")
    check_section "$obj" .coreai_weights 8
    # each constant starts at a multiple of 256 and has the declared size
    while read -r addr; do
        [ $((16#$addr % 256)) -eq 0 ] || fail "[$cc] a constant at 0x$addr, not a multiple of 256"
    done < <(objdump -t "$obj" | awk '/ g +O / { print $1 }')
    c_sizes=$(nm -S --size-sort "$(find "$build" -path "*feedforward_c.dir/*feedforward_weights.c.o")" | awk '{ print $2, $4 }' | sort)
    b_sizes=$(nm -S --size-sort "$obj" | awk '{ print $2, $4 }' | sort)
    [ "$c_sizes" = "$b_sizes" ] || fail "[$cc] symbol sizes differ from the C initializers: $c_sizes / $b_sizes"

    [ -s "$build/coreai/feedforward_default/feedforward_weights.bin" ] \
        || fail "[$cc] no WEIGHTS_FORMAT: no blob, so not incbin by default"
    "$src/tests/e2e/same_bits.sh" "$build/feedforward_c-run" "$build/feedforward_default-run" "$work/ff" \
        "$work/out-$cc-default" >/dev/null || fail "[$cc] feedforward, default format: outputs differ"

    step "[$cc] dependency tracking"
    cmake --build "$build" --target incbin_runners >"$log" 2>&1 || { cat "$log"; fail "[$cc] second build"; }
    if grep -E -q "Generating|Building|Linking" "$log"; then cat "$log"; fail "[$cc] a second build did work"; fi
    touch "$build/coreai/feedforward_incbin/feedforward_weights.bin"
    cmake --build "$build" --target incbin_runners >"$log" 2>&1 || { cat "$log"; fail "[$cc] rebuild"; }
    grep -q "feedforward_incbin.dir/.*feedforward_weights.c.o" "$log" \
        || { cat "$log"; fail "[$cc] a changed blob did not rebuild the weights object"; }
    grep -q "Linking C executable feedforward_incbin-run" "$log" \
        || { cat "$log"; fail "[$cc] a changed blob did not relink the runner"; }
    ran=$((ran + 1))
    step "[$cc] ok: 6 models bit-identical, sections and alignment checked"
done
[ "$ran" -gt 0 ] || fail "no compiler to test with"
step "all passed"
