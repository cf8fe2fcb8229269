#!/bin/bash
# same_bits.sh RUNNER_A RUNNER_B CASE_DIR OUT_DIR [ENTRYPOINT]: runs two
# runners of one model (its weights linked as an .incbin blob and in another
# form: C initializers, or the external blob given to RUNNER_B as
# --weights $B_WEIGHTS) on the case's in_*.npy and state_*.npy, and requires
# every output file to be byte-for-byte identical: the same code reads the
# same constant bytes, so nothing may differ.
set -euo pipefail
a=$1 b=$2 case_dir=$3 out=$4 entry=${5:-}
# shellcheck source=tests/e2e/case_args.sh
source "$(dirname "$0")/case_args.sh"
case_args "$case_dir" "$entry"
rm -rf "$out"; mkdir -p "$out"
"$a" "${args[@]}" --out "$out/a" >/dev/null
b_args=()
[ -n "${B_WEIGHTS:-}" ] && b_args=(--weights "$B_WEIGHTS")
"$b" "${args[@]}" "${b_args[@]}" --out "$out/b" >/dev/null
n=0
for f in "$out"/a/*.npy; do
    [ -e "$f" ] || { echo "same_bits: $a wrote no outputs" >&2; exit 1; }
    g=$out/b/$(basename "$f")
    if ! cmp -s "$f" "$g"; then
        echo "same_bits: $(basename "$f") differs between $a and $b" >&2
        exit 1
    fi
    n=$((n + 1))
done
[ "$(find "$out/b" -name '*.npy' | wc -l)" -eq "$n" ] || { echo "same_bits: different output files" >&2; exit 1; }
echo "same_bits: $n outputs bit-identical"
