#!/bin/bash
# run_case.sh RUNNER CASE_DIR OUT_DIR [ENTRYPOINT]: feeds the case's in_*.npy
# and state_*.npy to a coreai_add_model runner and compares with ref_*.npy.
# PYTHON: the interpreter with numpy (ctest sets COREAI_PYTHON_EXECUTABLE).
set -euo pipefail
runner=$1 case_dir=$2 out=$3 entry=${4:-}
args=()
[ -n "$entry" ] && args+=(--entrypoint "$entry")
for f in "$case_dir"/in_*.npy; do
    [ -e "$f" ] || continue
    n=$(basename "$f" .npy); args+=(--in "${n#in_}=$f")
done
for f in "$case_dir"/state_*.npy; do
    [ -e "$f" ] || continue
    n=$(basename "$f" .npy); args+=(--state "${n#state_}=$f")
done
rm -rf "$out"; mkdir -p "$(dirname "$out")"
"$runner" "${args[@]}" --out "$out"
exec "${PYTHON:-python3}" "$(dirname "$0")/compare.py" "$out" "$case_dir" "${COREAI_TOL:-1e-5}"
