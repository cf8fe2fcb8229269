#!/bin/bash
# external_rejects.sh RUNNER CASE_DIR BLOB OUT_DIR: the runner of a model
# generated with --weights-format external must refuse, before any call and
# with exit status 1 and a message naming the cause, its blob with one byte
# flipped (the SHA-256 check) and its blob one byte short (the size check);
# without --weights it is a usage error (2). The intact blob runs (0), so the
# refusals are the check's, not a broken setup's.
set -euo pipefail
runner=$1 case_dir=$2 blob=$3 out=$4
# shellcheck source=tests/e2e/case_args.sh
source "$(dirname "$0")/case_args.sh"
case_args "$case_dir"
rm -rf "$out"; mkdir -p "$out"
size=$(stat -c %s "$blob")
[ "$size" -gt 0 ] || { echo "external_rejects: $blob is empty" >&2; exit 1; }

# expect STATUS PATTERN ARGS...: runs the runner, checks its exit status and
# that stderr matches PATTERN (and that nothing was written on failure)
expect() {
    local want=$1 pattern=$2 rc=0
    shift 2
    rm -rf "$out/o"
    "$runner" "${args[@]}" "$@" --out "$out/o" >/dev/null 2>"$out/err" || rc=$?
    if [ "$rc" -ne "$want" ]; then
        echo "external_rejects: exit $rc, expected $want for: $*" >&2; cat "$out/err" >&2; exit 1
    fi
    if [ -n "$pattern" ] && ! grep -q -- "$pattern" "$out/err"; then
        echo "external_rejects: stderr does not match '$pattern' for: $*" >&2; cat "$out/err" >&2; exit 1
    fi
    if [ "$want" -ne 0 ] && [ -e "$out/o" ] && [ -n "$(ls -A "$out/o")" ]; then
        echo "external_rejects: outputs written although the run failed: $*" >&2; exit 1
    fi
}

expect 0 '' --weights "$blob"
# one byte in the middle, all its bits flipped
cp "$blob" "$out/flipped.bin"
at=$((size / 2))
byte=$(od -An -tu1 -j "$at" -N1 "$blob" | tr -d ' ')
printf "$(printf '\\%03o' $((byte ^ 255)))" | dd of="$out/flipped.bin" bs=1 seek="$at" conv=notrunc status=none
cmp -s "$blob" "$out/flipped.bin" && { echo "external_rejects: the byte was not flipped" >&2; exit 1; }
expect 1 'SHA-256 differs' --weights "$out/flipped.bin"
# one byte short, and one byte more
head -c $((size - 1)) "$blob" >"$out/short.bin"
expect 1 "$((size - 1)) bytes, the model's are $size" --weights "$out/short.bin"
{ cat "$blob"; printf 'x'; } >"$out/long.bin"
expect 1 "more than $size bytes, the model's are $size" --weights "$out/long.bin"
expect 2 'missing --weights FILE'
echo "external_rejects: flipped, short and long blobs refused"
