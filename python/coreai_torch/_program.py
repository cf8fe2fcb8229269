"""What the converter reads from a ``torch.export.ExportedProgram``, and the
few helpers shared by externalization and custom kernels.

Graph-signature kinds are compared by name (``InputKind.PARAMETER.name``)
so the converter does not depend on the enum's identity across PyTorch
releases.
"""

from __future__ import annotations

import contextlib
import os
import re
from typing import Dict

import torch
import torch.fx as fx

USER_INPUT = "USER_INPUT"
PARAMETER = "PARAMETER"
BUFFER = "BUFFER"
CONSTANT = "CONSTANT"
USER_OUTPUT = "USER_OUTPUT"
BUFFER_MUTATION = "BUFFER_MUTATION"
USER_INPUT_MUTATION = "USER_INPUT_MUTATION"

_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep

_LIBRARIES: Dict[str, "torch.library.Library"] = {}


def library_for(namespace: str) -> "torch.library.Library":
    """The process-wide ``FRAGMENT`` library of ``namespace``: op
    registrations cannot be undone, so one library per namespace lives as
    long as the process and every op defined through it stays valid."""
    lib = _LIBRARIES.get(namespace)
    if lib is None:
        lib = torch.library.Library(namespace, "FRAGMENT")
        _LIBRARIES[namespace] = lib
    return lib


def module_path_of(node: fx.Node) -> str:
    """The innermost module path recorded for ``node`` ('' for the root)."""
    stack = node.meta.get("nn_module_stack") or {}
    if not stack:
        return ""
    last = list(stack.values())[-1]
    if isinstance(last, tuple):
        return str(last[0])
    return str(last)


def source_line_of(node: fx.Node) -> str:
    """``file:line`` of the innermost user frame that created ``node`` (from
    ``torch.export``'s ``stack_trace``), '' when it was not recorded."""
    trace = node.meta.get("stack_trace") or ""
    frames = []
    for line in trace.splitlines():
        m = _FRAME.match(line.strip())
        if m:
            frames.append((m.group(1), m.group(2)))
    if not frames:
        return ""
    # the innermost frame outside PyTorch itself: the model's own line
    user = [f for f in frames if _TORCH_DIR not in f[0]]
    path, line = (user or frames)[-1]
    return f"{path}:{line}"


@contextlib.contextmanager
def swap_tensors(root: torch.nn.Module, replacements: Dict[int, torch.Tensor]):
    """Temporarily replace parameters/buffers of ``root`` (and its submodules)
    by identity: every ``_parameters``/``_buffers`` entry whose current
    tensor has an ``id`` in ``replacements`` is swapped (tied entries
    included) and put back on exit.  Nestable."""
    saved = []
    for mod in root.modules():
        for store in (mod._parameters, mod._buffers):
            for key, value in list(store.items()):
                if value is not None and id(value) in replacements:
                    saved.append((store, key, value))
                    store[key] = replacements[id(value)]
    try:
        yield
    finally:
        for store, key, value in reversed(saved):
            store[key] = value
