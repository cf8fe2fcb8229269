#!/bin/bash
# Wide models must generate in seconds (ctest's TIMEOUT is the limit): the
# passes that compared every constant, op or name with every other were
# quadratic (before the fixes, on this machine idle: 50 000 constants
# > 120 s, 50 000 ops reading op 0's result 80 s, an entrypoint with 20 000
# inputs and outputs 83 s). The models are made here, not stored.
# Usage: run_wide.sh COREAI_GEN WORK_DIR
set -euo pipefail
gen=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
for spec in "consts 50000" "grow 50000" "names 10000"; do
    set -- $spec
    model=$work/$1_$2.xml
    python3 "$here/make_wide.py" "$1" "$2" "$model"
    start=$(date +%s%N)
    "$gen" generate "$model" -o "$work/out_$1"
    end=$(date +%s%N)
    echo "$1 $2: generated in $(( (end - start) / 1000000 )) ms"
    test -s "$work/out_$1/$1_$2.c"
done
rm -rf "$work"
