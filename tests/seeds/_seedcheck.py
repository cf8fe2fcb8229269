"""Checks shared by the seed programs of tests/seeds/ (not from the seeds).

Each seed program runs its converted program through the generated C
(`coreai_torch.testing.run_program`: save_asset -> coreai-gen -> cc -> run)
and compares it with eager PyTorch within a tolerance relative to the
output's scale: max|out - ref| <= 1e-5 * max(1, max|ref|).
"""
import numpy as np
import torch

from coreai_torch.testing import max_abs_diff, run_program, to_numpy

__all__ = ["assert_close", "single", "run_program", "done", "tolerance"]


def tolerance(ref) -> float:
    ref = to_numpy(ref).astype(np.float64)
    return 1e-5 * max(1.0, float(np.abs(ref).max()) if ref.size else 0.0)


def assert_close(out, ref, what: str) -> float:
    """max|out - ref| <= 1e-5 * max(1, max|ref|); prints and returns the error."""
    if isinstance(ref, torch.Tensor):
        ref = ref.detach()
    err = max_abs_diff(ref, out)
    tol = tolerance(ref)
    print(f"{what}: max abs error {err:.3e} (tolerance {tol:.3e})")
    assert err <= tol, f"{what}: max abs error {err} > {tol}"
    return err


def single(result: dict):
    """The only output of a call result {name: array}."""
    assert len(result) == 1, f"expected one output, got {list(result)}"
    return next(iter(result.values()))


def done(name: str) -> None:
    print(f"SEED CHECK OK: {name}")
