"""AIProgram (what TorchConverter.to_coreai() returns), AIAsset (a saved
model) and the executable context behind `async with asset.executable()`."""
from __future__ import annotations

import asyncio
import os
from pathlib import Path

from ._compiler import ir
from ._compiler.optimize import optimize_module
from ._compiler.printer import print_module
from ._compiler.serialize import model_paths, save_module, serialize

__all__ = ["AIProgram", "AIAsset", "load"]


class AIProgram:
    """A Core AI program: an ir.Module plus the operations on it."""

    def __init__(self, module: ir.Module | None = None) -> None:
        if module is None:
            module = ir.Module()
        if not isinstance(module, ir.Module):
            raise TypeError(f"AIProgram needs an ir.Module, got {type(module).__name__}")
        self.module = module
        self.last_optimize_stats: dict = {}

    @property
    def entrypoints(self) -> list:
        return list(self.module.entrypoints)

    def verify(self) -> "AIProgram":
        self.module.verify()
        return self

    def optimize(self) -> "AIProgram":
        """Constant folding, identity-cast and dead-code removal, and removal
        of graphs no entrypoint reaches. Returns self."""
        self.last_optimize_stats = optimize_module(self.module)
        return self

    def serialize(self, weights_href: str = "model.weights") -> tuple:
        """(model XML text, weights bytes or None), without writing files."""
        return serialize(self.module, weights_href)

    def save(self, path) -> Path:
        """Writes path.xml (or path itself when it ends in .xml) and, when any
        constant is large, path.weights next to it. Returns the model path."""
        model, _ = save_module(self.module, path)
        return model

    def save_asset(self, path) -> "AIAsset":
        # the model file records the states' initial values (format 3): the
        # generated code's init_state gives them to the runtime
        model, weights = save_module(self.module, path)
        return AIAsset(model, weights)

    def interpret(self, entrypoint: str = "main", inputs: dict | None = None, states: dict | None = None) -> dict:
        """Run an entrypoint with the NumPy reference semantics (no C); values
        are NumPy arrays in Core AI storage (bf16 as uint16 bit patterns)."""
        from ._compiler.evaluate import interpret
        from .runtime import NDArray

        def raw(d):
            return {k: (v.numpy_storage() if isinstance(v, NDArray) else v) for k, v in (d or {}).items()}

        return interpret(self.module, entrypoint, raw(inputs), raw(states))

    def __str__(self) -> str:
        return print_module(self.module)

    def __repr__(self) -> str:
        return f"<AIProgram: {len(self.module.graphs)} graphs, entrypoints {[e.name for e in self.module.entrypoints]}>"


def load(path) -> AIProgram:
    """Reads a model file (format v1, with its weights) into an AIProgram."""
    from ._compiler.loader import load_module

    return AIProgram(load_module(path))


class AIAsset:
    """A model on disk: the model file and its weights file (if any)."""

    def __init__(self, model_path, weights_path=None, initial_states: dict | None = None) -> None:
        self.model_path = Path(os.fspath(model_path))
        if weights_path is None:
            w = model_paths(self.model_path)[1]
            weights_path = w if w.exists() else None
        self.weights_path = Path(weights_path) if weights_path is not None else None
        self.initial_states = {k: dict(v) for k, v in (initial_states or {}).items()}

    def executable(self, *, composite_kernels: bool = True, prefix: str | None = None,
                   weights_format: str | None = None, weights=None,
                   int8_activations: bool = False, winograd_weights: bool = True,
                   conv_panels: bool = True) -> "_ExecutableContext":
        """`async with asset.executable() as m:` generates C with coreai-gen,
        compiles and loads it; `m.load_function(name)` gives a callable.
        weights_format: how the constants are linked, "incbin" (a binary
        blob, GCC/Clang on ELF) or "c" (C initializers), or "external" (not
        linked: the blob NAME_weights.bin is read, checked against its size
        and SHA-256 and passed to every call); None picks incbin where the C
        compiler supports it. weights: with "external", the blob to use
        instead of the one coreai-gen wrote (it must be the same bytes).
        int8_activations: generate with --int8-activations (linears on
        compressed weights round their inputs to int8,
        docs/compression.md). winograd_weights False: generate with
        --no-winograd-weights (3x3 Winograd layers transform their weight
        on every call: a smaller image, a larger workspace). conv_panels
        False: generate with --no-conv-panels (convolutions on small maps
        read their weight as stored rather than packed for the GEMM)."""
        if weights is not None and weights_format != "external":
            raise ValueError("weights= needs weights_format='external'")
        return _ExecutableContext(self, composite_kernels, prefix, weights_format, weights, int8_activations,
                                  winograd_weights, conv_panels)

    def __repr__(self) -> str:
        return f"<AIAsset {self.model_path}>"


class _ExecutableContext:
    def __init__(self, asset: AIAsset, composite_kernels: bool, prefix: str | None,
                 weights_format: str | None = None, weights=None, int8_activations: bool = False,
                 winograd_weights: bool = True, conv_panels: bool = True) -> None:
        self.asset = asset
        self.conv_panels = conv_panels
        self.int8_activations = int8_activations
        self.winograd_weights = winograd_weights
        self.weights = weights
        self.composite_kernels = composite_kernels
        self.prefix = prefix
        self.weights_format = weights_format
        self.executable = None

    def _open(self):
        from . import _toolchain
        from .runtime import AIExecutable

        prefix = self.prefix or _toolchain.c_prefix(self.asset.model_path)
        lib = _toolchain.build_library(self.asset.model_path, prefix, self.composite_kernels, self.weights_format,
                                       self.int8_activations, self.winograd_weights, self.conv_panels)
        weights = None
        if self.weights_format == "external":
            weights = self.weights if self.weights is not None else lib.parent / f"{prefix}_weights.bin"
        self.executable = AIExecutable(lib, prefix, self.asset.initial_states, weights)
        return self.executable

    async def __aenter__(self):
        return await asyncio.to_thread(self._open)

    async def __aexit__(self, *exc) -> None:
        if self.executable is not None:
            self.executable.close()

    def __enter__(self):
        return self._open()

    def __exit__(self, *exc) -> None:
        if self.executable is not None:
            self.executable.close()
