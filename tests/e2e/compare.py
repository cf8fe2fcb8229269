#!/usr/bin/env python3
"""compare.py OUT_DIR CASE_DIR [RTOL]: every CASE_DIR/ref_<name>.npy must match
OUT_DIR/<name>.npy in dtype and shape, and element by element:

  - integer and bool tensors: equal;
  - float tensors: non-finite values (inf, -inf, NaN) at the same places
    and the same (an inf of the other sign, or a number, is a mismatch);
    at every other place |got - ref| <= RTOL * scale, where scale is the
    largest |ref| over the tensor's finite elements (RTOL default 1e-5).
    The bound follows the tensor's magnitude: outputs range from 0.03 to
    1e19 in scale, so one absolute bound would be meaningless for some;
    f32 kernels land within a few 1e-7 of scale.

Prints the max error and the bound per tensor."""
import glob
import os
import sys

import numpy as np


def check(name, ref, got, rtol):
    """Returns (ok, message) for one tensor (same shape and dtype)."""
    if ref.dtype.kind not in "fc":
        bad = int(np.count_nonzero(ref != got))
        return bad == 0, f"{name}: {bad} of {ref.size} elements differ (exact)"
    r, g = ref.astype(np.float64), got.astype(np.float64)
    fin_r, fin_g = np.isfinite(r), np.isfinite(g)
    # NaN at the same places, and the same signed inf at the same places
    same_nonfinite = np.array_equal(np.isnan(r), np.isnan(g)) and \
        np.array_equal(np.where(np.isinf(r), r, 0), np.where(np.isinf(g), g, 0))
    n_nonfinite = int(r.size - np.count_nonzero(fin_r))
    scale = float(np.max(np.abs(r[fin_r]))) if fin_r.any() else 0.0
    both = fin_r & fin_g
    err = float(np.max(np.abs(r[both] - g[both]))) if both.any() else 0.0
    bound = rtol * scale
    ok = same_nonfinite and err <= bound
    what = f"max abs error {err:.3g}, bound {bound:.3g} = {rtol:g} * scale {scale:.3g}"
    if n_nonfinite or not same_nonfinite:
        what += f"; {n_nonfinite} non-finite in ref, {'same' if same_nonfinite else 'NOT the same'} in output"
    return ok, f"{name}: {what} ({'ok' if ok else 'FAIL'})"


def main(argv):
    out_dir, case_dir = argv[1], argv[2]
    rtol = float(argv[3]) if len(argv) > 3 else 1e-5
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
        good, message = check(name, ref, got, rtol)
        print(message)
        ok = ok and good
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
