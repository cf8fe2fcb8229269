#!/bin/bash
# Wide models must generate in seconds (ctest's TIMEOUT is the limit): the
# passes that compared every constant, op, name or live value with every
# other were quadratic (before the fixes, on this machine idle: 50 000
# constants > 120 s, 50 000 ops reading op 0's result 80 s, an entrypoint
# with 20 000 inputs and outputs 83 s, 10 000 values live at once placed
# without fusion 17 s, 5 000 entrypoints 13 s). The models are made here,
# not stored.
# Usage: run_wide.sh COREAI_GEN WORK_DIR [SPEC...], a SPEC "KIND N [OPTION]"
# (make_wide.py's KIND and N, OPTION passed to generate); by default
# "consts 50000" "grow 50000" "names 10000".
set -euo pipefail
gen=$1 work=$2
shift 2
[ $# -gt 0 ] || set -- "consts 50000" "grow 50000" "names 10000"
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
for spec in "$@"; do
    read -r kind n option <<< "$spec"
    model=$work/${kind}_$n.xml
    python3 "$here/make_wide.py" "$kind" "$n" "$model"
    start=$(date +%s%N)
    "$gen" generate ${option:+"$option"} "$model" -o "$work/out_$kind"
    end=$(date +%s%N)
    echo "$spec: generated in $(( (end - start) / 1000000 )) ms"
    test -s "$work/out_$kind/${kind}_$n.c"
done
rm -rf "$work"
