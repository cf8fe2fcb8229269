#!/usr/bin/env bats
# Hostile and careless use (issue 16): all-or-nothing output, special files
# as model or weights, the model size cap. Needs COREAI_GEN and
# COREAI_SOURCE_DIR (ctest sets both).

setup() {
    : "${COREAI_GEN:?}" "${COREAI_SOURCE_DIR:?}"
    TMP="$(mktemp -d)"
    # two different models under the same file name
    mkdir -p "$TMP/a" "$TMP/b"
    cp "$COREAI_SOURCE_DIR/tests/golden/ok-slice-maxsize/model.xml" "$TMP/a/model.xml"
    cp "$COREAI_SOURCE_DIR/tests/e2e/cases/slice_maxsize/model.xml" "$TMP/b/model.xml"
}

teardown() {
    chmod -R u+w "$TMP" 2>/dev/null || true
    rm -rf "$TMP"
}

# the files of a folder with their checksums, one line each
snapshot() {
    (cd "$1" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum)
}

no_leftovers() {
    ! find "$1" -name '*.tmp-*' -o -name '*.old-*' | grep -q .
}

@test "a --stamp in a missing folder fails and leaves the previous outputs untouched" {
    "$COREAI_GEN" generate "$TMP/a/model.xml" -o "$TMP/out"
    before=$(snapshot "$TMP/out")
    run "$COREAI_GEN" generate "$TMP/b/model.xml" -o "$TMP/out" --stamp "$TMP/missing/stamp"
    [ "$status" -eq 1 ]
    [[ "$output" == *"$TMP/missing/stamp: error: cannot create a temporary file"* ]]
    [ "$(snapshot "$TMP/out")" = "$before" ]
    no_leftovers "$TMP"
}

@test "an output that cannot be renamed into place rolls back the ones already replaced" {
    "$COREAI_GEN" generate "$TMP/a/model.xml" -o "$TMP/out"
    rm "$TMP/out/model_weights.c"
    mkdir "$TMP/out/model_weights.c"   # rename(2) cannot replace a directory
    before=$(snapshot "$TMP/out")
    run "$COREAI_GEN" generate "$TMP/b/model.xml" -o "$TMP/out"
    [ "$status" -eq 1 ]
    [[ "$output" == *"model_weights.c: error: cannot replace"* ]]
    [ "$(snapshot "$TMP/out")" = "$before" ]
    no_leftovers "$TMP"
}

@test "a read-only output folder is an error with the old outputs in place" {
    [ "$(id -u)" -ne 0 ] || skip "root writes into read-only folders"
    "$COREAI_GEN" generate "$TMP/a/model.xml" -o "$TMP/out"
    before=$(snapshot "$TMP/out")
    chmod a-w "$TMP/out"
    run "$COREAI_GEN" generate "$TMP/b/model.xml" -o "$TMP/out"
    [ "$status" -eq 1 ]
    [ "$(snapshot "$TMP/out")" = "$before" ]
}

@test "ulimit -f: a file over the limit is a write error, no temporaries are left" {
    "$COREAI_GEN" generate "$TMP/a/model.xml" -o "$TMP/out"
    before=$(snapshot "$TMP/out")
    run bash -c "ulimit -f 1; exec '$COREAI_GEN' generate '$COREAI_SOURCE_DIR/examples/feedforward/feedforward.xml' -o '$TMP/out' --prefix model"
    [ "$status" -eq 1 ]
    [[ "$output" == *"cannot write: File too large"* ]]
    [ "$(snapshot "$TMP/out")" = "$before" ]
    no_leftovers "$TMP"
}

@test "SIGTERM while writing leaves no temporaries" {
    python3 "$COREAI_SOURCE_DIR/tests/stress/make_chain.py" relu 100000 "$TMP/long.xml"
    for delay in 0.3 0.6 0.9 1.2; do
        "$COREAI_GEN" generate "$TMP/long.xml" -o "$TMP/sig" &
        pid=$!
        sleep "$delay"
        kill -TERM "$pid" 2>/dev/null || true
        wait "$pid" || true
        no_leftovers "$TMP"
    done
}
