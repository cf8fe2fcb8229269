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
    ! find "$1" -name '*.tmp-*' -o -name '*.old-*' | grep -q . || false
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
    # ~30 MB of C initializers to write (--weights-format c: the default
    # binary blob is written too fast): SIGTERM as soon as a temporary
    # appears, so the signal lands while the outputs are being written
    # (a fixed delay after the start landed before them)
    mkdir -p "$TMP/big"
    python3 - "$TMP/big" <<'PY'
import array, hashlib, sys
n = 1 << 21
data = array.array("f", (i * 0.37 for i in range(n))).tobytes()
open(f"{sys.argv[1]}/big.weights", "wb").write(data)
t = f'dtype="f32" shape="{n}"'
open(f"{sys.argv[1]}/big.xml", "w").write(
    f'<coreai-model format="1"><weights href="big.weights" size="{len(data)}" '
    f'sha256="{hashlib.sha256(data).hexdigest()}"/><graph name="main"><arg id="x" {t}/>'
    f'<const id="w" {t} offset="0" length="{len(data)}"/><op kind="coreai.add"><operand ref="x"/>'
    f'<operand ref="w"/><result id="y" {t}/></op><output><value ref="y"/></output></graph>'
    '<entrypoint name="main" graph="main"><input name="x"/><output name="y"/></entrypoint></coreai-model>')
PY
    caught=0
    for round in 1 2 3; do
        [ "$caught" -eq 0 ] || break
        rm -rf "$TMP/sig"
        "$COREAI_GEN" generate "$TMP/big/big.xml" -o "$TMP/sig" --weights-format c &
        pid=$!
        while kill -0 "$pid" 2>/dev/null && ! compgen -G "$TMP/sig/*.tmp-*" >/dev/null; do :; done
        compgen -G "$TMP/sig/*.tmp-*" >/dev/null && caught=$((caught + 1))
        kill -TERM "$pid" 2>/dev/null || true
        wait "$pid" || true
        no_leftovers "$TMP"
    done
    [ "$caught" -gt 0 ] # the signal did land while a temporary existed
}

# ---- special files (issue 16: a FIFO hung, /dev/zero read until out of memory) ----

valid_model() {  # DIR: valid.xml of tests/data/load and its weights
    mkdir -p "$1"
    cp "$COREAI_SOURCE_DIR/tests/data/load/valid.xml" "$1/valid.xml"
}

@test "a FIFO as the model file is refused, not waited on" {
    mkfifo "$TMP/fifo.xml"
    run timeout 20 "$COREAI_GEN" check "$TMP/fifo.xml"
    [ "$status" -eq 1 ]
    [[ "$output" == *"fifo.xml: error: cannot read model file: not a regular file"* ]]
}

@test "a directory as the model file is refused" {
    mkdir "$TMP/dir.xml"
    run "$COREAI_GEN" check "$TMP/dir.xml"
    [ "$status" -eq 1 ]
    [[ "$output" == *"dir.xml: error: cannot read model file:"* ]]
}

@test "a FIFO as the weights file is refused, not waited on" {
    valid_model "$TMP/m"
    mkfifo "$TMP/m/valid.weights"
    run timeout 20 "$COREAI_GEN" check "$TMP/m/valid.xml"
    [ "$status" -eq 1 ]
    [[ "$output" == *"valid.weights: error: cannot read weights file: not a regular file"* ]]
}

@test "a weights symlink to /dev/zero is refused" {
    valid_model "$TMP/m"
    ln -s /dev/zero "$TMP/m/valid.weights"
    run timeout 20 "$COREAI_GEN" check "$TMP/m/valid.xml"
    [ "$status" -eq 1 ]
    [[ "$output" == *"valid.xml:5: error: weights href 'valid.weights' resolves to '/dev/zero', outside the model's folder"* ]]
}

@test "a weights symlink out of the model folder is refused, one inside it is followed" {
    valid_model "$TMP/m"
    mkdir -p "$TMP/elsewhere" "$TMP/m/blobs"
    cp "$COREAI_SOURCE_DIR/tests/data/load/valid.weights" "$TMP/elsewhere/valid.weights"
    ln -s "$TMP/elsewhere/valid.weights" "$TMP/m/valid.weights"
    run "$COREAI_GEN" check "$TMP/m/valid.xml"
    [ "$status" -eq 1 ]
    [[ "$output" == *"outside the model's folder"* ]]
    rm "$TMP/m/valid.weights"
    cp "$COREAI_SOURCE_DIR/tests/data/load/valid.weights" "$TMP/m/blobs/w.bin"
    ln -s blobs/w.bin "$TMP/m/valid.weights"
    run "$COREAI_GEN" check "$TMP/m/valid.xml"
    [ "$status" -eq 0 ]
}

@test "a weights file larger than declared is refused without reading it all" {
    valid_model "$TMP/m"
    cp "$COREAI_SOURCE_DIR/tests/data/load/valid.weights" "$TMP/m/valid.weights"
    truncate -s 3G "$TMP/m/valid.weights"   # sparse
    run timeout 20 "$COREAI_GEN" check "$TMP/m/valid.xml"
    [ "$status" -eq 1 ]
    [[ "$output" == *"valid.weights: error: weights file is 3221225472 bytes, but the model says"* ]]
}

@test "the model file size is capped (default 256 MiB), --max-model-size changes the cap" {
    cp "$COREAI_SOURCE_DIR/tests/golden/ok-slice-maxsize/model.xml" "$TMP/big.xml"
    truncate -s 300M "$TMP/big.xml"   # sparse: refused from its size, unread
    run timeout 20 "$COREAI_GEN" check "$TMP/big.xml"
    [ "$status" -eq 1 ]
    [[ "$output" == *"big.xml: error: model file is too large (314572800 bytes; the limit is 268435456, see --max-model-size)"* ]]
    cp "$COREAI_SOURCE_DIR/tests/golden/ok-slice-maxsize/model.xml" "$TMP/small.xml"
    run "$COREAI_GEN" check "$TMP/small.xml" --max-model-size 100
    [ "$status" -eq 1 ]
    [[ "$output" == *"the limit is 100, see --max-model-size"* ]]
    run "$COREAI_GEN" check "$TMP/small.xml" --max-model-size 100000
    [ "$status" -eq 0 ]
    run "$COREAI_GEN" check "$TMP/small.xml" --max-model-size 12x
    [ "$status" -eq 2 ]
    run "$COREAI_GEN" --help
    [[ "$output" == *"--max-model-size BYTES"* ]]
}

@test "coreai-gen has no switch that skips the weights' SHA-256 check (only the fuzzer's build has one)" {
    run nm "$COREAI_GEN"
    [ "$status" -eq 0 ]
    [[ "$output" == *" T cg_weights_read"* ]] # the symbols are there to look at
    [[ "$output" != *"accept_any_sha256"* ]]
}
