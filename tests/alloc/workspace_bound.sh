#!/bin/bash
# workspace_bound.sh COREAI_GEN MODEL...: the planned workspace of every model
# (with and without composite kernels) must be within 5 % of a liveness lower
# bound (the most bytes live at once).
#
# The bound is computed here, from `coreai-gen print` (the IR: every value's
# type, producer and readers), by liveness_bound.py, not taken from the
# planner. It models one kernel call per op, so it is compared with the plan
# of --no-fuse (elementwise loops change which values exist and how long
# they live). It knows no kernel's scratch (a runtime fact), so:
#   - a model whose generated code passes no scratch to any kernel must
#     have workspace <= 1.05 * bound + 64, and the planner's own reported
#     bound must not exceed ours (else it would excuse a bad plan);
#   - a model with kernel scratch is held to the planner's bound, as is
#     every default (fused) plan: workspace <= 1.05 * planner's bound + 64.
set -euo pipefail
gen=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
within() { awk -v w="$1" -v l="$2" 'BEGIN { exit !(w <= 1.05 * l + 64) }'; }
stat() { awk -v k="$1" '$1 == k {print $2}'; }
for model in "$@"; do
    name="$(basename "$(dirname "$model")")/$(basename "$model")"
    ir=$("$gen" print "$model")
    for opts in "" "--no-composite-kernels"; do
        kernels=--kernels
        [ -n "$opts" ] && kernels=
        # shellcheck disable=SC2086
        bound=$("$python" "$here/liveness_bound.py" $kernels <<< "$ir" | stat liveness_bound_bytes)
        rm -rf "$tmp/out"
        # shellcheck disable=SC2086
        stats=$("$gen" generate "$model" -o "$tmp/out" --prefix coreai_wsbound --stats --no-fuse $opts)
        ws=$(stat workspace_bytes <<< "$stats")
        lb=$(stat liveness_lower_bound_bytes <<< "$stats")
        # kernel scratch: a bare `ws` / `ws + N` argument of a runtime call
        # (tensors are passed as `((float *)(ws + N))`)
        if grep -qE 'coreai_[a-z0-9_]+\(.*[(,] ws( \+ [0-9]+)?[,)]' "$tmp/out/coreai_wsbound.c"; then
            against="planner's bound $lb (kernel scratch)"
            ok=$(within "$ws" "$lb" && echo y || echo n)
        else
            against="bound $bound (planner's $lb)"
            ok=$(within "$ws" "$bound" && [ "$lb" -le "$bound" ] && echo y || echo n)
        fi
        # shellcheck disable=SC2086
        stats=$("$gen" generate "$model" -o "$tmp/out" --prefix coreai_wsbound --stats $opts)
        fws=$(stat workspace_bytes <<< "$stats")
        flb=$(stat liveness_lower_bound_bytes <<< "$stats")
        within "$fws" "$flb" || ok=n
        if [ "$ok" = y ]; then
            pass=$((pass + 1)); verdict=ok
        else
            fail=$((fail + 1)); verdict=FAIL
        fi
        printf '%-4s %s %s: --no-fuse workspace %s, %s; fused workspace %s, planner'"'"'s bound %s\n' \
            "$verdict" "$name" "$opts" "$ws" "$against" "$fws" "$flb"
    done
done
echo "workspace_bound: $pass passed, $fail failed"
[ "$fail" = 0 ]
