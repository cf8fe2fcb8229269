#!/usr/bin/env bats
# coreai-gen generate --weights-format incbin (weights as a linked binary
# blob, the default), c (C initializers) and external (the blob not linked:
# the entrypoints take it). Needs COREAI_GEN and
# COREAI_SOURCE_DIR; ctest sets both. Builds and bit-identical outputs:
# tests/cmake/run_incbin.sh, e2e.*.cform_same_bits, e2e.*.external_same_bits.

setup() {
    : "${COREAI_GEN:?}" "${COREAI_SOURCE_DIR:?}"
    MODEL="$COREAI_SOURCE_DIR/examples/feedforward/feedforward.xml"
    TMP="$(mktemp -d)"
}

teardown() {
    rm -rf "$TMP"
}

@test "--help documents --weights-format, --weights-section and --weights-align" {
    run "$COREAI_GEN" --help
    [ "$status" -eq 0 ]
    [[ "$output" == *"--weights-format FORMAT"* ]]
    [[ "$output" == *"--weights-section NAME"* ]]
    [[ "$output" == *"--weights-align N"* ]]
}

@test "--weights-format incbin is the default, byte for byte; c writes no blob" {
    "$COREAI_GEN" generate "$MODEL" -o "$TMP/default"
    "$COREAI_GEN" generate "$MODEL" -o "$TMP/b" --weights-format incbin
    diff -r "$TMP/default" "$TMP/b"
    [ -s "$TMP/b/feedforward_weights.bin" ]
    "$COREAI_GEN" generate "$MODEL" -o "$TMP/c" --weights-format c
    [ ! -e "$TMP/c/feedforward_weights.bin" ]
    grep -q 'COREAI_ALIGNED(COREAI_ALIGNMENT) const float feedforward_g1_c1_packed_nk\[16384\] = {' \
        "$TMP/c/feedforward_weights.c"
}

@test "incbin: same NAME.h and NAME.c as c, a blob and an asm source naming it bare" {
    "$COREAI_GEN" generate "$MODEL" -o "$TMP/c" --weights-format c
    "$COREAI_GEN" generate "$MODEL" -o "$TMP/b" --weights-format incbin
    cmp "$TMP/c/feedforward.h" "$TMP/b/feedforward.h"
    cmp "$TMP/c/feedforward.c" "$TMP/b/feedforward.c"
    # 64 floats, then two packed 256 x 64 matrices, each at a multiple of 64
    [ "$(stat -c %s "$TMP/b/feedforward_weights.bin")" -eq $((256 + 65536 + 65536)) ]
    w="$TMP/b/feedforward_weights.c"
    grep -q '".pushsection .rodata.coreai_weights,\\"a\\",%progbits\\n"' "$w"
    # one .incbin of the whole blob, the symbols at offsets in it
    [ "$(grep -c '^    "\.incbin ' "$w")" -eq 1 ]
    grep -q '".incbin \\"feedforward_weights.bin\\", 0, 131328\\n"' "$w"
    grep -q '".set feedforward_g1_c1_packed_nk, .Lcoreai_feedforward_weights + 256\\n"' "$w"
    grep -q '".size feedforward_g1_c1_packed_nk, 65536\\n"' "$w"
    grep -q '".type feedforward_g1_c0, %object\\n"' "$w"
    grep -q '#error' "$w"
    ! grep -q "$TMP" "$w" || false
    # every symbol NAME.c declares is defined
    for s in $(sed -n 's/^extern const [a-z0-9_]* \([A-Za-z0-9_]*\)\[.*/\1/p' "$TMP/b/feedforward.c"); do
        grep -q "\".set $s, " "$w"
    done
}

@test "incbin: --weights-section and --weights-align" {
    "$COREAI_GEN" generate "$MODEL" -o "$TMP/b" --weights-format incbin --weights-section .ext_flash.weights \
        --weights-align 4096
    grep -q 'pushsection .ext_flash.weights,' "$TMP/b/feedforward_weights.c"
    grep -q '".balign 4096\\n"' "$TMP/b/feedforward_weights.c"
    grep -q '".set feedforward_g1_c1_packed_nk, .Lcoreai_feedforward_weights + 4096\\n"' "$TMP/b/feedforward_weights.c"
    [ "$(stat -c %s "$TMP/b/feedforward_weights.bin")" -eq $((69632 + 65536)) ]
}

@test "incbin: an unchanged blob keeps its mtime" {
    "$COREAI_GEN" generate "$MODEL" -o "$TMP/b" --weights-format incbin
    touch -d '2001-01-01' "$TMP/b/feedforward_weights.bin"
    "$COREAI_GEN" generate "$MODEL" -o "$TMP/b" --weights-format incbin
    [ "$(stat -c %Y "$TMP/b/feedforward_weights.bin")" -eq "$(date -d 2001-01-01 +%s)" ]
}

@test "bad --weights-* values are usage errors" {
    run "$COREAI_GEN" generate "$MODEL" -o "$TMP/x" --weights-format hex
    [ "$status" -eq 2 ]
    [[ "$output" == *"--weights-format 'hex' is not incbin, c or external"* ]]
    run "$COREAI_GEN" generate "$MODEL" -o "$TMP/x" --weights-format incbin --weights-section 'a",b'
    [ "$status" -eq 2 ]
    [[ "$output" == *"is not a section name"* ]]
    run "$COREAI_GEN" generate "$MODEL" -o "$TMP/x" --weights-format incbin --weights-align 96
    [ "$status" -eq 2 ]
    [[ "$output" == *"is not a power of two"* ]]
    run "$COREAI_GEN" generate "$MODEL" -o "$TMP/x" --weights-format incbin --weights-align 32
    [ "$status" -eq 2 ]
    run "$COREAI_GEN" generate "$MODEL" -o "$TMP/x" --weights-format c --weights-section .w
    [ "$status" -eq 2 ]
    [[ "$output" == *"--weights-section needs --weights-format incbin"* ]]
    run "$COREAI_GEN" generate "$MODEL" -o "$TMP/x" --weights-format external --weights-section .w
    [ "$status" -eq 2 ]
    [[ "$output" == *"--weights-section needs --weights-format incbin"* ]]
    run "$COREAI_GEN" generate "$MODEL" -o "$TMP/x" --weights-format c --weights-align 128
    [ "$status" -eq 2 ]
    [[ "$output" == *"--weights-align needs --weights-format incbin (the default) or external"* ]]
    run "$COREAI_GEN" check "$MODEL" --weights-format incbin
    [ "$status" -eq 2 ]
    [ ! -e "$TMP/x" ]
}

@test "external: the incbin blob, not linked; NAME.h gives its size, alignment and SHA-256" {
    "$COREAI_GEN" generate "$MODEL" -o "$TMP/b" --weights-format incbin
    "$COREAI_GEN" generate "$MODEL" -o "$TMP/e" --weights-format external
    # the same bytes as the linked blob, and no source links them
    cmp "$TMP/b/feedforward_weights.bin" "$TMP/e/feedforward_weights.bin"
    [ ! -e "$TMP/e/feedforward_weights.c" ]
    h="$TMP/e/feedforward.h"
    size=$(stat -c %s "$TMP/e/feedforward_weights.bin")
    sha=$(sha256sum "$TMP/e/feedforward_weights.bin" | cut -d' ' -f1)
    grep -q "^#define FEEDFORWARD_WEIGHTS_SIZE ${size}u$" "$h"
    grep -q '^#define FEEDFORWARD_WEIGHTS_ALIGNMENT 64u$' "$h"
    grep -q "^#define FEEDFORWARD_WEIGHTS_SHA256 \"$sha\"$" "$h"
    grep -q '^coreai_status feedforward_weights_check(const void \*weights, size_t size);$' "$h"
    grep -q '^    const void \*weights /\* the weights blob' "$h"
    # no symbol to link: constants are offsets from the pointer the graphs get
    ! grep -q '^extern const' "$TMP/e/feedforward.c" || false
    grep -q '^#define feedforward_g1_c1_packed_nk ((const float \*)(coreai_w + 256))$' "$TMP/e/feedforward.c"
    # the digest bytes in NAME.c are the header's
    first=$(printf '0x%s, 0x%s' "${sha:0:2}" "${sha:2:2}")
    grep -q "{$first" "$TMP/e/feedforward.c"
    # --weights-align moves the offsets and the alignment
    "$COREAI_GEN" generate "$MODEL" -o "$TMP/a" --weights-format external --weights-align 4096
    grep -q '^#define FEEDFORWARD_WEIGHTS_ALIGNMENT 4096u$' "$TMP/a/feedforward.h"
    grep -q '(coreai_w + 4096))$' "$TMP/a/feedforward.c"
}

@test "incbin chunks: the blob split at constant boundaries, one source per file" {
    "$COREAI_GEN" generate "$MODEL" -o "$TMP/b"
    # 256 B of norm weights, then two 64 KiB packed matrices: three chunks of
    # at most 64 KiB, each a .bin and the .c linking it
    "$COREAI_GEN" generate "$MODEL" -o "$TMP/k" --weights-chunk-size 65536
    [ "$(stat -c %s "$TMP/k/feedforward_weights.bin")" -eq 256 ]
    [ "$(stat -c %s "$TMP/k/feedforward_weights_1.bin")" -eq 65536 ]
    [ "$(stat -c %s "$TMP/k/feedforward_weights_2.bin")" -eq 65536 ]
    [ ! -e "$TMP/k/feedforward_weights_3.bin" ]
    cat "$TMP/k/feedforward_weights.bin" "$TMP/k/feedforward_weights_1.bin" "$TMP/k/feedforward_weights_2.bin" |
        cmp - "$TMP/b/feedforward_weights.bin"
    cmp "$TMP/k/feedforward.c" "$TMP/b/feedforward.c"
    w="$TMP/k/feedforward_weights_2.c"
    grep -q '".incbin \\"feedforward_weights_2.bin\\", 0, 65536\\n"' "$w"
    grep -q '".set feedforward_g1_c2_packed_nk, .Lcoreai_feedforward_weights_2 + 0\\n"' "$w"
    # every symbol NAME.c declares is defined in exactly one chunk
    for s in $(sed -n 's/^extern const [a-z0-9_]* \([A-Za-z0-9_]*\)\[.*/\1/p' "$TMP/k/feedforward.c"); do
        [ "$(cat "$TMP"/k/feedforward_weights*.c | grep -c "\".set $s, ")" -eq 1 ]
    done
    # --weights-chunks: exactly that many files; fewer chunks than files
    # leave empty ones, more merge into larger chunks
    "$COREAI_GEN" generate "$MODEL" -o "$TMP/n5" --weights-chunk-size 65536 --weights-chunks 5
    [ "$(stat -c %s "$TMP/n5/feedforward_weights_4.bin")" -eq 0 ]
    grep -q 'no constant' "$TMP/n5/feedforward_weights_4.c"
    "$COREAI_GEN" generate "$MODEL" -o "$TMP/n2" --weights-chunk-size 65536 --weights-chunks 2
    [ ! -e "$TMP/n2/feedforward_weights_2.bin" ]
    cat "$TMP/n2/feedforward_weights.bin" "$TMP/n2/feedforward_weights_1.bin" | cmp - "$TMP/b/feedforward_weights.bin"
    # the default: one file below 64 MiB, byte for byte the unsplit form
    "$COREAI_GEN" generate "$MODEL" -o "$TMP/n1" --weights-chunks 1
    diff -r "$TMP/b" "$TMP/n1"
    run "$COREAI_GEN" generate "$MODEL" -o "$TMP/x" --weights-chunks 0
    [ "$status" -eq 2 ]
    [[ "$output" == *"--weights-chunks '0' is not a number from 1 to 4096"* ]]
    run "$COREAI_GEN" generate "$MODEL" -o "$TMP/x" --weights-format external --weights-chunk-size 4096
    [ "$status" -eq 2 ]
    [[ "$output" == *"need --weights-format incbin"* ]]
}
