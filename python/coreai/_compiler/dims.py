"""Symbolic extents (model format 2, docs/model-format.md "Symbols").

A ``Symbol`` is a named integer the caller of an entrypoint gives at run
time, with a range ``[min, max]``; a ``Dim`` is an integer affine
combination of symbols (``seq``, ``seq + 2``, ``ctx - seq``, ``32 * seq``).
A tensor extent is an ``int`` or a ``Dim``; arithmetic that would leave the
affine form (a product of two symbols, a division that is not exact) and
anything that needs a fixed value (``int()``, ``range()``, ``if d < 4``)
raises ``TypeError`` naming the expression, so no extent is ever guessed.
A ``Dim`` whose terms cancel is returned as a plain ``int``.
"""
from __future__ import annotations

import re
from typing import Dict, Iterable, Optional, Sequence, Tuple, Union

__all__ = ["Symbol", "Dim", "SymbolicExtentError", "is_dim", "dim_bounds", "product_equal", "parse_extent",
           "symbols_of"]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
INT64_MAX = (1 << 63) - 1


class SymbolicExtentError(TypeError):
    """A symbolic extent used where a fixed value (or a form the model
    format cannot express) is needed."""


class Symbol:
    """A run-time extent: ``Symbol("seq", min=1, max=512)``. ``max=None``
    (unbounded) can be built but not saved: coreai-gen sizes the workspace
    for the largest value."""

    __slots__ = ("name", "min", "max")

    def __init__(self, name: str, min: int = 0, max: Optional[int] = None) -> None:
        if not isinstance(name, str) or not _IDENT.match(name):
            raise ValueError(f"symbol name {name!r} must be an identifier ([A-Za-z_][A-Za-z0-9_]*)")
        if isinstance(min, bool) or not isinstance(min, int) or min < 0:
            raise ValueError(f"symbol '{name}': min must be an int >= 0, got {min!r}")
        if max is not None and (isinstance(max, bool) or not isinstance(max, int) or max < min or max > INT64_MAX):
            raise ValueError(f"symbol '{name}': max must be an int in [{min}, 2**63 - 1] or None, got {max!r}")
        self.name, self.min, self.max = name, int(min), (None if max is None else int(max))

    def _key(self) -> tuple:
        return (self.name, self.min, self.max)

    def __eq__(self, other) -> bool:
        return isinstance(other, Symbol) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(("Symbol",) + self._key())

    def __repr__(self) -> str:
        return f"Symbol({self.name!r}, min={self.min}, max={self.max})"

    def __str__(self) -> str:
        return self.name

    # a symbol is the extent 1 * symbol
    def dim(self) -> "Dim":
        return Dim({self: 1}, 0)

    def __add__(self, o):
        return self.dim() + o

    __radd__ = __add__

    def __sub__(self, o):
        return self.dim() - o

    def __rsub__(self, o):
        return o - self.dim()

    def __mul__(self, o):
        return self.dim() * o

    __rmul__ = __mul__

    def __neg__(self):
        return -self.dim()


def _as_int(v) -> Optional[int]:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return int(v)
    try:
        import numpy as np

        if isinstance(v, np.integer):
            return int(v)
    except ImportError:  # pragma: no cover
        pass
    return None


class Dim:
    """``constant + sum(coef * symbol)``, at least one coefficient non-zero."""

    __slots__ = ("terms", "constant", "_hash")

    def __init__(self, terms: Dict[Symbol, int], constant: int = 0) -> None:
        self.terms = {s: int(c) for s, c in terms.items() if c != 0}
        self.constant = int(constant)
        self._hash = None

    @staticmethod
    def make(terms: Dict[Symbol, int], constant: int) -> Union["Dim", int]:
        terms = {s: c for s, c in terms.items() if c != 0}
        if not terms:
            return int(constant)
        names = {}
        for s in terms:
            if s.name in names and names[s.name] != s:
                raise ValueError(f"two symbols named '{s.name}' with different ranges in one extent")
            names[s.name] = s
        return Dim(terms, constant)

    # -- arithmetic -----------------------------------------------------------
    @staticmethod
    def _lift(o) -> Optional[Tuple[Dict[Symbol, int], int]]:
        if isinstance(o, Dim):
            return o.terms, o.constant
        if isinstance(o, Symbol):
            return {o: 1}, 0
        i = _as_int(o)
        if i is not None:
            return {}, i
        return None

    def _lin(self, o, k: int):
        other = Dim._lift(o)
        if other is None:
            return NotImplemented
        terms = dict(self.terms)
        for s, c in other[0].items():
            terms[s] = terms.get(s, 0) + k * c
        return Dim.make(terms, self.constant + k * other[1])

    def __add__(self, o):
        return self._lin(o, 1)

    __radd__ = __add__

    def __sub__(self, o):
        return self._lin(o, -1)

    def __rsub__(self, o):
        r = self._lin(o, -1)
        return NotImplemented if r is NotImplemented else -r

    def __neg__(self):
        return Dim.make({s: -c for s, c in self.terms.items()}, -self.constant)

    def __mul__(self, o):
        i = _as_int(o)
        if i is None:
            if isinstance(o, (Dim, Symbol)):
                raise SymbolicExtentError(f"extent ({self}) * ({o}) is not an integer affine combination of symbols")
            return NotImplemented
        return Dim.make({s: c * i for s, c in self.terms.items()}, self.constant * i)

    __rmul__ = __mul__

    def __floordiv__(self, o):
        i = _as_int(o)
        if i is None or i == 0:
            raise SymbolicExtentError(f"extent ({self}) // {o!r} is not an integer affine combination of symbols")
        if any(c % i for c in self.terms.values()) or self.constant % i:
            raise SymbolicExtentError(f"extent ({self}) // {i} is not exact for every value of its symbols")
        return Dim.make({s: c // i for s, c in self.terms.items()}, self.constant // i)

    def __mod__(self, o):
        i = _as_int(o)
        if i is not None and i != 0 and not any(c % i for c in self.terms.values()):
            return self.constant % i
        raise SymbolicExtentError(f"extent ({self}) % {o!r} depends on the values of its symbols")

    # -- no fixed value ---------------------------------------------------------
    def _no_value(self, what: str):
        raise SymbolicExtentError(f"symbolic extent {self} has no fixed value ({what})")

    def __index__(self):
        self._no_value("used as an index or a size")

    def __int__(self):
        self._no_value("int()")

    def __bool__(self):
        self._no_value("truth test")

    def __float__(self):
        self._no_value("float()")

    def _compare(self, o, op: str):
        other = Dim._lift(o)
        if other is None:
            return NotImplemented
        lo, hi = dim_bounds(self - o)
        # decided for every value of the symbols, or an error
        if op == "<":
            if hi is not None and hi < 0:
                return True
            if lo >= 0:
                return False
        elif op == "<=":
            if hi is not None and hi <= 0:
                return True
            if lo > 0:
                return False
        elif op == ">":
            if lo > 0:
                return True
            if hi is not None and hi <= 0:
                return False
        elif op == ">=":
            if lo >= 0:
                return True
            if hi is not None and hi < 0:
                return False
        raise SymbolicExtentError(f"whether {self} {op} {o} depends on the values of its symbols")

    def __lt__(self, o):
        return self._compare(o, "<")

    def __le__(self, o):
        return self._compare(o, "<=")

    def __gt__(self, o):
        return self._compare(o, ">")

    def __ge__(self, o):
        return self._compare(o, ">=")

    # -- identity ---------------------------------------------------------------
    def __eq__(self, o) -> bool:
        if isinstance(o, Symbol):
            o = o.dim()
        return isinstance(o, Dim) and o.constant == self.constant and o.terms == self.terms

    def __ne__(self, o) -> bool:
        return not self.__eq__(o)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash((frozenset(self.terms.items()), self.constant))
        return self._hash

    def symbols(self) -> list:
        return sorted(self.terms, key=lambda s: s.name)

    def __str__(self) -> str:
        parts = []
        for s in self.symbols():
            c = self.terms[s]
            sign = "-" if c < 0 else ("+" if parts else "")
            mag = abs(c)
            parts.append(f"{sign}{s.name}" if mag == 1 else f"{sign}{mag}*{s.name}")
        if self.constant:
            parts.append(f"{'-' if self.constant < 0 else '+'}{abs(self.constant)}")
        return "".join(parts)

    def __repr__(self) -> str:
        return f"Dim({self})"

    def evaluate(self, values: Dict[str, int]) -> int:
        """The value for symbol values by name."""
        return self.constant + sum(c * values[s.name] for s, c in self.terms.items())


def is_dim(e) -> bool:
    return isinstance(e, (Dim, Symbol))


def dim_bounds(e) -> Tuple[int, Optional[int]]:
    """(least, largest) value of an extent over its symbols' ranges; largest
    is None when a symbol is unbounded in that direction."""
    if isinstance(e, Symbol):
        e = e.dim()
    if not isinstance(e, Dim):
        return int(e), int(e)
    lo = hi = e.constant
    for s, c in e.terms.items():
        if c > 0:
            lo += c * s.min
            hi = None if hi is None or s.max is None else hi + c * s.max
        else:
            hi = None if hi is None else hi + c * s.min
            lo = None if lo is None or s.max is None else lo + c * s.max
    return (lo if lo is not None else -INT64_MAX - 1), hi


def symbols_of(shapes: Iterable[Sequence]) -> list:
    """The symbols the extents mention, in first-appearance order."""
    out = []
    for shape in shapes:
        for e in shape:
            if isinstance(e, Dim):
                for s in e.symbols():
                    if s not in out:
                        out.append(s)
    return out


def _poly(shape: Sequence) -> Optional[dict]:
    """The product of extents as {sorted symbol names: coefficient}."""
    poly = {(): 1}
    for e in shape:
        if isinstance(e, Symbol):
            e = e.dim()
        factor = {(): e.constant} if isinstance(e, Dim) else {(): int(e)}
        if isinstance(e, Dim):
            for s, c in e.terms.items():
                factor[(s.name,)] = factor.get((s.name,), 0) + c
        out: dict = {}
        for m1, c1 in poly.items():
            for m2, c2 in factor.items():
                m = tuple(sorted(m1 + m2))
                out[m] = out.get(m, 0) + c1 * c2
        poly = {m: c for m, c in out.items() if c != 0}
        if len(poly) > 4096:
            return None
    return poly


def product_equal(a: Sequence, b: Sequence) -> bool:
    """Whether prod(a) == prod(b) for every value of the symbols."""
    pa, pb = _poly(a), _poly(b)
    return pa is not None and pa == pb


_TERM = re.compile(r"([+-]?)(?:(\d+)\*)?([A-Za-z_][A-Za-z0-9_]*)|([+-]?)(\d+)")


def parse_extent(text: str, symbols: Dict[str, Symbol]) -> Union[int, Dim]:
    """An extent of a model file: a decimal integer or an expression of terms
    ``N``, ``S``, ``N*S`` joined by + and -."""
    if text.isdigit():
        return int(text)
    pos, terms, constant = 0, {}, 0
    while pos < len(text):
        m = _TERM.match(text, pos)
        if m is None or (pos > 0 and not (m.group(1) or m.group(4))):
            raise ValueError(f"'{text}' is not an extent")
        if m.group(3) is not None:
            name = m.group(3)
            if name not in symbols:
                raise ValueError(f"extent '{text}' names '{name}', which is no declared <symbol>")
            k = int(m.group(2) or 1) * (-1 if m.group(1) == "-" else 1)
            s = symbols[name]
            terms[s] = terms.get(s, 0) + k
        else:
            constant += int(m.group(5)) * (-1 if m.group(4) == "-" else 1)
        pos = m.end()
        if pos < len(text) and text[pos] == "*":
            raise ValueError(f"extent '{text}' is not an integer affine expression such as 2*seq+1")
    return Dim.make(terms, constant)
