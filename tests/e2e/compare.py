#!/usr/bin/env python3
"""compare.py OUT_DIR CASE_DIR [TOL]: every CASE_DIR/ref_<name>.npy must match
OUT_DIR/<name>.npy in dtype and shape, within TOL absolute error (default 1e-5).
Prints the max abs error per tensor."""
import glob
import os
import sys

import numpy as np


def main(argv):
    out_dir, case_dir = argv[1], argv[2]
    tol = float(argv[3]) if len(argv) > 3 else 1e-5
    refs = sorted(glob.glob(os.path.join(case_dir, "ref_*.npy")))
    if not refs:
        print(f"no reference outputs in {case_dir}")
        return 1
    ok = True
    for ref_path in refs:
        name = os.path.basename(ref_path)[4:-4]
        got_path = os.path.join(out_dir, name + ".npy")
        if not os.path.exists(got_path):
            print(f"{name}: missing {got_path}")
            ok = False
            continue
        ref, got = np.load(ref_path), np.load(got_path)
        if ref.shape != got.shape or ref.dtype != got.dtype:
            print(f"{name}: expected {ref.dtype}{list(ref.shape)}, got {got.dtype}{list(got.shape)}")
            ok = False
            continue
        err = float(np.max(np.abs(ref.astype(np.float64) - got.astype(np.float64)))) if ref.size else 0.0
        good = err <= tol and np.all(np.isfinite(got) == np.isfinite(ref))
        print(f"{name}: max abs error {err:.3g} ({'ok' if good else 'FAIL'}, tol {tol:g})")
        ok = ok and good
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
