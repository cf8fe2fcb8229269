"""Symbolic sizes of ``torch.export`` programs -> Core AI symbols (format 2).

A program exported with ``dynamic_shapes`` carries its sizes as SymPy
expressions over export symbols (``s27``, ``s27 + 2``, ``s53 - s27``) with
ranges in ``ExportedProgram.range_constraints``. Each export symbol becomes
an ``ir.Symbol`` named after the ``torch.export.Dim`` the user gave (when
the export recorded it), else after the first input dimension it sizes
(``x_dim1``); integer affine expressions of them become ``ir.Dim``. Anything
else (a product of two sizes, a floor division, a data-dependent size) is
refused naming the expression, as is a size without an upper bound: the
generated code sizes its workspace for the largest value.

While a program is lowered, ``current()`` is its table, so ``node_meta`` and
the lowerings see symbolic extents wherever PyTorch recorded a ``SymInt``.
"""

from __future__ import annotations

import contextlib
import re
import threading
from typing import Any, Dict, List, Optional, Tuple

import torch

from coreai._compiler import ir
from coreai._compiler.dims import Dim, Symbol

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_SOURCE = re.compile(r"^L\['([^']+)'\]\.size\(\)\[(\d+)\]$")


class SymbolicShapeError(NotImplementedError):
    """A size the model format cannot express (names the input and dimension)."""


def _shape_env(placeholders) -> Any:
    for p in placeholders:
        val = p.meta.get("val")
        for d in getattr(val, "shape", ()):
            if isinstance(d, torch.SymInt):
                return d.node.shape_env
    return None


def _is_finite_int(x) -> bool:
    return bool(getattr(x, "is_Integer", False)) or isinstance(x, int)


class ExportSymbols:
    """The symbols of one exported program: sympy symbol -> ``ir.Symbol``."""

    def __init__(self, ep: Any, inputs: List[Tuple[str, Any]], taken: Dict[str, Symbol]):
        """``inputs``: (name the entrypoint gives it, placeholder node) of
        the states and user inputs, in order; ``taken``: symbols already
        named in the module (by name), shared when name and range agree."""
        self.map: Dict[Any, Symbol] = {}
        ranges = dict(getattr(ep, "range_constraints", {}) or {})
        env = _shape_env([p for _, p in inputs])
        debug = dict(getattr(env, "source_name_to_debug_name", {}) or {}) if env is not None else {}
        sources = dict(getattr(env, "var_to_sources", {}) or {}) if env is not None else {}
        # where each symbol first sizes an input (for names and messages)
        first_use: Dict[Any, Tuple[str, int]] = {}
        for name, p in inputs:
            val = p.meta.get("val")
            for axis, d in enumerate(getattr(val, "shape", ())):
                if isinstance(d, torch.SymInt):
                    expr = d.node.expr
                    for s in sorted(expr.free_symbols, key=str):
                        first_use.setdefault(s, (name, axis))
        for sym in sorted(first_use, key=lambda s: (first_use[s], str(s))):
            vr = ranges.get(sym)
            where = first_use[sym]
            user = self._user_name(sym, sources, debug)
            label = f"input '{where[0]}' dimension {where[1]}" + (f" (torch.export.Dim '{user}')" if user else "")
            if vr is None:
                raise SymbolicShapeError(f"{label} has the size {sym}, which the export gave no range")
            if not _is_finite_int(vr.upper):
                raise SymbolicShapeError(
                    f"{label} has no upper bound: give it one with torch.export.Dim(..., max=N) (the generated code "
                    "sizes its workspace for the largest value)")
            lo = int(vr.lower) if _is_finite_int(vr.lower) else 0
            hi = int(vr.upper)
            base = user if user and _IDENT.match(user) else f"{where[0]}_dim{where[1]}"
            if not _IDENT.match(base):
                base = re.sub(r"[^A-Za-z0-9_]", "_", base)
                if not _IDENT.match(base):
                    base = "d_" + base
            name, k = base, 1
            while name in taken and taken[name] != Symbol(name, max(lo, 0), hi):
                k += 1
                name = f"{base}_{k}"
            s = Symbol(name, max(lo, 0), hi)
            taken[name] = s
            self.map[sym] = s

    @staticmethod
    def _user_name(sym, sources, debug) -> Optional[str]:
        for src in sources.get(sym, []):
            name = debug.get(getattr(src, "name", None))
            if name:
                return name
        return None

    def to_dim(self, value: Any, what: str = "a size"):
        """An int, a ``torch.SymInt`` or a SymPy expression -> int or ``ir.Dim``."""
        if isinstance(value, bool):
            raise SymbolicShapeError(f"{what} is a bool, not a size")
        if isinstance(value, int):
            return value
        if isinstance(value, torch.SymInt):
            expr = value.node.expr
        else:
            expr = value
        return self._expr(expr, what)

    def _expr(self, expr, what):
        if getattr(expr, "is_Integer", False):
            return int(expr)
        if getattr(expr, "is_Symbol", False):
            if expr not in self.map:
                raise SymbolicShapeError(
                    f"{what} is {expr}, a size no input of the program gives (a data-dependent size, e.g. from "
                    ".item() or nonzero(), cannot be converted)")
            return self.map[expr].dim()
        if getattr(expr, "is_Add", False):
            total = 0
            for a in expr.args:
                total = total + self._expr(a, what)
            return total
        if getattr(expr, "is_Mul", False):
            k, rest = 1, None
            for a in expr.args:
                if getattr(a, "is_Integer", False):
                    k *= int(a)
                elif rest is None:
                    rest = self._expr(a, what)
                else:
                    rest = None
                    break
            if rest is not None:
                return rest * k
        raise SymbolicShapeError(
            f"{what} is {self._spell(expr)}, which is not an integer affine combination of the exported sizes "
            "(such as seq, seq + 2, 2 * seq or ctx - seq): model format 2 cannot express it")

    def _spell(self, expr) -> str:
        """expr with the export's symbols (s27) named as the model names them."""
        try:
            import sympy

            return str(expr.xreplace({k: sympy.Symbol(v.name) for k, v in self.map.items()}))
        except Exception:  # noqa: BLE001 - only for the message
            return str(expr)

    def shape(self, shape, what: str) -> tuple:
        return tuple(self.to_dim(d, f"{what} dimension {i}") for i, d in enumerate(shape))


_current = threading.local()


def current() -> Optional[ExportSymbols]:
    stack = getattr(_current, "stack", None)
    return stack[-1] if stack else None


@contextlib.contextmanager
def active(symbols: Optional[ExportSymbols]):
    """Makes ``symbols`` the table ``node_meta`` converts sizes with."""
    stack = getattr(_current, "stack", None)
    if stack is None:
        stack = _current.stack = []
    stack.append(symbols)
    try:
        yield symbols
    finally:
        stack.pop()


def extent(value: Any, what: str = "a size"):
    """A size recorded by PyTorch (int or SymInt) as an int or ``ir.Dim``."""
    if isinstance(value, (int, Dim)):
        return value
    table = current()
    if table is None:
        if isinstance(value, torch.SymInt):
            raise SymbolicShapeError(f"{what} is the symbolic size {value} outside a conversion")
        return int(value)
    return table.to_dim(value, what)


def is_symbolic(value: Any) -> bool:
    return isinstance(value, (torch.SymInt, Dim, ir.Symbol))
