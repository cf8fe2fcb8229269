#!/bin/bash
# run_case.sh RUNNER CASE_DIR OUT_DIR [ENTRYPOINT]: feeds the case's in_*.npy
# and state_*.npy to a coreai_add_model runner and compares with ref_*.npy.
# PYTHON: the interpreter with numpy (ctest sets COREAI_PYTHON_EXECUTABLE).
set -euo pipefail
runner=$1 case_dir=$2 out=$3 entry=${4:-}
# shellcheck source=tests/e2e/case_args.sh
source "$(dirname "$0")/case_args.sh"
case_args "$case_dir" "$entry"
rm -rf "$out"; mkdir -p "$(dirname "$out")"
"$runner" "${args[@]}" --out "$out"
exec "${PYTHON:-python3}" "$(dirname "$0")/compare.py" "$out" "$case_dir" "${COREAI_TOL:-1e-5}"
