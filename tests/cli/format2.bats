#!/usr/bin/env bats
# Model format 2 at the command line (docs/model-format.md): an entrypoint
# that only updates its states generates C that compiles warning-free and
# runs; a model with symbols generates C whose entrypoints take the
# symbols' values, run at the actual sizes and refuse values outside the
# ranges; a newer format is named. Needs COREAI_GEN, COREAI_SOURCE_DIR
# and COREAI_RUNTIME_LIB (COREAI_RUNNER_LIB for the runner test; COREAI_CC
# and COREAI_LINK_FLAGS: the build's compiler and link flags); ctest sets
# them.

setup() {
    : "${COREAI_GEN:?}" "${COREAI_SOURCE_DIR:?}" "${COREAI_RUNTIME_LIB:?}"
    DATA="$COREAI_SOURCE_DIR/tests/data/format2"
    TMP="$(mktemp -d)"
}

teardown() {
    rm -rf "$TMP"
}

@test "an entrypoint without outputs updates its state" {
    "$COREAI_GEN" generate "$DATA/state_only.xml" -o "$TMP/g" --prefix m --weights-format c
    cat > "$TMP/main.c" <<'C'
#include <stdio.h>
#include "m.h"
int main(void)
{
    static COREAI_ALIGNED(COREAI_ALIGNMENT) unsigned char ws[M_WORKSPACE_SIZE + 64];
    m_state st = {.acc = {1, 2, 3, 4}};
    const float x[4] = {10, 20, 30, 40};
    for (int call = 0; call < 2; call++)
        if (m_prefill(ws, x, &st) != COREAI_STATUS_OK)
            return 1;
    /* the descriptor has no output table for it */
    const coreai_entrypoint_desc *e = coreai_program_find_entrypoint(m_program(), "prefill");
    if (!e || e->n_outputs != 0 || e->outputs != NULL)
        return 2;
    printf("%g %g %g %g\n", st.acc[0], st.acc[1], st.acc[2], st.acc[3]);
    return 0;
}
C
    # shellcheck disable=SC2086 # COREAI_LINK_FLAGS is a list of flags
    "${COREAI_CC:-cc}" -std=c11 -Wall -Wextra -Werror -I "$COREAI_SOURCE_DIR/runtime-stubs/include" -I "$TMP/g" \
        "$TMP/main.c" "$TMP/g/m.c" "$TMP/g/m_weights.c" "$COREAI_RUNTIME_LIB" ${COREAI_LINK_FLAGS:-} -lm -o "$TMP/run"
    run "$TMP/run"
    [ "$status" -eq 0 ]
    # 1 + 2 * 10, 2 + 2 * 20, ... worked out by hand
    [ "$output" = "21 42 63 84" ]
}

@test "a model with symbols is checked, printed and generated: symbol parameters, range checks" {
    "$COREAI_GEN" check "$DATA/symbols.xml"
    run "$COREAI_GEN" print "$DATA/symbols.xml"
    [ "$status" -eq 0 ]
    [[ "$output" == *"coreai.symbol seq : [1, 8]"* ]]
    [[ "$output" == *"tensor<1x[seq]xf32>"* ]]
    "$COREAI_GEN" generate "$DATA/symbols.xml" -o "$TMP/s" --prefix m --weights-format c
    # the header's signature, checked by hand: the symbol after the workspace
    run sed -n '/^coreai_status m_main(/,/);$/p' "$TMP/s/m.h"
    [ "$output" = "coreai_status m_main(void *workspace,
    int64_t seq /* symbol, 1 <= seq <= 8 */,
    const float *x /* f32[1,seq] input: \"x\" */,
    float *y /* f32[1,seq] output: \"y\" */);" ]
    grep -q '^const coreai_program_symbols \*m_program_symbols(void);$' "$TMP/s/m.h"
}

@test "symbolic cache step: sizes inside the ranges match a reference, outside fail and write nothing" {
    "$COREAI_GEN" generate "$DATA/cache.xml" -o "$TMP/g" --prefix m --weights-format c
    # shellcheck disable=SC2086 # COREAI_LINK_FLAGS is a list of flags
    "${COREAI_CC:-cc}" -std=c11 -Wall -Wextra -Werror -I "$COREAI_SOURCE_DIR/runtime-stubs/include" -I "$TMP/g" \
        "$DATA/cache_main.c" "$TMP/g/m.c" "$TMP/g/m_weights.c" "$COREAI_RUNTIME_LIB" ${COREAI_LINK_FLAGS:-} -lm \
        -o "$TMP/run"
    run "$TMP/run"
    echo "$output"
    [ "$status" -eq 0 ]
    [ "${lines[-1]}" = "ok" ]
    [[ "$output" == *"n=5 off=0 status=1"* ]]
}

# npy NAME DTYPE(<f4, <i8) SHAPE(python tuple) VALUES(python list): a
# version 1.0 .npy file, written without numpy
npy() {
    python3 - "$@" <<'PY'
import struct, sys
path, descr, shape, values = sys.argv[1], sys.argv[2], sys.argv[3], eval(sys.argv[4])
header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
header += " " * (63 - (10 + len(header)) % 64) + "\n"
fmt = {"<f4": "f", "<i8": "q"}[descr]
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<%d%s" % (len(values), fmt), *values))
PY
}

@test "the runner binds the symbols from the input shapes and writes actual shapes; out of range is an error" {
    : "${COREAI_RUNNER_LIB:?}"
    "$COREAI_GEN" generate "$DATA/cache.xml" -o "$TMP/g" --prefix m --weights-format c
    sed 's/@COREAI_PREFIX@/m/g' "$COREAI_SOURCE_DIR/cmake/coreai_runner_main.c.in" > "$TMP/main.c"
    # shellcheck disable=SC2086 # COREAI_LINK_FLAGS is a list of flags
    "${COREAI_CC:-cc}" -std=c11 -Wall -Wextra -Werror -I "$COREAI_SOURCE_DIR/runtime-stubs/include" \
        -I "$COREAI_SOURCE_DIR/runtime-stubs/runner" -I "$TMP/g" "$TMP/main.c" "$TMP/g/m.c" "$TMP/g/m_weights.c" \
        "$COREAI_RUNNER_LIB" "$COREAI_RUNTIME_LIB" ${COREAI_LINK_FLAGS:-} -lm -lpthread -o "$TMP/run"
    npy "$TMP/upd.npy" "<f4" "(1, 3, 2)" "[1, 2, 3, 4, 5, 6]"
    npy "$TMP/past2.npy" "<f4" "(2,)" "[0, 0]"
    npy "$TMP/past7.npy" "<f4" "(7,)" "[0] * 7"
    npy "$TMP/bias.npy" "<f4" "(3, 1)" "[10, 20, 30]"
    npy "$TMP/bias2.npy" "<f4" "(2, 1)" "[10, 20]"
    npy "$TMP/cache.npy" "<f4" "(1, 8, 2)" "[-1] * 16"
    run "$TMP/run" --in upd="$TMP/upd.npy" --in past="$TMP/past2.npy" --in bias="$TMP/bias.npy" \
        --state cache="$TMP/cache.npy" --out "$TMP/o"
    [ "$status" -eq 0 ]
    # n = 3 rows at off = 2: seen is rows [0, 5), worked out by hand
    run python3 -c "
import struct, sys
for name, fmt in (('seen', 'f'), ('tot', 'f'), ('len', 'i'), ('cache', 'f')):
    b = open('$TMP/o/%s.npy' % name, 'rb').read()
    n = struct.unpack('<H', b[8:10])[0]
    head = b[10:10 + n].decode()
    data = b[10 + n:]
    print(name, head[head.index('shape'):head.index(')') + 1], list(struct.unpack('<%d%s' % (len(data) // 4, fmt), data)))
"
    echo "$output"
    [ "${lines[0]}" = "seen shape': (1, 5, 2) [-1.0, -1.0, -1.0, -1.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]" ]
    [ "${lines[1]}" = "tot shape': (3, 1) [13.0, 27.0, 41.0]" ]
    [ "${lines[2]}" = "len shape': (1,) [5]" ]
    [ "${lines[3]}" = "cache shape': (1, 8, 2) [-1.0, -1.0, -1.0, -1.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0]" ]
    run "$TMP/run" --help
    [ "$status" -eq 0 ]
    [[ "$output" == *"Entrypoint 'step' takes any input shape inside the ranges of its symbols"* ]]
    [[ "$output" == *": n in [1, 4], off in [0, 6]"* ]]
    # off = 7: one past its bound
    run "$TMP/run" --in upd="$TMP/upd.npy" --in past="$TMP/past7.npy" --in bias="$TMP/bias.npy" \
        --state cache="$TMP/cache.npy" --out "$TMP/o7"
    [ "$status" -eq 1 ]
    [[ "$output" == *"error: past: axis 0 has 7 elements, so symbol 'off' would be 7, outside its range [0, 6]"* ]]
    [ ! -e "$TMP/o7" ]
    # bias disagrees with upd on n
    run "$TMP/run" --in upd="$TMP/upd.npy" --in past="$TMP/past2.npy" --in bias="$TMP/bias2.npy" \
        --state cache="$TMP/cache.npy" --out "$TMP/o8"
    [ "$status" -eq 1 ]
    [[ "$output" == *"error: bias: expected f32[3,1] at the symbols read from the inputs, got f32[2,1]"* ]]
    [ ! -e "$TMP/o8" ]
}

@test "external weights with symbols: the runner gives the incbin form's bytes at several sizes; a bad blob is refused" {
    : "${COREAI_RUNNER_LIB:?}"
    sed 's/@COREAI_PREFIX@/m/g' "$COREAI_SOURCE_DIR/cmake/coreai_runner_main.c.in" > "$TMP/main.c"
    for form in incbin external; do
        "$COREAI_GEN" generate "$DATA/cache.xml" -o "$TMP/$form" --prefix m --weights-format "$form"
        weights_src="$TMP/$form/m_weights.c"
        [ "$form" = incbin ] || weights_src=""
        # shellcheck disable=SC2086 # COREAI_LINK_FLAGS is a list of flags; weights_src may be empty
        (cd "$TMP/$form" && "${COREAI_CC:-cc}" -std=c11 -Wall -Wextra -Werror \
            -I "$COREAI_SOURCE_DIR/runtime-stubs/include" -I "$COREAI_SOURCE_DIR/runtime-stubs/runner" -I . \
            "$TMP/main.c" m.c $weights_src "$COREAI_RUNNER_LIB" "$COREAI_RUNTIME_LIB" ${COREAI_LINK_FLAGS:-} \
            -lm -lpthread -o run)
    done
    grep -q "^coreai_status m_weights_check(const void \*weights, size_t size);$" "$TMP/external/m.h"
    npy "$TMP/cache.npy" "<f4" "(1, 8, 2)" "[0.5 * i - 3 for i in range(16)]"
    # (n, off): the smallest, a middle and the largest windows
    for size in "1 0" "3 2" "4 4" "2 6"; do
        set -- $size
        npy "$TMP/upd$1.npy" "<f4" "(1, $1, 2)" "[1.25 * i + 0.1 for i in range(2 * $1)]"
        npy "$TMP/past$2.npy" "<f4" "($2,)" "[0] * $2"
        npy "$TMP/bias$1.npy" "<f4" "($1, 1)" "[7.5 - i for i in range($1)]"
        args=(--in upd="$TMP/upd$1.npy" --in past="$TMP/past$2.npy" --in bias="$TMP/bias$1.npy"
              --state cache="$TMP/cache.npy")
        "$TMP/incbin/run" "${args[@]}" --out "$TMP/o_b_$1_$2"
        "$TMP/external/run" "${args[@]}" --weights "$TMP/external/m_weights.bin" --out "$TMP/o_e_$1_$2"
        for f in seen tot len cache; do
            cmp "$TMP/o_b_$1_$2/$f.npy" "$TMP/o_e_$1_$2/$f.npy"
        done
        # the actual extents, not the largest ones
        head -c 128 "$TMP/o_e_$1_$2/seen.npy" | grep -aq "'shape': (1, $(($1 + $2)), 2)"
    done
    # no --weights, or a blob of another size: refused before the call, nothing written
    run "$TMP/external/run" "${args[@]}" --out "$TMP/o_none"
    [ "$status" -eq 2 ]
    [[ "$output" == *"missing --weights FILE: model 'm' was generated with --weights-format external"* ]]
    printf 'x' > "$TMP/bad.bin"
    run "$TMP/external/run" "${args[@]}" --weights "$TMP/bad.bin" --out "$TMP/o_bad"
    [ "$status" -eq 1 ]
    [[ "$output" == *"not the weights of model 'm'"* ]]
    [ ! -e "$TMP/o_bad" ]
}

@test "a newer model format is named before anything else" {
    sed 's/format="2"/format="7"/' "$DATA/symbols.xml" > "$TMP/new.xml"
    run "$COREAI_GEN" check "$TMP/new.xml"
    [ "$status" -eq 1 ]
    [[ "$output" == *"new.xml:2: error: model format 7 is newer than this coreai-gen reads (formats 1 to 3)"* ]]
}
