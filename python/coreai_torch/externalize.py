"""Externalization: keeping a submodule's boundary through conversion.

``ExternalizeSpec`` is the public dataclass.  The rest of this module is the
machinery ``TorchConverter.add_pytorch_module`` uses:

1. **Mark.**  Every instance of a target class (``isinstance``; the root
   module included) gets its ``forward`` replaced, for the duration of
   ``export_fn``, by a call to a custom op
   ``torch.ops.coreai_ext.<path>_e<N>`` defined with ``torch.library``
   (CPU kernel: the original ``forward``; Meta kernel: empty tensors shaped
   like the recorded eager results).  Tensor arguments (plus the instance's
   own parameters and buffers, first) are the op's inputs; ``None``
   arguments are left out; other Python values are fixed at the call.  The
   op returns ``Tensor[]`` and the original output structure is rebuilt, so
   a whole submodule call traces to one node (and its ``getitem``s).
   Every call records its real inputs.  A composite op called with
   f16/bf16 tensors is exported on float32 copies of them (unless the
   instance owns f16/bf16 state), so its declaration has the f32 types its
   kernel needs; the converter casts around the call.
2. **Sub-export.**  For every such op found in the exported program (and,
   recursively, in the sub-exports), the instance is exported on its own
   (``torch.export.export`` with inputs of the traced types, then
   ``run_decompositions`` with the table the caller's program used),
   while its nested marked children stay marked, so they appear as op nodes
   in its body.
3. **Emit** (in the converter).  Each sub-export becomes one
   ``coreai.graph``: ``private noinline`` with a composite declaration when
   the spec names a composite op (graph name ``<module path>.<op>_<hash8>``),
   plain ``noinline`` named by the module path otherwise; the op node in the
   parent lowers to ``coreai.invoke``.

Call signatures: one instance gets one op per distinct call signature
(tensor argument names, i.e. the ``None`` pattern, their shapes and dtypes,
the state's types and the static arguments), so each signature is
sub-exported with inputs of its own types and gets its own graph; calls
with the same signature share the op (and the graph).  The first signature
converted keeps the plain graph name, the others get ``_<sig8>``
(``signature_hash``).

Composite declaration contents: ``input_names`` are the instance's parameter
and buffer names (as ``named_parameters``/``named_buffers`` spell them)
followed by the ``forward()`` parameter names of the tensor arguments
actually passed (``None`` optionals excluded); ``output_names`` is
``["output"]`` for one result, else ``output_0 .. output_{n-1}``;
``op_attrs`` are the ``composite_attrs`` read from the instance, typed
``bool``->bool, ``int``->si64, ``float``->f32, ``str``->str,
``list[int]``->si64[], ``list[float]``->f32[]; an attribute whose value is
``None`` (``SDPA.scale``, ``RoPE.dims``) is left out, like a ``None``
optional input (it does not enter the hash either).  The 8-hex hash is the first
8 hex digits of SHA-256 of ``"<op>|<name>:<type>=<text>;..."`` (attributes
in ``composite_attrs`` order, values as the model file spells them), so it
depends only on the op name and the attributes: identical configurations
share a hash, different ones differ.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import inspect
import itertools
import re
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
import torch.fx as fx
import torch.utils._pytree as pytree


from ._program import library_for, swap_tensors

__all__ = ["ExternalizeSpec"]

EXTERNALIZE_NAMESPACE = "coreai_ext"
_SYMBOL = re.compile(r"[A-Za-z0-9_.\-]+\Z")
_op_counter = itertools.count()


@dataclasses.dataclass
class ExternalizeSpec:
    """Which submodule class to externalize, and as which composite op.

    ``target_class``: the ``nn.Module`` subclass to match (``isinstance``).
    ``composite_op_name``: when set, each match becomes a named composite op
    (``private noinline`` graph with a composite declaration).
    ``composite_attrs``: instance attribute names recorded as the op's
    attributes; only valid together with ``composite_op_name``.
    """

    target_class: type
    composite_op_name: Optional[str] = None
    composite_attrs: Optional[List[str]] = None

    def __post_init__(self) -> None:
        if not isinstance(self.target_class, type) or not issubclass(self.target_class, torch.nn.Module):
            raise ValueError(
                f"ExternalizeSpec: target_class must be an nn.Module subclass, got {self.target_class!r}")
        if self.composite_op_name is None:
            if self.composite_attrs is not None:
                raise ValueError(
                    "ExternalizeSpec: ['composite_attrs'] can only be set when composite_op_name is provided.")
            return
        if not isinstance(self.composite_op_name, str) or not _SYMBOL.match(self.composite_op_name):
            raise ValueError(
                f"ExternalizeSpec: composite_op_name must be a non-empty name of letters, digits, "
                f"'_', '.', '-', got {self.composite_op_name!r}")
        if self.composite_attrs is not None:
            if isinstance(self.composite_attrs, str) or not all(
                    isinstance(a, str) and a.isidentifier() for a in self.composite_attrs):
                raise ValueError(
                    f"ExternalizeSpec: composite_attrs must be a list of attribute names, "
                    f"got {self.composite_attrs!r}")
            self.composite_attrs = list(self.composite_attrs)


def normalize_specs(targets: Optional[Sequence[Any]]) -> List[ExternalizeSpec]:
    specs = []
    for t in targets or []:
        if isinstance(t, ExternalizeSpec):
            specs.append(t)
        elif isinstance(t, type):
            specs.append(ExternalizeSpec(target_class=t))
        else:
            raise ValueError(
                f"externalize_modules entries must be ExternalizeSpec objects or nn.Module classes, got {t!r}")
    return specs


# ---------------------------------------------------------------------------
# composite attributes
# ---------------------------------------------------------------------------


def _f32_text(value: float) -> str:
    return "%.9g" % float(np.float32(value))


def attr_kind_and_text(name: str, value: Any) -> Tuple[str, str]:
    """(model-file type, text) of a composite attribute value."""
    if isinstance(value, (bool, np.bool_)):
        return "bool", "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return "si64", str(int(value))
    if isinstance(value, (float, np.floating)):
        return "f32", _f32_text(value)
    if isinstance(value, str):
        return "str", value
    if isinstance(value, torch.Size):
        value = list(value)
    if isinstance(value, (list, tuple)):
        if all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in value):
            return "si64[]", " ".join(str(int(v)) for v in value)
        if all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in value):
            return "f32[]", " ".join(_f32_text(v) for v in value)
    raise ValueError(
        f"composite attribute '{name}' has a value of unsupported type {type(value).__name__} ({value!r}); "
        "supported: bool, int, float, str, list of ints, list of floats")


def composite_attr_values(module: torch.nn.Module, spec: ExternalizeSpec, path: str) -> Dict[str, Any]:
    out = {}
    for attr in spec.composite_attrs or []:
        if not hasattr(module, attr):
            raise ValueError(
                f"ExternalizeSpec for {spec.target_class.__name__}: instance at '{path or '<root>'}' has no "
                f"attribute '{attr}' (composite_attrs must name instance attributes)")
        value = getattr(module, attr)
        if isinstance(value, enum.Enum):
            value = value.value  # e.g. a Version.v1 enum member -> 1
        if value is None:
            continue  # like a None optional input: left out of the declaration
        attr_kind_and_text(attr, value)  # validates
        if isinstance(value, (tuple, torch.Size)):
            value = list(value)
        out[attr] = value
    return out


def composite_hash(op_name: str, attrs: Dict[str, Any]) -> str:
    parts = []
    for name, value in attrs.items():
        kind, text = attr_kind_and_text(name, value)
        parts.append(f"{name}:{kind}={text}")
    canon = op_name + "|" + ";".join(parts)
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()[:8]


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _static_text(value: Any, for_name: bool) -> str:
    """The text of a static (non-tensor) argument value: its attribute text
    when it has one, else its ``repr``.  Call keys keep the object address a
    default ``repr`` shows (distinct objects stay distinct); graph names
    drop it (names must not change from run to run)."""
    try:
        kind, text = attr_kind_and_text("static", value)
        text = f"{kind}={text}"
    except ValueError:
        text = repr(value)
        if for_name:
            text = _ADDRESS.sub("", text)
    return f"{type(value).__name__}:{text}"


def _static_key(static: Dict[str, Any], for_name: bool = False) -> Tuple[Tuple[str, str], ...]:
    return tuple(sorted((name, _static_text(value, for_name)) for name, value in static.items()))


def _tensor_types(tensors: Sequence[torch.Tensor]) -> Tuple[Tuple[Tuple[Any, ...], torch.dtype], ...]:
    """Shapes and dtypes, a symbolic size (a ``SymInt`` of a dynamic export)
    as its expression text: ``int()`` would specialize it to the traced
    value (and fail the export of a dynamic dimension)."""
    return tuple((tuple(_size_key(d) for d in t.shape), t.dtype) for t in tensors)


def _size_key(d: Any) -> Any:
    if isinstance(d, torch.SymInt):
        expr = d.node.expr
        return int(expr) if getattr(expr, "is_Integer", False) else str(expr)
    return int(d)


def _traced_sizes(tensors: Sequence[torch.Tensor]) -> Tuple[List[Tuple[int, ...]], List[Dict[int, Any]]]:
    """(the traced sizes, {axis: sympy symbol} of the symbolic axes) of each tensor."""
    shapes, symbols = [], []
    for t in tensors:
        shape, syms = [], {}
        for axis, d in enumerate(t.shape):
            if isinstance(d, torch.SymInt) and not getattr(d.node.expr, "is_Integer", False):
                shape.append(int(d.node.hint))
                syms[axis] = d.node.expr
            else:
                shape.append(int(d))
        shapes.append(tuple(shape))
        symbols.append(syms)
    return shapes, symbols


def signature_hash(inputs: Sequence[Tuple[str, str]], outputs: Sequence[str], static: Dict[str, Any]) -> str:
    """8 hex digits (SHA-256) naming one call signature of an externalized
    instance: the graph's ``(argument name, type)`` pairs, its result types
    and the static arguments; used to tell apart the graphs of one instance
    called with different signatures (``<graph name>_<this>``)."""
    canon = (",".join(f"{n}:{t}" for n, t in inputs) + "->" + ",".join(outputs) + "|"
             + ";".join(f"{n}={t}" for n, t in _static_key(static, for_name=True)))
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()[:8]


def ir_attr(value: Any):
    """The ``coreai`` ``ir.Attr`` of a composite attribute value."""
    from coreai._compiler import ir

    kind, _ = attr_kind_and_text("attr", value)
    if kind in ("si64[]", "f32[]"):
        return ir.Attr(kind, list(value))
    return ir.Attr(kind, value)


# ---------------------------------------------------------------------------
# marking
# ---------------------------------------------------------------------------


@dataclasses.dataclass
class CallSignature:
    """One way a marked instance was called: which arguments were tensors
    (``None`` optionals left out), their shapes and dtypes, and the static
    (non-tensor) arguments.  Each distinct signature has its own custom op,
    sub-export and graph; calls with an identical signature share them."""

    op_name: str                 # custom op name in coreai_ext
    state_names: List[str]       # own parameters then buffers (their names)
    arg_names: List[str]         # forward() parameter names of the tensor args
    static: Dict[str, Any]       # non-tensor arguments (fixed at trace time)
    # (state, args) of the last call of this signature (all have the same types)
    recorded: Optional[Tuple[List[torch.Tensor], List[torch.Tensor]]] = None
    arg_types: List[Tuple[Tuple[int, ...], torch.dtype]] = dataclasses.field(default_factory=list)
    # per tensor argument, {axis: sympy symbol} of its sizes that the
    # enclosing export left symbolic (its shape env: shape_env)
    arg_symbols: List[Dict[int, Any]] = dataclasses.field(default_factory=list)
    shape_env: Any = None
    state_types: List[Tuple[Tuple[int, ...], torch.dtype]] = dataclasses.field(default_factory=list)
    out_spec: Any = None
    out_meta: Optional[List[Tuple[torch.Size, torch.dtype]]] = None
    # composite op exported on float32 copies of its f16/bf16 arguments
    # (the converter casts around the call; docs/composite-ops.md)
    widened: bool = False


@dataclasses.dataclass
class Marked:
    module: torch.nn.Module
    path: str
    spec: ExternalizeSpec
    original_forward: Any
    signatures: Dict[Tuple, CallSignature] = dataclasses.field(default_factory=dict)


class Externalizer:
    """Marks the matching submodules of ``root`` (see the module docstring)."""

    def __init__(self, root: torch.nn.Module, targets: Optional[Sequence[Any]]):
        self.root = root
        self.specs = normalize_specs(targets)
        self.marked: Dict[int, Marked] = {}
        self.by_op: Dict[str, Tuple[Marked, CallSignature]] = {}

    # -- patching ------------------------------------------------------------
    def mark(self) -> None:
        matched = [False] * len(self.specs)
        for path, mod in self.root.named_modules():
            for i, spec in enumerate(self.specs):
                if isinstance(mod, spec.target_class):
                    matched[i] = True
                    if id(mod) not in self.marked:
                        if spec.composite_op_name:
                            composite_attr_values(mod, spec, path)  # fail early on bad attrs
                        self._patch(mod, path, spec)
                    break
        unmatched = [self.specs[i].target_class.__name__ for i, ok in enumerate(matched) if not ok]
        if unmatched:
            warnings.warn(
                f"externalize_modules: the following target class(es) did not match any submodule in "
                f"the model: {', '.join(unmatched)}. Nothing is externalized for them.",
                UserWarning,
                stacklevel=3,
            )

    def _patch(self, mod: torch.nn.Module, path: str, spec: ExternalizeSpec) -> None:
        had_instance_forward = "forward" in mod.__dict__
        original = mod.forward
        marked = Marked(mod, path, spec, original)
        marked.had_instance_forward = had_instance_forward  # type: ignore[attr-defined]
        self.marked[id(mod)] = marked
        externalizer = self

        def patched_forward(*args, **kwargs):
            return externalizer._call(marked, args, kwargs)

        patched_forward.__wrapped__ = original  # inspect.signature() sees the real parameters
        mod.forward = patched_forward

    def restore(self) -> None:
        for marked in self.marked.values():
            self._unpatch(marked)

    def _unpatch(self, marked: Marked) -> None:
        mod = marked.module
        if getattr(marked, "had_instance_forward", False):
            mod.forward = marked.original_forward
        else:
            mod.__dict__.pop("forward", None)

    def _repatch(self, marked: Marked) -> None:
        externalizer = self

        def patched_forward(*args, **kwargs):
            return externalizer._call(marked, args, kwargs)

        patched_forward.__wrapped__ = marked.original_forward
        marked.module.forward = patched_forward

    # -- the call --------------------------------------------------------------
    def _call(self, marked: Marked, args: tuple, kwargs: dict):
        sig = inspect.signature(marked.original_forward)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{type(marked.module).__name__}.forward at '{marked.path}': {e}") from None
        bound.apply_defaults()
        arg_names: List[str] = []
        tensors: List[torch.Tensor] = []
        static: Dict[str, Any] = {}
        for name, value in bound.arguments.items():
            kind = sig.parameters[name].kind
            if kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                raise TypeError(
                    f"externalized module '{marked.path}' ({type(marked.module).__name__}): forward() with "
                    "*args/**kwargs cannot be externalized")
            if isinstance(value, torch.Tensor):
                arg_names.append(name)
                tensors.append(value)
            elif value is None:
                continue
            else:
                flat, _ = pytree.tree_flatten(value)
                if any(isinstance(v, torch.Tensor) for v in flat):
                    raise TypeError(
                        f"externalized module '{marked.path}' ({type(marked.module).__name__}): argument "
                        f"'{name}' holds tensors inside a container; composite op inputs must be tensors")
                static[name] = value
        params = list(marked.module.named_parameters())
        pids = {id(p) for _, p in params}
        buffers = [(n, b) for n, b in marked.module.named_buffers() if id(b) not in pids]
        state_names = [n for n, _ in params] + [n for n, _ in buffers]
        # Attribute access (not named_parameters()) sees the tensors that an
        # enclosing export swapped in (swap_tensors), i.e. the traced ones.
        state = [_fetch_attr(marked.module, n) for n in state_names]
        # One custom op (so one sub-export and one graph) per call signature:
        # which arguments are tensors (None optionals left out), their shapes
        # and dtypes, the instance's state types and the static arguments.
        # Calls with the same names but other shapes or dtypes must not share
        # an op: its recorded call (the sub-export's inputs) and its output
        # metadata would be those of whichever call ran last.
        key = (tuple(arg_names), _tensor_types(tensors), _tensor_types(state), _static_key(static))
        csig = marked.signatures.get(key)
        if csig is None:
            csig = self._define(marked, state_names, arg_names, static)
            shapes, csig.arg_symbols = _traced_sizes(tensors)
            csig.arg_types = [(sh, t.dtype) for sh, t in zip(shapes, tensors)]
            csig.state_types = list(key[2])
            csig.shape_env = next((d.node.shape_env for t in tensors for d in t.shape
                                   if isinstance(d, torch.SymInt)), None)
            marked.signatures[key] = csig
        outs = csig.op(*state, *tensors)
        return pytree.tree_unflatten(list(outs), csig.out_spec)

    def _define(self, marked: Marked, state_names, arg_names, static) -> CallSignature:
        base = re.sub(r"[^A-Za-z0-9_]", "_", marked.path) or type(marked.module).__name__
        op_name = f"{base}_e{next(_op_counter)}"
        csig = CallSignature(op_name, list(state_names), list(arg_names), dict(static))
        n_state = len(state_names)
        params = [f"Tensor s{i}" for i in range(n_state)] + [f"Tensor a{i}" for i in range(len(arg_names))]
        lib = library_for(EXTERNALIZE_NAMESPACE)
        lib.define(f"{op_name}({', '.join(params)}) -> Tensor[]")
        original = marked.original_forward

        def cpu_impl(*inputs):
            state_vals = list(inputs[:n_state])
            arg_vals = list(inputs[n_state:])
            call_kwargs = dict(zip(csig.arg_names, arg_vals))
            call_kwargs.update(csig.static)
            # Run the original forward on the kernel's own (plain) tensors: the
            # module attributes may hold the tracer's wrapped tensors.
            current = [_fetch_attr(marked.module, n) for n in csig.state_names]
            with swap_tensors(marked.module, {id(c): v for c, v in zip(current, state_vals)}):
                out = _call_with_names(original, call_kwargs)
            flat, spec = pytree.tree_flatten(out)
            for o in flat:
                if not isinstance(o, torch.Tensor):
                    raise TypeError(
                        f"externalized module '{marked.path}' returned a non-tensor value {o!r}")
            result = []
            for o in flat:
                if any(o.data_ptr() == i.data_ptr() for i in inputs) or any(o is r for r in result):
                    o = o.clone()
                result.append(o)
            csig.out_spec = spec
            csig.out_meta = [(o.shape, o.dtype) for o in result]
            csig.recorded = ([s.detach().clone() for s in state_vals], [a.detach().clone() for a in arg_vals])
            return result

        def fake_impl(*inputs):
            # torch.export traces with fake tensors: the shapes come from the
            # original forward run on them (no eager run is needed).
            state_vals = list(inputs[:n_state])
            call_kwargs = dict(zip(csig.arg_names, inputs[n_state:]))
            call_kwargs.update(csig.static)
            current = [_fetch_attr(marked.module, n) for n in csig.state_names]
            with swap_tensors(marked.module, {id(c): v for c, v in zip(current, state_vals)}):
                out = _call_with_names(original, call_kwargs)
            flat, spec = pytree.tree_flatten(out)
            for o in flat:
                if not isinstance(o, torch.Tensor):
                    raise TypeError(
                        f"externalized module '{marked.path}' returned a non-tensor value {o!r}")
            csig.out_spec = spec
            csig.out_meta = [(o.shape, o.dtype) for o in flat]
            # a custom op's results may not alias its inputs or each other
            return [o.clone() for o in flat]

        lib.impl(op_name, cpu_impl, "CPU")
        torch.library.register_fake(f"{EXTERNALIZE_NAMESPACE}::{op_name}", fake_impl, lib=lib)
        csig.op = getattr(torch.ops, EXTERNALIZE_NAMESPACE).__getattr__(op_name).default  # type: ignore
        self.by_op[op_name] = (marked, csig)
        return csig

    # -- sub-export ------------------------------------------------------------
    def sub_export(self, parent_program, decomp_table) -> Dict[str, "SubProgram"]:
        """Export every marked instance called in ``parent_program`` (and, in
        turn, in those sub-exports).  Returns ``{op name: SubProgram}``."""
        results: Dict[str, SubProgram] = {}
        pending = [parent_program]
        while pending:
            program = pending.pop()
            for node in program.graph.nodes:
                op = externalized_op_name(node)
                if op is None or op in results:
                    continue
                if op not in self.by_op:
                    raise RuntimeError(f"externalized op {op} does not belong to this module")
                marked, csig = self.by_op[op]
                arg_vals = _example_args(csig)
                state_dtypes = [dt for _, dt in csig.state_types]
                if marked.spec.composite_op_name and _widen_half(state_dtypes, [a.dtype for a in arg_vals]):
                    arg_vals = [a.float() if a.dtype in _HALF else a for a in arg_vals]
                    csig.widened = True
                kwargs = dict(zip(csig.arg_names, arg_vals))
                dynamic = _sub_dynamic_shapes(marked, csig, program)
                kwargs.update(csig.static)
                self._unpatch(marked)
                try:
                    with torch.no_grad():
                        sub = torch.export.export(marked.module, args=(), kwargs=kwargs, dynamic_shapes=dynamic)
                    if decomp_table is not None:
                        sub = sub.run_decompositions(decomp_table)
                finally:
                    self._repatch(marked)
                sig = sub.graph_signature
                mutated = list(sig.buffers_to_mutate.values()) + list(sig.user_inputs_to_mutate.values())
                if mutated:
                    raise ValueError(
                        f"externalized module '{marked.path}' ({type(marked.module).__name__}) mutates "
                        f"{mutated} in place; externalized modules must be functional")
                results[op] = SubProgram(marked, csig, sub)
                pending.append(sub)
        return results


_HALF = (torch.float16, torch.bfloat16)


def _sub_dynamic_shapes(marked: "Marked", csig: "CallSignature", program) -> Optional[Dict[str, Any]]:
    """The sub-export keeps the enclosing export's symbolic sizes: each
    becomes a ``torch.export.Dim`` with the symbol's range, named as the
    enclosing export names it (the user's ``Dim`` name), so the converter
    maps the sub-program's sizes back onto the entrypoint's symbols."""
    if not any(csig.arg_symbols):
        return None
    ranges = dict(getattr(program, "range_constraints", {}) or {})
    env = csig.shape_env
    debug = dict(getattr(env, "source_name_to_debug_name", {}) or {}) if env is not None else {}
    sources = dict(getattr(env, "var_to_sources", {}) or {}) if env is not None else {}
    dims: Dict[Any, Any] = {}
    spec: Dict[str, Any] = {name: None for name in list(csig.arg_names) + list(csig.static)}
    for name, syms in zip(csig.arg_names, csig.arg_symbols):
        if not syms:
            continue
        spec[name] = {}
        for axis, expr in syms.items():
            if not getattr(expr, "is_Symbol", False):
                raise NotImplementedError(
                    f"externalized module '{marked.path}' ({type(marked.module).__name__}): argument '{name}' "
                    f"dimension {axis} has the size {expr}; an externalized module's symbolic sizes must each be "
                    "one exported size (pass the derived size through a tensor of that shape instead)")
            if expr not in dims:
                vr = ranges.get(expr)
                if vr is None and env is not None:
                    vr = env.var_to_range.get(expr)
                lo = int(vr.lower) if vr is not None and getattr(vr.lower, "is_Integer", False) else 0
                hi = int(vr.upper) if vr is not None and getattr(vr.upper, "is_Integer", False) else None
                user = next((debug.get(getattr(src, "name", None)) for src in sources.get(expr, [])
                             if debug.get(getattr(src, "name", None))), None)
                dim_name = user if user and user.isidentifier() else str(expr)
                dims[expr] = torch.export.Dim(dim_name, min=lo, max=hi) if hi is not None else \
                    torch.export.Dim(dim_name, min=lo)
            spec[name][axis] = dims[expr]
    return spec


def _widen_half(state_dtypes, arg_dtypes) -> bool:
    """A composite op called with f16/bf16 tensors is exported (and so
    declared) on float32 copies of them, since the kernels are f32-only;
    not when the instance owns f16/bf16 parameters or buffers (its body
    would then mix dtypes)."""
    return any(d in _HALF for d in arg_dtypes) and not any(d in _HALF for d in state_dtypes)


def _example_args(csig: "CallSignature") -> List[torch.Tensor]:
    """Inputs for the sub-export: the last eager call's arguments when the
    op ran eagerly, else tensors of the traced types (``torch.export``
    only reads their shapes and dtypes; values matter only to
    data-dependent control flow, which an exported forward cannot have)."""
    if csig.recorded is not None:
        return [a.clone() for a in csig.recorded[1]]
    gen = torch.Generator().manual_seed(0)
    out = []
    for shape, dtype in csig.arg_types:
        if dtype.is_floating_point:
            out.append(torch.randn(shape, generator=gen).to(dtype))
        elif dtype == torch.bool:
            out.append(torch.ones(shape, dtype=dtype))
        else:
            out.append(torch.zeros(shape, dtype=dtype))
    return out


@dataclasses.dataclass
class SubProgram:
    marked: Marked
    signature: CallSignature
    program: Any  # torch.export.ExportedProgram (decomposed)

    @property
    def state_as_inputs(self) -> bool:
        """Composite ops take the instance's parameters/buffers as inputs;
        a simple externalization keeps them as constants of its graph."""
        return bool(self.marked.spec.composite_op_name)

    @property
    def input_names(self) -> List[str]:
        if self.state_as_inputs:
            return list(self.signature.state_names) + list(self.signature.arg_names)
        return list(self.signature.arg_names)

    @property
    def output_names(self) -> List[str]:
        n = len(self.program.graph_signature.user_outputs)
        named = getattr(self.marked.module, "_coreai_output_names", None)  # _recurrent layers
        if self.state_as_inputs and named is not None and len(named) == n:
            return list(named)
        return ["output"] if n == 1 else [f"output_{i}" for i in range(n)]

    @property
    def spec(self) -> ExternalizeSpec:
        return self.marked.spec

    @property
    def path(self) -> str:
        return self.marked.path

    def composite_attrs(self) -> Dict[str, Any]:
        return composite_attr_values(self.marked.module, self.marked.spec, self.marked.path)

    def graph_name(self) -> str:
        spec = self.marked.spec
        if spec.composite_op_name:
            attrs = self.composite_attrs()
            suffix = f"{spec.composite_op_name}_{composite_hash(spec.composite_op_name, attrs)}"
            return f"{self.path}.{suffix}" if self.path else suffix
        return self.path or type(self.marked.module).__name__


def _fetch_attr(root: torch.nn.Module, target: str):
    obj = root
    for atom in target.split("."):
        obj = getattr(obj, atom)
    return obj


def _call_with_names(fn, kwargs: dict):
    """Call ``fn`` binding ``kwargs`` by name, positional-only parameters included."""
    sig = inspect.signature(fn)
    args = []
    rest = dict(kwargs)
    for name, p in sig.parameters.items():
        if p.kind == inspect.Parameter.POSITIONAL_ONLY:
            if name in rest:
                args.append(rest.pop(name))
            else:
                break
    return fn(*args, **rest)


def externalized_op_name(node: fx.Node) -> Optional[str]:
    """The ``coreai_ext`` op name of a call-site node, else ``None``."""
    if node.op != "call_function":
        return None
    target = node.target
    schema = getattr(target, "_schema", None)
    if schema is None:
        return None
    name = schema.name
    if not name.startswith(EXTERNALIZE_NAMESPACE + "::"):
        return None
    return name.split("::", 1)[1]
