"""Running converted programs through the C generator, synchronously.

``run_program(program, calls, entrypoint="main")`` saves ``program`` to a
temporary directory (``AIProgram.save_asset``), generates and compiles it
(``asset.executable()``), loads ``entrypoint`` and calls it once per entry
of ``calls`` (a list of ``{input name: tensor}``; states persist between
calls, starting from their initial values).  Returns one
``{name: numpy array}`` per call (every output and updated state).

``max_abs_diff(a, b)`` compares a torch tensor / array with an array.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence

import numpy as np
import torch

__all__ = ["run_program", "max_abs_diff", "to_numpy"]


def to_numpy(x: Any) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    if hasattr(x, "numpy"):
        return np.asarray(x.numpy())
    return np.asarray(x)


_UNKNOWN_KIND = re.compile(r"unknown op kind '([^']+)'")
_NOT_F32 = re.compile(r"error: (coreai\.[a-z_0-9]+): operand \d+ is (\w+); only f32 arithmetic")


def run_program(program, calls: Sequence[Mapping[str, Any]], entrypoint: str = "main", *,
                composite_kernels: bool = True, workdir: Optional[str] = None,
                name: str = "model", xfail_unknown_ops: bool = True) -> List[Dict[str, np.ndarray]]:
    """See the module docstring.  Under pytest, when ``coreai-gen`` rejects
    an op kind it does not know yet (``unknown op kind '...'``) the test is
    marked xfail with that op kind as the reason (``xfail_unknown_ops``)."""
    try:
        return _run_program(program, calls, entrypoint, composite_kernels, workdir, name)
    except Exception as e:  # noqa: BLE001
        reason = _new_op_kind_rejection(str(e), program)
        if reason and xfail_unknown_ops and "pytest" in sys.modules:
            import pytest

            pytest.xfail(f"coreai-gen ({os.environ.get('COREAI_GEN', 'default')}) {reason}")
        raise


def _new_op_kind_rejection(message: str, program) -> Optional[str]:
    """Why coreai-gen refused the model, when it is only because that build
    of coreai-gen predates an op kind (or an op's dtype) of model-format.md."""
    m = _UNKNOWN_KIND.search(message)
    if m:
        return f"rejects op kind '{m.group(1)}': its C kernels are not in this build yet"
    m = _NOT_F32.search(message)
    if m:
        return f"rejects {m.group(2)} operands of {m.group(1)}: only f32 arithmetic in this build"
    if "failed to validate attributes" in message and "coreai.elementwise_kernel" in str(program):
        return ("rejects the attributes of coreai.elementwise_kernel (a new op kind): its embedded schema "
                "predates it")
    return None


def _run_program(program, calls, entrypoint, composite_kernels, workdir, name):
    from coreai.runtime import NDArray

    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        asset = program.save_asset(Path(tmp) / f"{name}.aimodel")
        results = []
        with asset.executable(composite_kernels=composite_kernels) as exe:
            fn = exe.load_function(entrypoint)
            import asyncio

            for inputs in calls:
                feed = {k: NDArray(v.detach().contiguous() if isinstance(v, torch.Tensor) else v)
                        for k, v in inputs.items()}
                out = fn(feed)
                if asyncio.iscoroutine(out):
                    out = asyncio.run(out)
                results.append({k: np.asarray(v.numpy()) for k, v in out.items()})
        return results


def max_abs_diff(a: Any, b: Any) -> float:
    a = to_numpy(a).astype(np.float64)
    b = to_numpy(b).astype(np.float64)
    if a.shape != b.shape:
        raise AssertionError(f"shape mismatch: {a.shape} vs {b.shape}")
    if a.size == 0:
        return 0.0
    return float(np.max(np.abs(a - b)))
