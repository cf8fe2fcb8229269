#!/bin/bash
# same_outputs.sh RUNNER_A RUNNER_B CASE_DIR OUT_DIR: runs two runners of one
# model (with and without elementwise fusion) on the case's inputs and
# compares their outputs with each other, much tighter than the oracle's
# 1e-5: the fused loops use the kernels' scalar formulas, so they agree bit
# for bit except where the runtime evaluates a transcendental with its own
# vector approximation (a few ulp per op; coreai/elementwise_scalar.h).
# PYTHON: the interpreter with numpy (ctest sets COREAI_PYTHON_EXECUTABLE).
set -euo pipefail
a=$1 b=$2 case_dir=$3 out=$4
args=()
for f in "$case_dir"/in_*.npy; do
    [ -e "$f" ] || continue
    n=$(basename "$f" .npy); args+=(--in "${n#in_}=$f")
done
rm -rf "$out"; mkdir -p "$out"
"$a" "${args[@]}" --out "$out/a" >/dev/null
"$b" "${args[@]}" --out "$out/b" >/dev/null
exec "${PYTHON:-python3}" - "$out/a" "$out/b" <<'PY'
import glob, os, sys
import numpy as np
a_dir, b_dir = sys.argv[1], sys.argv[2]
files = sorted(glob.glob(os.path.join(a_dir, "*.npy")))
ok = bool(files)
for f in files:
    x, y = np.load(f), np.load(os.path.join(b_dir, os.path.basename(f)))
    same = x.shape == y.shape and x.dtype == y.dtype
    if same and x.size:
        bx = x.reshape(x.size, 1).view(np.uint8)
        by = y.reshape(y.size, 1).view(np.uint8)
        same_bits = int(np.count_nonzero(np.all(bx == by, axis=1)))
        xd, yd = x.astype(np.float64), y.astype(np.float64)
        close = np.allclose(xd, yd, rtol=2e-6, atol=1e-7, equal_nan=True)
        print(f"{os.path.basename(f)}: {same_bits} of {x.size} elements bit-identical, "
              f"max abs difference {float(np.max(np.abs(xd - yd))):.3g} ({'ok' if close else 'FAIL'})")
        ok = ok and close
    elif not same:
        print(f"{os.path.basename(f)}: shape or dtype differs")
        ok = False
sys.exit(0 if ok else 1)
PY
