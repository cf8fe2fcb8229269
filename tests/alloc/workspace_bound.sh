#!/bin/bash
# workspace_bound.sh COREAI_GEN MODEL...: the planned workspace of every model
# (with and without composite kernels) must be within 5 % of the liveness
# lower bound (the most bytes live at once) that coreai-gen reports.
set -euo pipefail
gen=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
for model in "$@"; do
    for opts in "" "--no-composite-kernels"; do
        # shellcheck disable=SC2086
        stats=$("$gen" generate "$model" -o "$tmp/out" --prefix coreai_wsbound --stats $opts)
        ws=$(awk '/^workspace_bytes/ {print $2}' <<< "$stats")
        lb=$(awk '/^liveness_lower_bound_bytes/ {print $2}' <<< "$stats")
        # the bound is exact bytes; the plan rounds each buffer to 64 bytes
        if awk -v w="$ws" -v l="$lb" 'BEGIN { exit !(w <= 1.05 * l + 64) }'; then
            pass=$((pass + 1)); verdict=ok
        else
            fail=$((fail + 1)); verdict=FAIL
        fi
        printf '%-4s %s %s: workspace %s, lower bound %s\n' "$verdict" "$(basename "$(dirname "$model")")/$(basename "$model")" "$opts" "$ws" "$lb"
    done
done
echo "workspace_bound: $pass passed, $fail failed"
[ "$fail" = 0 ]
