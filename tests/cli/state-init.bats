#!/usr/bin/env bats
# States' initial values (model format 3, docs/model-format.md): the
# generated NAME_state_init() and the descriptor's init_state write what the
# model file records, the runner starts a state not given from it, and bad
# or inconsistent <init> elements are refused. The expected numbers are the
# model's <init> values (tests/data/state_init/model.xml) worked out by hand.
# Needs COREAI_GEN, COREAI_SOURCE_DIR, COREAI_RUNTIME_LIB and
# COREAI_RUNNER_LIB (COREAI_CC, COREAI_LINK_FLAGS); ctest sets them.

setup() {
    : "${COREAI_GEN:?}" "${COREAI_SOURCE_DIR:?}" "${COREAI_RUNTIME_LIB:?}" "${COREAI_RUNNER_LIB:?}"
    DATA="$COREAI_SOURCE_DIR/tests/data/state_init"
    TMP="$(mktemp -d)"
}

teardown() {
    rm -rf "$TMP"
}

build() { # build OUT MAIN.c GENDIR [LIBS...]
    local out=$1 main=$2 gen=$3
    shift 3
    # shellcheck disable=SC2086 # COREAI_LINK_FLAGS is a list of flags
    "${COREAI_CC:-cc}" -std=c11 -Wall -Wextra -Werror -I "$COREAI_SOURCE_DIR/runtime-stubs/include" \
        -I "$COREAI_SOURCE_DIR/runtime-stubs/runner" -I "$gen" -Wa,-I,"$gen" \
        "$main" "$gen/m.c" "$gen/m_weights.c" "$@" "$COREAI_RUNTIME_LIB" ${COREAI_LINK_FLAGS:-} -lm -lpthread -o "$out"
}

write_runner() { # write_runner GENDIR: the runner of model m
    cat > "$TMP/runner.c" <<'C'
#include "coreai_runner.h"
#include "m.h"
int main(int argc, char **argv) { return coreai_runner_main(argc, argv, m_program()); }
C
    build "$TMP/runner" "$TMP/runner.c" "$1" "$COREAI_RUNNER_LIB"
}

write_ones() { # write_ones FILE: f32[2,2] of ones as .npy (version 1.0, header padded to 128 bytes)
    {
        printf '\x93NUMPY\x01\x00\x76\x00'
        printf "%s" "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }"
        printf '%58s\n' ''
        printf '\x00\x00\x80\x3f%.0s' 1 2 3 4
    } > "$1"
}

@test "m_state_init and init_state write the recorded initial values" {
    for form in c incbin; do
        "$COREAI_GEN" generate "$DATA/model.xml" -o "$TMP/$form" --prefix m --weights-format "$form"
        cat > "$TMP/main.c" <<'C'
#include <stdio.h>
#include <string.h>
#include "m.h"
int main(void)
{
    static COREAI_ALIGNED(COREAI_ALIGNMENT) unsigned char ws[M_WORKSPACE_SIZE + 64];
    static m_state st;
    memset(&st, 0xff, sizeof st);
    if (m_state_init(&st) != COREAI_STATUS_OK || m_state_init(NULL) != COREAI_STATUS_INVALID_ARGUMENT)
        return 1;
    printf("%g %g %g %g | %lld | %g %g %g\n", st.acc[0], st.acc[1], st.acc[2], st.acc[3], (long long)st.n[0],
           st.w[0], st.w[1], st.w[7]);
    const float x[4] = {1, 1, 1, 1};
    float y[4];
    if (m_main(ws, x, &st, y) != COREAI_STATUS_OK)
        return 2;
    printf("%g %g %g %g | %lld | %g\n", y[0], y[1], y[2], y[3], (long long)st.n[0], st.w[7]);
    /* the descriptor reaches the same values by name */
    const coreai_program *p = m_program();
    float w[8] = {0};
    if (p->init_state == NULL || p->init_state("w", w) != COREAI_STATUS_OK ||
        p->init_state("nope", w) != COREAI_STATUS_INVALID_ARGUMENT)
        return 3;
    printf("%g %g\n", w[2], w[6]);
    return 0;
}
C
        build "$TMP/run_$form" "$TMP/main.c" "$TMP/$form"
        run "$TMP/run_$form"
        [ "$status" -eq 0 ]
        [ "${lines[0]}" = "1 2.5 -3 4 | 7 | 0 0.25 1.75" ]
        [ "${lines[1]}" = "2 3.5 -2 5 | 8 | 2.75" ]
        [ "${lines[2]}" = "0.5 1.5" ]
    done
}

@test "the header declares m_state_init after the state struct (golden)" {
    "$COREAI_GEN" generate "$DATA/model.xml" -o "$TMP/g" --prefix m
    sed -n '/^} m_state;/,/^coreai_status m_state_init/p' "$TMP/g/m.h" > "$TMP/got"
    cat > "$TMP/want" <<'H'
} m_state;

/* Writes every state's initial value (the value the model file records:
 * the buffer or sample input at export) into *state. Call it before the
 * first call of a sequence; COREAI_STATUS_INVALID_ARGUMENT for NULL. */
coreai_status m_state_init(m_state *state);
H
    diff -u "$TMP/want" "$TMP/got"
}

@test "the runner starts a state not given with --state from its initial value" {
    "$COREAI_GEN" generate "$DATA/model.xml" -o "$TMP/g" --prefix m --weights-format c
    write_runner "$TMP/g"
    write_ones "$TMP/x.npy"
    run "$TMP/runner" --in "x=$TMP/x.npy" --out "$TMP/out"
    [ "$status" -eq 0 ]
    [ "$(tail -c 16 "$TMP/out/y.npy" | od -An -tf4 | tr -s ' ' | sed 's/^ //; s/ $//')" = "2 3.5 -2 5" ]
    [ "$(tail -c 8 "$TMP/out/n.npy" | od -An -td8 | tr -d ' ')" = "8" ]
    # the same state given explicitly wins over the initial value
    run "$TMP/runner" --in "x=$TMP/x.npy" --state "acc=$TMP/x.npy" --out "$TMP/out2"
    [ "$status" -eq 0 ]
    [ "$(tail -c 16 "$TMP/out2/y.npy" | od -An -tf4 | tr -s ' ' | sed 's/^ //; s/ $//')" = "2 2 2 2" ]
}

@test "a state without <init> leaves m_state_init out, and the runner asks for it" {
    cp "$DATA/model.weights" "$TMP/"
    sed 's|<state name="n"><init fill="7"/></state>|<state name="n"/>|' "$DATA/model.xml" > "$TMP/partial.xml"
    "$COREAI_GEN" generate "$TMP/partial.xml" -o "$TMP/g" --prefix m --weights-format c
    run grep -c state_init "$TMP/g/m.h"
    [ "$output" = "0" ]
    write_runner "$TMP/g"
    write_ones "$TMP/x.npy"
    run "$TMP/runner" --in "x=$TMP/x.npy" --out "$TMP/out"
    [ "$status" -eq 2 ]
    [[ "$output" == *"missing state 'acc' of entrypoint 'main' (--state acc=FILE.npy)"* ]]
}

@test "bad or inconsistent initial values are refused" {
    cp "$DATA/model.weights" "$TMP/"
    check() { # check SED-EXPRESSION EXPECTED-MESSAGE
        sed "$1" "$DATA/model.xml" > "$TMP/bad.xml"
        run "$COREAI_GEN" generate "$TMP/bad.xml" -o "$TMP/out"
        [ "$status" -eq 1 ]
        [[ "$output" == *"$2"* ]] || { echo "got: $output"; return 1; }
        [ ! -e "$TMP/out/bad.c" ]
    }
    check 's/format="3"/format="2"/' 'bad.xml:25: error: <init> of state '"'acc'"' needs model format 3 (this file declares format 2)'
    check 's|<init>1 2.5 -3 4</init></state>\(.*\)$|<init>1 2.5 -3</init></state>|' "constant 'acc.init' has 3 values, but"
    check 's|fill="7"|fill="7.5"|' "constant 'n.init': fill value '7.5' is not a decimal integer for i64"
    check 's|length="32"|length="16"|' "constant 'w.init' has length 16, but"
    check '/entrypoint name="peek"/,$ s|<init>1 2.5 -3 4</init>|<init>1 2.5 -3 5</init>|' \
        "state 'acc': the initial value in entrypoint 'peek' differs from the one an earlier entrypoint gives"
}
