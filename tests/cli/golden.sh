#!/bin/bash
# Runs every golden case under tests/golden (re2c style): each folder holds a
# model, the `cmd` it is run with (coreai-gen arguments, run inside the
# folder), and the expected exit status, stdout and stderr beside it.
# Usage: golden.sh COREAI_GEN GOLDEN_DIR [--update]
set -u
gen=$1 dir=$2 update=${3:-}
pass=0 fail=0
for case in "$dir"/*/; do
    case=${case%/}
    name=$(basename "$case")
    read -r -a args < "$case/cmd"
    out=$(mktemp) err=$(mktemp)
    (cd "$case" && "$gen" "${args[@]}" > "$out" 2> "$err")
    status=$?
    if [ "$update" = "--update" ]; then
        echo "$status" > "$case/expected.status"
        cp "$out" "$case/expected.stdout"
        cp "$err" "$case/expected.stderr"
    fi
    if [ "$status" = "$(cat "$case/expected.status")" ] &&
       cmp -s "$out" "$case/expected.stdout" && cmp -s "$err" "$case/expected.stderr"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $name (status $status)"
        diff -u "$case/expected.stderr" "$err" | head -20
        diff -u "$case/expected.stdout" "$out" | head -20
    fi
    rm -f "$out" "$err"
done
echo "golden: $pass passed, $fail failed"
[ "$fail" = 0 ]
