#!/bin/bash
# Deep and long models must generate, in seconds (ctest's TIMEOUT is the
# limit): a call chain 45 000 graphs deep (once a recursive planner
# overflowed the C stack), a chain of 100 000 relus (once quadratic in the
# fuser and the activation folds) and one of 100 000 transposes (100 000
# workspace blocks to place). The models are made here, not stored.
# Usage: run.sh COREAI_GEN WORK_DIR
set -euo pipefail
gen=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
for spec in "invoke 45000" "relu 100000" "transpose 100000"; do
    set -- $spec
    model=$work/$1_$2.xml
    python3 "$here/make_chain.py" "$1" "$2" "$model"
    start=$(date +%s%N)
    "$gen" generate "$model" -o "$work/out_$1"
    if [ "$1" = relu ]; then
        "$gen" generate --no-fuse "$model" -o "$work/out_$1_nofuse"
    fi
    end=$(date +%s%N)
    echo "$1 chain of $2: generated in $(( (end - start) / 1000000 )) ms"
    test -s "$work/out_$1/$1_$2.c"
done
rm -rf "$work"
