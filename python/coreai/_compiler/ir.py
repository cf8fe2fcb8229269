"""The in-memory Core AI program: modules of graphs of operations on typed
SSA values (docs/python-api.md, docs/model-format.md).

Value ids are not chosen by the user: a graph numbers its values by position
(arguments arg0, arg1, ...; constants cK and op results vK with one counter
over the body in program order), so the same program always gets the same
ids, in `str(module)` and in the saved file alike.
"""
from __future__ import annotations

import re
import threading
from typing import Iterable, Sequence

import numpy as np

from . import dtypes as _dt
from .dims import Dim, Symbol, dim_bounds
from .dtypes import DType, bf16, bool_, f16, f32, i4, i8, i32, i64, u1, u2, u4, u6, u8  # noqa: F401  (re-exported)
from .numbers import f32_round

__all__ = [
    "DType", "f32", "f16", "bf16", "i64", "i32", "bool_", "i8", "u8", "i4", "u4", "u1", "u2", "u6",
    "Symbol", "Dim", "TensorType", "Value", "Location", "Attr", "Operation", "CompositeDecl",
    "Graph", "Entrypoint", "Module", "InsertionPoint", "MAX_RANK",
]

MAX_RANK = 8

_SYMBOL = re.compile(r"[A-Za-z0-9_.\-]+\Z")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_OP_KIND = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+\Z")
_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def check_symbol(text, what: str) -> str:
    if not isinstance(text, str) or not _SYMBOL.match(text):
        raise ValueError(f"{what} {text!r} must be non-empty and use only letters, digits and _ . -")
    return text


def check_identifier(text, what: str) -> str:
    if not isinstance(text, str) or not _IDENT.match(text):
        raise ValueError(f"{what} {text!r} must be an identifier ([A-Za-z_][A-Za-z0-9_]*)")
    return text


# ---------------------------------------------------------------------------
# types
# ---------------------------------------------------------------------------

class TensorType:
    """A ranked tensor type: shape (rank <= 8; each extent a non-negative int
    or a symbolic ``Dim``, model format 2) and element type."""

    __slots__ = ("_shape", "_element_type")

    def __init__(self, shape: Sequence[int], element_type) -> None:
        try:
            dims = tuple(_as_extent(d) for d in shape)
        except TypeError:
            raise ValueError(f"tensor shape must be a sequence of ints or symbolic extents, got {shape!r}") from None
        for d in dims:
            if isinstance(d, Dim):
                hi = dim_bounds(d)[1]
                if hi is not None and hi < 0:
                    raise ValueError(f"tensor shape has extent {d}, negative for every value of its symbols")
            elif d < 0:
                raise ValueError(f"tensor shape {dims} has a negative extent")
        if len(dims) > MAX_RANK:
            raise ValueError(f"tensor shape {dims} has rank {len(dims)}; at most {MAX_RANK} is supported")
        self._shape = dims
        self._element_type = DType.from_any(element_type)

    @property
    def shape(self) -> tuple:
        return self._shape

    @property
    def element_type(self) -> DType:
        return self._element_type

    dtype = element_type

    @property
    def rank(self) -> int:
        return len(self._shape)

    @property
    def is_dynamic(self) -> bool:
        """Whether an extent is symbolic."""
        return any(isinstance(d, Dim) for d in self._shape)

    @property
    def numel(self) -> int:
        """The element count (a TypeError for a symbolic shape: see max_numel)."""
        if self.is_dynamic:
            raise TypeError(f"{self} has a symbolic shape: its element count is not fixed")
        n = 1
        for d in self._shape:
            n *= d
        return n

    @property
    def max_numel(self) -> int | None:
        """The element count at the symbols' largest values (None if unbounded)."""
        n = 1
        for d in self._shape:
            hi = dim_bounds(d)[1]
            if hi is None:
                return None
            n *= hi
        return n

    @property
    def nbytes(self) -> int:
        """Bytes in the model file: sub-byte dtypes are packed (ceil(numel * bits / 8))."""
        return (self.numel * self._element_type.bits + 7) // 8

    def with_shape(self, shape) -> "TensorType":
        return TensorType(shape, self._element_type)

    def with_element_type(self, element_type) -> "TensorType":
        return TensorType(self._shape, element_type)

    def __eq__(self, other) -> bool:
        return (isinstance(other, TensorType) and self._shape == other._shape
                and self._element_type is other._element_type)

    def __hash__(self) -> int:
        return hash((self._shape, self._element_type))

    def __str__(self) -> str:
        return "tensor<" + "".join(f"[{d}]x" if isinstance(d, Dim) else f"{d}x" for d in self._shape) + \
            self._element_type.text + ">"

    def __repr__(self) -> str:
        return f"TensorType({self._shape}, {self._element_type!r})"


def _as_int(x, what: str) -> int:
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(what)
    if isinstance(x, (int, np.integer)):
        return int(x)
    raise TypeError(what)


def _as_extent(x):
    if isinstance(x, Symbol):
        return x.dim()
    if isinstance(x, Dim):
        return x
    return _as_int(x, "extent")


# ---------------------------------------------------------------------------
# locations and attributes
# ---------------------------------------------------------------------------

class Location:
    """Where an op came from; kept for diagnostics only (never saved)."""

    __slots__ = ("text",)

    def __init__(self, text: str | None = None) -> None:
        self.text = text

    @classmethod
    def unknown(cls) -> "Location":
        return cls(None)

    @classmethod
    def name(cls, name: str) -> "Location":
        return cls(str(name))

    @classmethod
    def file(cls, filename: str, line: int = 0, col: int = 0) -> "Location":
        return cls(f"{filename}:{line}:{col}")

    @classmethod
    def fused(cls, locations: Iterable["Location"]) -> "Location":
        parts = [l.text for l in locations if l is not None and l.text]
        return cls(", ".join(parts) if parts else None)

    @property
    def is_unknown(self) -> bool:
        return self.text is None

    def __str__(self) -> str:
        return "loc(unknown)" if self.text is None else f'loc("{self.text}")'

    __repr__ = __str__


ATTR_KINDS = ("si64", "f32", "f64", "bool", "str", "si64[]", "f32[]", "str[]", "dim", "dim[]")


class Attr:
    """A typed attribute value. kind is one of ATTR_KINDS; value is normalised
    (ints, floats rounded to f32 for the f32 kinds, tuples for arrays)."""

    __slots__ = ("kind", "value")

    def __init__(self, kind: str, value) -> None:
        if kind not in ATTR_KINDS:
            raise ValueError(f"unknown attribute kind {kind!r} (expected one of {', '.join(ATTR_KINDS)})")
        self.kind = kind
        self.value = _normalise_attr(kind, value)

    @classmethod
    def infer(cls, value) -> "Attr":
        """An Attr from a Python value: bool, int -> si64, float -> f32, str,
        or a list of ints / floats / strs. An Attr is returned as is."""
        if isinstance(value, Attr):
            return value
        if isinstance(value, (bool, np.bool_)):
            return cls("bool", value)
        if isinstance(value, (Dim, Symbol)):
            return cls("dim", value)
        if isinstance(value, (int, np.integer)):
            return cls("si64", value)
        if isinstance(value, (float, np.floating)):
            return cls("f32", value)
        if isinstance(value, str):
            return cls("str", value)
        if isinstance(value, np.ndarray):
            value = value.tolist()
        if isinstance(value, (list, tuple)):
            items = list(value)
            if all(isinstance(v, str) for v in items) and items:
                return cls("str[]", items)
            if any(isinstance(v, (Dim, Symbol)) for v in items):
                return cls("dim[]", items)
            if all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in items):
                return cls("si64[]", items)
            if all(isinstance(v, (int, float, np.integer, np.floating)) for v in items):
                return cls("f32[]", items)
        raise ValueError(f"cannot infer an attribute type for {value!r}")

    @property
    def is_array(self) -> bool:
        return self.kind.endswith("[]")

    def __eq__(self, other) -> bool:
        return isinstance(other, Attr) and self.kind == other.kind and self.value == other.value

    def __hash__(self) -> int:
        return hash((self.kind, self.value))

    def __repr__(self) -> str:
        return f"Attr({self.kind!r}, {self.value!r})"


def _normalise_attr(kind: str, value):
    def one_int(v):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise ValueError(f"attribute of kind {kind} needs integers, got {v!r}")
        v = int(v)
        if not INT64_MIN <= v <= INT64_MAX:
            raise ValueError(f"attribute value {v} is out of range for si64")
        return v

    def one_float(v, narrow):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise ValueError(f"attribute of kind {kind} needs numbers, got {v!r}")
        f = float(v)
        if f != f:
            raise ValueError(f"attribute of kind {kind}: NaN is not allowed")
        return f32_round(f) if narrow else f

    def one_str(v, token):
        if not isinstance(v, str):
            raise ValueError(f"attribute of kind {kind} needs strings, got {v!r}")
        if _XML_BAD.search(v):
            raise ValueError(f"attribute string {v!r} contains a character XML cannot carry")
        if token and (not v or any(c.isspace() for c in v)):
            raise ValueError(f"str[] attribute items must be non-empty and without spaces, got {v!r}")
        return v

    def items(v):
        if isinstance(v, np.ndarray):
            v = v.tolist()
        if isinstance(v, (str, bytes)) or not hasattr(v, "__iter__"):
            raise ValueError(f"attribute of kind {kind} needs a list, got {v!r}")
        return list(v)

    if kind == "si64":
        return one_int(value)
    if kind == "f32":
        return one_float(value, True)
    if kind == "f64":
        return one_float(value, False)
    if kind == "bool":
        if isinstance(value, (bool, np.bool_)) or value in (0, 1):
            return bool(value)
        raise ValueError(f"bool attribute needs True or False, got {value!r}")
    if kind == "str":
        return one_str(value, False)
    if kind == "si64[]":
        return tuple(one_int(v) for v in items(value))
    if kind == "dim":
        return _as_extent(value) if not isinstance(value, (int, np.integer)) else one_int(value)
    if kind == "dim[]":
        return tuple(_as_extent(v) if isinstance(v, (Dim, Symbol)) else one_int(v) for v in items(value))
    if kind == "f32[]":
        return tuple(one_float(v, True) for v in items(value))
    return tuple(one_str(v, True) for v in items(value))


# ---------------------------------------------------------------------------
# values and operations
# ---------------------------------------------------------------------------

class Value:
    """An SSA value: a graph argument or an op result (constants are results
    of `coreai.constant` ops)."""

    __slots__ = ("type", "owner", "index", "name", "__weakref__")

    def __init__(self, type: TensorType, owner, index: int, name: str | None = None) -> None:
        self.type = type
        self.owner = owner      # Operation, or Graph for an argument
        self.index = index      # result index or argument index
        self.name = name        # coreai.name of an argument

    @property
    def is_argument(self) -> bool:
        return isinstance(self.owner, Graph)

    @property
    def graph(self) -> "Graph | None":
        return self.owner if isinstance(self.owner, Graph) else self.owner.graph

    @property
    def op(self) -> "Operation | None":
        return None if isinstance(self.owner, Graph) else self.owner

    @property
    def is_constant(self) -> bool:
        return isinstance(self.owner, Operation) and self.owner.kind == "coreai.constant"

    @property
    def is_host_constant(self) -> bool:
        return self.is_constant and self.owner.host_dtype is not None

    @property
    def constant_value(self) -> np.ndarray:
        """The data of a constant: a read-only NumPy array in the dtype's
        storage (float32, float16, uint16 bf16 bit patterns, int64, int32,
        bool; the unsigned dtype of a host constant)."""
        if not self.is_constant:
            raise ValueError(f"{self.describe()} is not a constant")
        return self.owner.data

    @property
    def id(self) -> str:
        g = self.graph
        if g is None:
            return "detached"
        return g._ids().get(self, "detached")

    def describe(self) -> str:
        where = f" in @{self.graph.name}" if self.graph is not None else ""
        what = "host constant" if self.is_host_constant else "value"
        return f"{what} %{self.id}: {self.type}{where}"

    def __repr__(self) -> str:
        return f"<Value %{self.id}: {self.type}>"


class Operation:
    """One op: kind ("coreai.add"), operands, results, attributes, callee
    (the graph name of a coreai.invoke). A constant is an op of kind
    "coreai.constant" with `data`."""

    __slots__ = ("kind", "operands", "results", "attributes", "callee", "location", "graph",
                 "data", "host_dtype")

    def __init__(self, kind: str, operands: Sequence[Value], result_types: Sequence[TensorType],
                 attributes: dict | None = None, callee: str | None = None,
                 location: Location | None = None) -> None:
        if kind != "coreai.constant" and not _OP_KIND.match(kind):
            raise ValueError(f"op kind {kind!r} must look like 'dialect.name'")
        self.kind = kind
        self.operands = list(operands)
        self.results = [Value(t, self, i) for i, t in enumerate(result_types)]
        self.attributes = {}
        for k, v in (attributes or {}).items():
            check_identifier(k, "attribute name")
            self.attributes[k] = Attr.infer(v)
        self.callee = callee
        self.location = location if location is not None else Location.unknown()
        self.graph = None
        self.data = None
        self.host_dtype = None

    @property
    def result(self) -> Value:
        if len(self.results) != 1:
            raise ValueError(f"{self.kind} has {len(self.results)} results")
        return self.results[0]

    @property
    def is_constant(self) -> bool:
        return self.kind == "coreai.constant"

    def __repr__(self) -> str:
        res = ", ".join(f"%{r.id}" for r in self.results)
        return f"<Operation {res} = {self.kind}>"


class CompositeDecl:
    """Marks a graph as a composite op: op name, argument and result names,
    and op attributes (ir.Attr or plain Python values, see Attr.infer)."""

    def __init__(self, op_name: str, input_names: Sequence[str], output_names: Sequence[str],
                 attrs: dict | None = None) -> None:
        self.op_name = check_symbol(op_name, "composite op name")
        self.input_names = [check_symbol(n, "composite input name") for n in input_names]
        self.output_names = [check_symbol(n, "composite output name") for n in output_names]
        if not self.output_names:
            raise ValueError(f"composite op '{op_name}' needs at least one output name")
        if len(set(self.input_names)) != len(self.input_names):
            raise ValueError(f"composite op '{op_name}' names an input twice: {self.input_names}")
        self.attrs = {}
        for k, v in (attrs or {}).items():
            check_identifier(k, "composite attribute name")
            self.attrs[k] = Attr.infer(v)

    def __repr__(self) -> str:
        return (f"CompositeDecl({self.op_name!r}, {self.input_names}, {self.output_names}, "
                f"{self.attrs})")


# ---------------------------------------------------------------------------
# graphs and modules
# ---------------------------------------------------------------------------

class Graph:
    """A named graph: arguments, operations in program order, outputs."""

    def __init__(self, name: str, private: bool = False, noinline: bool = False,
                 composite: CompositeDecl | None = None) -> None:
        self.name = check_symbol(name, "graph name")
        self.private = bool(private)
        self.noinline = bool(noinline)
        if composite is not None and not isinstance(composite, CompositeDecl):
            raise ValueError("composite must be an ir.CompositeDecl")
        self.composite = composite
        self.arguments: list[Value] = []
        self.operations: list[Operation] = []
        self.outputs: list[Value] | None = None
        self.module: Module | None = None
        self._revision = 0
        self._id_cache = (None, None)

    # -- building -------------------------------------------------------------

    def add_argument(self, type: TensorType, name: str | None = None) -> Value:
        if not isinstance(type, TensorType):
            raise ValueError(f"add_argument needs an ir.TensorType, got {type!r}")
        if name is not None:
            check_symbol(name, "argument name")
        v = Value(type, self, len(self.arguments), name)
        self.arguments.append(v)
        self._touch()
        return v

    def set_outputs(self, values: Sequence[Value] | Value) -> None:
        if isinstance(values, Value):
            values = [values]
        values = list(values)
        if not values:
            raise ValueError(f"graph @{self.name} must return at least one value")
        for v in values:
            if not isinstance(v, Value):
                raise ValueError(f"graph @{self.name}: outputs must be Values, got {v!r}")
            if v.graph is not self:
                raise ValueError(f"graph @{self.name} cannot return {v.describe()}: it is not defined in this graph")
        self.outputs = values
        self._touch()

    def append(self, op: Operation) -> Operation:
        return self.insert(len(self.operations), op)

    def insert(self, index: int, op: Operation) -> Operation:
        if op.graph is not None:
            raise ValueError(f"{op.kind} already belongs to graph @{op.graph.name}")
        for i, v in enumerate(op.operands):
            if not isinstance(v, Value):
                raise ValueError(f"{op.kind}: operand {i} is not a Value: {v!r}")
            if v.graph is not self:
                other = f"graph @{v.graph.name}" if v.graph is not None else "no graph (it was removed)"
                raise ValueError(f"{op.kind}: operand {i} ({v.type}) belongs to {other}, "
                                 f"not to @{self.name}; pass values into a graph as arguments")
        op.graph = self
        self.operations.insert(index, op)
        self._touch()
        return op

    def erase(self, op: Operation) -> None:
        self.operations.remove(op)
        op.graph = None
        self._touch()

    def replace_all_uses(self, old: Value, new: Value) -> None:
        for op in self.operations:
            op.operands = [new if o is old else o for o in op.operands]
        if self.outputs is not None:
            self.outputs = [new if o is old else o for o in self.outputs]
        self._touch()

    # -- queries --------------------------------------------------------------

    @property
    def input_types(self) -> list:
        return [a.type for a in self.arguments]

    @property
    def output_types(self) -> list:
        if self.outputs is None:
            raise ValueError(f"graph @{self.name} has no outputs yet (call set_outputs)")
        return [o.type for o in self.outputs]

    def uses(self) -> dict:
        """Value -> number of uses (as operand or output) in this graph."""
        counts: dict = {}
        for op in self.operations:
            for o in op.operands:
                counts[o] = counts.get(o, 0) + 1
        for o in self.outputs or ():
            counts[o] = counts.get(o, 0) + 1
        return counts

    def callees(self) -> list:
        return [op.callee for op in self.operations if op.kind == "coreai.invoke"]

    def serialized_operations(self) -> list:
        """The ops written to the model file: all but host constants that
        are not used as operands (those only fed attributes)."""
        used = None
        out = []
        for op in self.operations:
            if op.is_constant and op.host_dtype is not None:
                if used is None:
                    used = self.uses()
                if op.results[0] not in used:
                    continue
            out.append(op)
        return out

    def _touch(self) -> None:
        self._revision += 1

    def _ids(self) -> dict:
        rev, ids = self._id_cache
        if rev == self._revision and ids is not None:
            return ids
        ids = {}
        for i, a in enumerate(self.arguments):
            ids[a] = f"arg{i}"
        k = 0
        h = 0
        for op in self.operations:
            if op.is_constant:
                if op.host_dtype is not None:
                    ids[op.results[0]] = f"h{h}"
                    h += 1
                else:
                    ids[op.results[0]] = f"c{k}"
                    k += 1
                continue
            for r in op.results:
                ids[r] = f"v{k}"
                k += 1
        self._id_cache = (self._revision, ids)
        return ids

    def __str__(self) -> str:
        from .printer import print_graph
        return print_graph(self, None)

    def __repr__(self) -> str:
        return f"<Graph @{self.name}: {len(self.arguments)} args, {len(self.operations)} ops>"


class Entrypoint:
    """A named entry of the module: the graph it runs and its state, input
    and output names (graph arguments = states + inputs; results = state
    updates + outputs). initial_states maps state names to the value a state
    starts with at run time (default zeros)."""

    def __init__(self, name: str, graph: str, states: Sequence[str], inputs: Sequence[str],
                 outputs: Sequence[str], initial_states: dict | None = None) -> None:
        self.name = check_identifier(name, "entrypoint name")
        self.graph = graph  # the graph name
        self.states = [check_symbol(s, "state name") for s in states]
        self.inputs = [check_symbol(s, "input name") for s in inputs]
        self.outputs = [check_symbol(s, "output name") for s in outputs]
        if not self.outputs and not self.states:
            raise ValueError(f"entrypoint '{name}' needs at least one output (or a state it updates)")
        seen = set()
        for n in self.states + self.inputs + self.outputs:
            if n in seen:
                raise ValueError(f"entrypoint '{name}' uses the name '{n}' twice")
            seen.add(n)
        # the generated C uses these names as parameters (coreai-gen's cg_cname)
        cnames: dict = {}
        for n in self.inputs + self.states + self.outputs:
            c = c_name(n)
            if c in cnames:
                raise ValueError(f"entrypoint '{name}': names '{cnames[c]}' and '{n}' both become the C "
                                 f"parameter '{c}'")
            cnames[c] = n
        if c_name(name) == "program":
            raise ValueError("entrypoint 'program' would collide with the generated NAME_program() descriptor")
        self.initial_states = {}
        for k, v in (initial_states or {}).items():
            if k not in self.states:
                raise ValueError(f"entrypoint '{name}': initial value for unknown state '{k}' "
                                 f"(states: {self.states})")
            self.initial_states[k] = v  # converted to the state's storage by Module.add_entrypoint

    @property
    def graph_name(self) -> str:
        return self.graph

    def __repr__(self) -> str:
        return (f"Entrypoint({self.name!r}, graph={self.graph!r}, states={self.states}, "
                f"inputs={self.inputs}, outputs={self.outputs})")


_C_RESERVED = frozenset("""
    auto break case char const continue default do double else enum extern float for goto if inline int long
    register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while
    _Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary _Noreturn _Static_assert _Thread_local bool true
    false asm typeof workspace ws""".split())


def c_name(name: str) -> str:
    """The C identifier coreai-gen makes of a model name (generator/src/cname.c)."""
    s = ("t_" if not name or name[0].isdigit() or name[0] == "_" else "") + name
    s = "".join(c if c.isascii() and c.isalnum() else "_" for c in s)
    return s + "_" if s in _C_RESERVED else s


def _state_storage(v, t: TensorType, what: str) -> np.ndarray:
    """Initial state data in the storage of type t (values converted)."""
    from ..runtime import NDArray  # NDArray and torch tensors

    if not isinstance(v, np.ndarray) and (isinstance(v, NDArray) or hasattr(v, "detach")):
        nd = v if isinstance(v, NDArray) else NDArray(v)
        if nd.dtype is t.element_type:
            arr = np.array(nd.numpy_storage(), copy=True)
        else:
            arr = _dt.to_storage(nd.numpy(), t.element_type, strict=False)
    else:
        arr = _dt.to_storage(np.asarray(v), t.element_type, strict=False)
    arr = np.array(arr, dtype=t.element_type.storage, copy=True)
    if tuple(arr.shape) != t.shape:
        raise ValueError(f"{what} has shape {tuple(arr.shape)}, but the state is {t}")
    arr.setflags(write=False)
    return arr


class Module:
    """An ordered set of graphs plus entrypoints."""

    def __init__(self) -> None:
        self.graphs: list[Graph] = []
        self.entrypoints: list[Entrypoint] = []
        # symbols the extents may name (format 2); those found in types but
        # not listed here are added when the module is saved
        self.symbols: list[Symbol] = []

    def add_symbol(self, symbol: Symbol) -> Symbol:
        """Declares a symbol (a Symbol, or a name with min/max via Symbol())."""
        if not isinstance(symbol, Symbol):
            raise ValueError(f"add_symbol needs an ir.Symbol, got {symbol!r}")
        for s in self.symbols:
            if s.name == symbol.name:
                if s != symbol:
                    raise ValueError(f"the module already has a symbol '{s.name}' with another range "
                                     f"([{s.min}, {s.max}] vs [{symbol.min}, {symbol.max}])")
                return s
        self.symbols.append(symbol)
        return symbol

    def all_symbols(self) -> list:
        """The declared symbols, then those the types name, in first-use order."""
        out = list(self.symbols)
        for g in self.graphs:
            types = [a.type for a in g.arguments] + [r.type for op in g.operations for r in op.results]
            for t in types:
                for d in t.shape:
                    if isinstance(d, Dim):
                        for s in d.symbols():
                            if s not in out:
                                out.append(s)
            for op in g.operations:
                for a in op.attributes.values():
                    vals = a.value if a.kind == "dim[]" else (a.value,) if a.kind == "dim" else ()
                    for v in vals:
                        if isinstance(v, Dim):
                            for s in v.symbols():
                                if s not in out:
                                    out.append(s)
        return out
    def add_graph(self, graph: Graph) -> Graph:
        if not isinstance(graph, Graph):
            raise ValueError(f"add_graph needs an ir.Graph, got {graph!r}")
        if graph.module is not None:
            if graph.module is self:
                raise ValueError(f"graph @{graph.name} is already in this module")
            raise ValueError(f"graph @{graph.name} already belongs to another module")
        if self.find_graph(graph.name) is not None:
            raise ValueError(f"the module already has a graph named @{graph.name}")
        graph.module = self
        self.graphs.append(graph)
        return graph

    def remove_graph(self, graph: Graph) -> None:
        self.graphs.remove(graph)
        graph.module = None

    def find_graph(self, name: str) -> Graph | None:
        for g in self.graphs:
            if g.name == name:
                return g
        return None

    def find_entrypoint(self, name: str) -> Entrypoint | None:
        for e in self.entrypoints:
            if e.name == name:
                return e
        return None

    def add_entrypoint(self, name: str, graph, states: Sequence[str] = (), inputs: Sequence[str] = (),
                       outputs: Sequence[str] = (), initial_states: dict | None = None) -> Entrypoint:
        gname = graph.name if isinstance(graph, Graph) else graph
        g = self.find_graph(gname)
        if g is None or (isinstance(graph, Graph) and g is not graph):
            raise ValueError(f"entrypoint '{name}': graph @{gname} is not in the module (add_graph it first)")
        if self.find_entrypoint(name) is not None:
            raise ValueError(f"the module already has an entrypoint named '{name}'")
        e = Entrypoint(name, gname, list(states), list(inputs), list(outputs), initial_states)
        if len(e.states) > len(g.arguments):
            raise ValueError(f"entrypoint '{name}' has {len(e.states)} states but graph @{gname} has only "
                             f"{len(g.arguments)} arguments")
        for k in list(e.initial_states):
            t = g.arguments[e.states.index(k)].type
            e.initial_states[k] = _state_storage(e.initial_states[k], t, f"initial value of state '{k}'")
        if g.outputs is not None:
            _check_entrypoint(e, g)
        self.entrypoints.append(e)
        return e

    def verify(self) -> None:
        """Everything coreai-gen checks about module structure (op types are
        checked as ops are built): outputs, callees, recursion, entrypoints,
        host constants used as operands. Raises ValueError."""
        from .verify import verify_module
        verify_module(self)

    def __str__(self) -> str:
        from .printer import print_module
        return print_module(self)

    def __repr__(self) -> str:
        return f"<Module: {len(self.graphs)} graphs, {len(self.entrypoints)} entrypoints>"


def _check_entrypoint(e: Entrypoint, g: Graph) -> None:
    ns, ni, no = len(e.states), len(e.inputs), len(e.outputs)
    if len(g.arguments) != ns + ni or len(g.outputs) != ns + no:
        raise ValueError(
            f"entrypoint '{e.name}' has {ns} states, {ni} inputs and {no} outputs, so graph @{g.name} "
            f"needs {ns + ni} arguments and {ns + no} results, but it has {len(g.arguments)} and {len(g.outputs)}")
    for i, s in enumerate(e.states):
        if g.arguments[i].type.is_dynamic:
            raise ValueError(f"state '{s}' of entrypoint '{e.name}' is {g.arguments[i].type}: a state's shape "
                             "must be fixed")
        if g.arguments[i].type != g.outputs[i].type:
            raise ValueError(f"state '{s}' of entrypoint '{e.name}' is {g.arguments[i].type} but its update "
                             f"is {g.outputs[i].type}")
        init = e.initial_states.get(s)
        if init is not None and tuple(init.shape) != g.arguments[i].type.shape:
            raise ValueError(f"initial value of state '{s}' has shape {tuple(init.shape)}, but the state is "
                             f"{g.arguments[i].type}")


# ---------------------------------------------------------------------------
# insertion point
# ---------------------------------------------------------------------------

_tls = threading.local()


def _stack() -> list:
    s = getattr(_tls, "stack", None)
    if s is None:
        s = _tls.stack = []
    return s


class InsertionPoint:
    """`with ir.InsertionPoint(graph):` makes builder functions append to graph."""

    def __init__(self, graph: Graph) -> None:
        if not isinstance(graph, Graph):
            raise ValueError(f"InsertionPoint needs an ir.Graph, got {graph!r}")
        self.graph = graph

    @classmethod
    def at_end(cls, graph: Graph) -> "InsertionPoint":
        return cls(graph)

    def __enter__(self) -> "InsertionPoint":
        _stack().append(self)
        return self

    def __exit__(self, *exc) -> None:
        s = _stack()
        if s and s[-1] is self:
            s.pop()
        elif self in s:
            s.remove(self)

    @staticmethod
    def current_or_none() -> "InsertionPoint | None":
        s = _stack()
        return s[-1] if s else None

    @staticmethod
    def current() -> "InsertionPoint":
        s = _stack()
        if not s:
            raise ValueError("no insertion point: build ops inside `with ir.InsertionPoint(graph):`")
        return s[-1]

    def append(self, op: Operation) -> Operation:
        return self.graph.append(op)
