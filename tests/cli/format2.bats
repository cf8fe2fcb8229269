#!/usr/bin/env bats
# Model format 2 at the command line (docs/model-format.md): an entrypoint
# that only updates its states generates C that compiles warning-free and
# runs; a model with symbols generates C whose entrypoints take the
# symbols' values, run at the actual sizes and refuse values outside the
# ranges; a newer format is named. Needs COREAI_GEN, COREAI_SOURCE_DIR
# and COREAI_RUNTIME_LIB (COREAI_CC and COREAI_LINK_FLAGS: the build's
# compiler and link flags); ctest sets them.

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

@test "a newer model format is named before anything else" {
    sed 's/format="2"/format="7"/' "$DATA/symbols.xml" > "$TMP/new.xml"
    run "$COREAI_GEN" check "$TMP/new.xml"
    [ "$status" -eq 1 ]
    [[ "$output" == *"new.xml:2: error: model format 7 is newer than this coreai-gen reads (formats 1 to 3)"* ]]
}
