"""Core AI: build, optimize, save and run programs (docs/python-api.md).

`coreai` has no torch dependency; torch tensors are accepted wherever data
are (constants, NDArray) and recognised without importing torch.
"""
from .program import AIAsset, AIProgram, load  # noqa: F401

__all__ = ["AIProgram", "AIAsset", "load"]
