#!/bin/bash
# run.sh COREAI_GEN SOURCE_DIR RUNNER: runs the generator (success and error
# paths) and a generated model's runner under valgrind; any invalid access or
# leak fails. Build what runs here without AVX-512 (valgrind cannot decode it).
set -euo pipefail
gen=$1 src=$2 runner=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
vg=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect,possible)
"${vg[@]}" "$gen" generate "$src/examples/feedforward/feedforward.xml" -o "$tmp/a" --stats > /dev/null
"${vg[@]}" "$gen" generate "$src/tests/e2e/cases/norms/model.xml" -o "$tmp/b" --no-composite-kernels
"${vg[@]}" "$gen" print "$src/tests/e2e/cases/state/model.xml" > /dev/null
for case in "$src"/tests/golden/err-{malformed-xml,schema,shape-mismatch,recursion,const-count}/; do
    set +e
    (cd "$case" && "${vg[@]}" "$gen" check model.xml 2> /dev/null)
    status=$?
    set -e
    if [ "$status" != 1 ]; then
        echo "valgrind: $case exited $status (expected 1)"
        exit 1
    fi
done
"${vg[@]}" "$runner" --in "x=$src/examples/feedforward/reference_input.npy" --out "$tmp/out"
echo "valgrind: 1 passed, 0 failed"
