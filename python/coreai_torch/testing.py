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


def run_program(program, calls: Sequence[Mapping[str, Any]], entrypoint: str = "main", *,
                composite_kernels: bool = True, workdir: Optional[str] = None,
                name: str = "model", int8_activations: bool = False,
                winograd_weights: bool = True, conv_panels: bool = True) -> List[Dict[str, np.ndarray]]:
    """See the module docstring.  Any error (the generator's included)
    propagates: a test either expects success or asserts the error."""
    return _run_program(program, calls, entrypoint, composite_kernels, workdir, name, int8_activations,
                        winograd_weights, conv_panels)


def _run_program(program, calls, entrypoint, composite_kernels, workdir, name, int8_activations=False,
                 winograd_weights=True, conv_panels=True):
    from coreai.runtime import NDArray

    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        asset = program.save_asset(Path(tmp) / f"{name}.aimodel")
        results = []
        with asset.executable(composite_kernels=composite_kernels, int8_activations=int8_activations,
                              winograd_weights=winograd_weights, conv_panels=conv_panels) as exe:
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
