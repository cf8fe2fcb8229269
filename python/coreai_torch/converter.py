"""``TorchConverter``: exported PyTorch programs -> ``coreai.AIProgram``.

Each staged program becomes one entrypoint graph (named after the
entrypoint) of a single ``ir.Module``; externalized submodules and
ATen-derived composites (``layer_norm``, ``group_norm``, ``batch_norm``,
``instance_norm``, ``log_softmax``, ``hard_sigmoid``, ``pixel_shuffle``,
``linalg_vector_norm``; declarations as in docs/composite-ops.md) become
graphs of their own, called with ``coreai.invoke``.

IO of an entrypoint graph (docs/model-format.md, "entrypoint"):

* arguments: the **states** (mutated buffers in registration order, then
  mutated user inputs in ``forward()`` order), then the other user inputs;
* results: the state updates (same order), then the user outputs.

Parameters and buffers that are not mutated are constants.  Default names
follow the FX graph (``x``; ``b_<buffer>``; an output is named after the
node producing it, e.g. ``add``); ``input_names``, ``output_names`` and
``state_names`` override them (counts must match, else ``ValueError``).
A state starts with the value it had when the model was exported.
"""

from __future__ import annotations

import dataclasses
import hashlib
import operator
import re
from collections import OrderedDict
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
import torch.fx as fx
import torch.utils._pytree as pytree

from coreai import AIProgram
from coreai._compiler import ir
from coreai._compiler.dialects import coreai
from coreai._compiler.dims import SymbolicExtentError

from ._aten_to_core import LOWERINGS, qualified_name
from ._auto_functionalized import auto_functionalized_ops, lower_auto_functionalized
from ._compression_to_core import COMPRESSION_LOWERINGS, COMPRESSION_OPS
from ._decomp import get_decomp_table
from ._program import (
    BUFFER,
    BUFFER_MUTATION,
    CONSTANT,
    PARAMETER,
    USER_INPUT,
    USER_INPUT_MUTATION,
    USER_OUTPUT,
    module_path_of,
    source_line_of,
)
from ._torch_metal_kernel import TorchMetalKernel
from ._utils import ir_dtype, node_meta
from ._recurrent import patch_recurrent
from . import _symbolic
from .externalize import (
    Externalizer,
    SubProgram,
    externalized_op_name,
    ir_attr,
    attr_kind_and_text,
    signature_hash,
)

__all__ = ["TorchConverter", "UnsupportedOpError", "generate_composite_decl"]

_AUTO_FUNCTIONALIZED = auto_functionalized_ops()
_RESERVED_NAMESPACES = ("aten", "higher_order", "coreai", "coreaix")
_QUALIFIED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*::[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$")
_ENTRYPOINT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class UnsupportedOpError(NotImplementedError):
    """An FX node has no lowering (names the op and the module it came from)."""


# ---------------------------------------------------------------------------
# program view (torch.export programs)
# ---------------------------------------------------------------------------


@dataclasses.dataclass
class _Input:
    kind: str           # PARAMETER, BUFFER, CONSTANT, USER_INPUT
    name: str           # placeholder name
    target: str         # state-dict key / argument name


@dataclasses.dataclass
class _Output:
    kind: str
    name: str
    target: Optional[str]


class _ProgramView:
    """The parts of a ``torch.export.ExportedProgram`` the converter reads."""

    _INPUT_KINDS = {USER_INPUT, PARAMETER, BUFFER, "CONSTANT_TENSOR"}
    _OUTPUT_KINDS = {USER_OUTPUT, BUFFER_MUTATION, USER_INPUT_MUTATION}

    def __init__(self, ep: Any):
        self.ep = ep
        self.graph_module = ep.graph_module
        self.graph: fx.Graph = ep.graph_module.graph
        sig = ep.graph_signature
        self.inputs: List[_Input] = []
        self.outputs: List[_Output] = []
        self.state_dict: Dict[str, torch.Tensor] = dict(ep.state_dict or {})
        self.constants: Dict[str, torch.Tensor] = dict(getattr(ep, "constants", {}) or {})
        self.example_user_inputs: Dict[str, torch.Tensor] = {}
        self.skipped: set = set()  # placeholders of non-tensor user inputs (specialized constants)
        for spec in sig.input_specs:
            kind = spec.kind.name
            if kind not in self._INPUT_KINDS:
                raise UnsupportedOpError(
                    f"exported program input '{getattr(spec.arg, 'name', spec.arg)}' has kind {kind}; only "
                    "user inputs, parameters, buffers and constant tensors can be converted")
            if kind == "CONSTANT_TENSOR":
                kind = CONSTANT
            if not isinstance(spec.arg, torch.export.graph_signature.TensorArgument):
                # a non-tensor forward() argument: torch.export specialized it
                self.skipped.add(spec.arg.name)
                continue
            name = spec.arg.name
            self.inputs.append(_Input(kind, name, spec.target if spec.target is not None else name))
        for spec in sig.output_specs:
            kind = spec.kind.name
            if kind not in self._OUTPUT_KINDS:
                raise UnsupportedOpError(
                    f"exported program output of kind {kind} cannot be converted (only user outputs and "
                    "buffer / user-input mutations)")
            name = getattr(spec.arg, "name", None) or str(spec.arg)
            self.outputs.append(_Output(kind, name, spec.target))
        # initial values of mutated user inputs: the export's sample inputs
        args, kwargs = ep.example_inputs if ep.example_inputs is not None else ((), {})
        flat = [t for t in pytree.tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)]
        users = [s for s in self.inputs if s.kind == USER_INPUT]
        if len(flat) == len(users):
            for s, t in zip(users, flat):
                self.example_user_inputs[s.target] = t

    def placeholders(self) -> List[fx.Node]:
        return [n for n in self.graph.nodes if n.op == "placeholder"]

    def output_nodes(self) -> List[Any]:
        out = next(n for n in self.graph.nodes if n.op == "output")
        args = out.args[0]
        return list(args) if isinstance(args, (tuple, list)) else [args]

    def tensor_for(self, spec: _Input) -> torch.Tensor:
        if spec.target in self.state_dict:
            return self.state_dict[spec.target]
        if spec.target in self.constants:
            return self.constants[spec.target]
        raise KeyError(f"no value for {spec.kind.lower()} '{spec.target}'")


# ---------------------------------------------------------------------------
# values map
# ---------------------------------------------------------------------------


class ValuesMap(dict):
    """FX node name -> ``ir.Value``.  Constants (parameters, buffers, folded
    tensors) are materialized in the graph on first lookup."""

    def __init__(self, ctx: "LoweringContext"):
        super().__init__()
        self.ctx = ctx
        self.lazy: Dict[str, Callable[[], Any]] = {}
        self.folded: Dict[str, Any] = {}
        self.params: set = set()
        # the values of the parameters, buffers and constants in ``params``
        # (pattern lowerings evaluate tables that depend only on them; the
        # compression lowerings store them in another dtype)
        self.tensors: Dict[str, torch.Tensor] = {}

    def tensor_of(self, key: str) -> Optional[torch.Tensor]:
        """The tensor behind a parameter, buffer, constant or folded node; None otherwise."""
        t = self.tensors.get(key)
        if t is None:
            t = self.folded.get(key)
        return t if isinstance(t, torch.Tensor) else None

    def __missing__(self, key):
        if key in self.lazy:
            value = self.lazy.pop(key)()
            self[key] = value
            return value
        if key in self.folded:
            value = self.folded[key]
            if isinstance(value, torch.Tensor):
                v = _constant_from_tensor(value)
                self[key] = v
                return v
            raise KeyError(f"'{key}' is the non-tensor value {value!r}")
        raise KeyError(key)

    def __contains__(self, key):
        return dict.__contains__(self, key) or key in self.lazy or key in self.folded


def _constant_from_tensor(t: torch.Tensor, dtype=None) -> "ir.Value":
    t = t.detach().cpu()
    dt = dtype or ir_dtype(t.dtype)
    if t.dtype == torch.float64:
        t = t.to(torch.float32)
    if t.dtype in (torch.int8, torch.int16, torch.uint8):
        t = t.to(torch.int32)
    return coreai.constant(t.contiguous(), dt)


# ---------------------------------------------------------------------------
# lowering context (one per to_coreai() call)
# ---------------------------------------------------------------------------


class LoweringContext:
    def __init__(self, converter: "TorchConverter", module: ir.Module):
        self.converter = converter
        self.module = module
        self.composites: Dict[Tuple, ir.Graph] = {}
        self.externalized: Dict[Tuple, ir.Graph] = {}
        self.subprograms: Dict[str, SubProgram] = {}
        self.by_signature: Dict[str, ir.Graph] = {}
        # symbols of the module by name (each export's sizes map onto them)
        self.symbols: Dict[str, ir.Symbol] = {}
        # lowering an externalized graph's body: no pattern becomes a composite inside it
        self.in_composite_body = False

    # -- names -----------------------------------------------------------------
    def unique_graph_name(self, base: str) -> str:
        name, i = base, 1
        while self.module.find_graph(name) is not None:
            name = f"{base}_{i}"
            i += 1
        return name

    # -- ATen-derived composite graphs -------------------------------------------
    def composite(self, op_name: str, attrs: Dict[str, Any], inputs: Sequence[Tuple[str, "ir.Value"]],
                  output_names: Sequence[str], body: Callable[[List["ir.Value"]], List["ir.Value"]], loc=None):
        """Invoke the private noinline composite graph ``op_name`` for these
        attributes and input types (built on first use)."""
        types = tuple(str(v.type) for _, v in inputs)
        names = tuple(n for n, _ in inputs)
        key = (op_name, tuple((k, repr(v)) for k, v in attrs.items()), names, types)
        graph = self.composites.get(key)
        if graph is None:
            parts = [op_name + "|"] + [f"{k}:{'='.join(attr_kind_and_text(k, v))}" for k, v in attrs.items()]
            parts.append("|" + ",".join(f"{n}:{t}" for n, t in zip(names, types)))
            digest = hashlib.sha256(";".join(parts).encode("utf-8")).hexdigest()[:8]
            name = self.unique_graph_name(f"{op_name}_{digest}")
            decl = ir.CompositeDecl(op_name, list(names), list(output_names),
                                    {k: ir_attr(v) for k, v in attrs.items()})
            graph = ir.Graph(name, private=True, noinline=True, composite=decl)
            args = [graph.add_argument(v.type, n) for n, v in inputs]
            with ir.InsertionPoint(graph):
                outs = body(args)
            graph.set_outputs(list(outs))
            self.module.add_graph(graph)
            self.composites[key] = graph
        return coreai.invoke(graph, [v for _, v in inputs], loc=loc)


# ---------------------------------------------------------------------------
# staged programs
# ---------------------------------------------------------------------------


@dataclasses.dataclass
class _Staged:
    program: Any
    input_names: Optional[List[str]]
    output_names: Optional[List[str]]
    state_names: Optional[List[str]]
    entrypoint_name: str
    subprograms: Dict[str, SubProgram]


def _check_names(what: str, names: Optional[Sequence[str]]) -> Optional[List[str]]:
    if names is None:
        return None
    if isinstance(names, str):
        raise ValueError(f"{what} must be a sequence of names, not a string")
    names = list(names)
    for n in names:
        if not isinstance(n, str) or not n:
            raise ValueError(f"{what}: every name must be a non-empty string, got {n!r}")
    if len(set(names)) != len(names):
        raise ValueError(f"{what} has duplicate names: {names}")
    return names


class TorchConverter:
    """Converts exported PyTorch programs into a Core AI ``AIProgram``.

    ``add_exported_program()`` / ``add_pytorch_module()`` stage programs
    (one entrypoint each, names unique), ``to_coreai()`` converts them,
    ``register_torch_lowering()`` adds lowerings for custom or unsupported
    ops, ``register_custom_kernels()`` makes ``TorchMetalKernel`` calls
    convertible.  Custom lowerings and kernels persist across ``clear()``.
    """

    def __init__(self) -> None:
        self._staged: "OrderedDict[str, _Staged]" = OrderedDict()
        self._lowerings: Dict[str, Callable] = {}
        self._kernels: Dict[str, TorchMetalKernel] = {}

    # -- staging ------------------------------------------------------------------
    def _stage(self, staged: _Staged) -> None:
        name = staged.entrypoint_name
        if not isinstance(name, str) or not _ENTRYPOINT.match(name):
            raise ValueError(f"entrypoint_name {name!r} must be an identifier ([A-Za-z_][A-Za-z0-9_]*)")
        if name in self._staged:
            raise ValueError(
                f"entrypoint name '{name}' is already used by a staged program; entrypoint names must be unique")
        self._staged[name] = staged

    def add_exported_program(
        self,
        exported_program: Any,
        input_names: Optional[Sequence[str]] = None,
        output_names: Optional[Sequence[str]] = None,
        state_names: Optional[Sequence[str]] = None,
        entrypoint_name: str = "main",
    ) -> "TorchConverter":
        """Stage an exported (and decomposed) program.  Returns ``self``."""
        if not hasattr(exported_program, "graph_module") or not hasattr(exported_program, "graph_signature"):
            raise TypeError(
                "add_exported_program expects a torch.export.ExportedProgram (torch.export.export(...)"
                f".run_decompositions(get_decomp_table())), got {type(exported_program).__name__}")
        self._stage(_Staged(exported_program, _check_names("input_names", input_names),
                            _check_names("output_names", output_names), _check_names("state_names", state_names),
                            entrypoint_name, {}))
        return self

    def add_pytorch_module(
        self,
        module: torch.nn.Module,
        export_fn: Callable[[torch.nn.Module], Any],
        externalize_modules: Optional[list] = None,
        input_names: Optional[Sequence[str]] = None,
        output_names: Optional[Sequence[str]] = None,
        state_names: Optional[Sequence[str]] = None,
        entrypoint_name: str = "main",
    ) -> "TorchConverter":
        """Stage ``export_fn(module)``; with ``externalize_modules`` (a list of
        ``ExternalizeSpec`` or bare classes), matching submodules keep their
        boundary as separate graphs.  Returns ``self``."""
        if not isinstance(module, torch.nn.Module):
            raise TypeError(f"add_pytorch_module expects an nn.Module, got {type(module).__name__}")
        if not callable(export_fn):
            raise TypeError("export_fn must be callable: module -> ExportedProgram")
        if entrypoint_name in self._staged:
            raise ValueError(
                f"entrypoint name '{entrypoint_name}' is already used by a staged program; entrypoint names "
                "must be unique")
        names = (_check_names("input_names", input_names), _check_names("output_names", output_names),
                 _check_names("state_names", state_names))
        # nn.RNN/GRU/LSTM become chains of rnn/gru/lstm composites (_recurrent.py)
        recurrent_specs, undo_recurrent = patch_recurrent(module)
        try:
            externalizer = Externalizer(module, list(externalize_modules or []) + recurrent_specs)
            if externalizer.specs:
                externalizer.mark()
        except BaseException:
            undo_recurrent()
            raise
        try:
            ep = export_fn(module)
            if not hasattr(ep, "graph_module"):
                raise TypeError(f"export_fn must return an ExportedProgram, got {type(ep).__name__}")
            subs: Dict[str, SubProgram] = {}
            if externalizer.marked:
                # export_fn's table is not recorded in the program: the
                # sub-exports use the converter's own
                subs = externalizer.sub_export(ep, get_decomp_table())
        finally:
            externalizer.restore()
            undo_recurrent()
        self._stage(_Staged(ep, names[0], names[1], names[2], entrypoint_name, subs))
        return self

    def clear(self, *, entrypoints: Optional[Sequence[str]] = None) -> None:
        """Remove staged programs (all, or those with these entrypoint names).
        Custom lowerings and kernels are kept."""
        if entrypoints is None:
            self._staged.clear()
            return
        for name in entrypoints:
            self._staged.pop(name, None)

    # -- registration ----------------------------------------------------------------
    def register_torch_lowering(self, qualified_name: str, allow_override: bool = False) -> Callable:
        """Decorator registering ``fn(values_map, node, loc)`` as the lowering of
        the op ``"namespace::op_name[.overload]"``."""
        if not isinstance(qualified_name, str) or not _QUALIFIED.match(qualified_name):
            raise ValueError(
                f"register_torch_lowering: {qualified_name!r} is not of the form 'namespace::op_name' "
                "(optionally with '.overload')")
        namespace = qualified_name.split("::", 1)[0]
        if namespace in _RESERVED_NAMESPACES and not allow_override:
            raise ValueError(
                f"register_torch_lowering: namespace '{namespace}' is reserved ({', '.join(_RESERVED_NAMESPACES)}); "
                "pass allow_override=True to replace a built-in lowering")
        if qualified_name in self._lowerings and not allow_override:
            raise ValueError(
                f"register_torch_lowering: a lowering for '{qualified_name}' is already registered; "
                "pass allow_override=True to replace it")

        def deco(fn: Callable) -> Callable:
            if not callable(fn):
                raise TypeError("register_torch_lowering decorates a function (values_map, node, loc)")
            self._lowerings[qualified_name] = fn
            return fn

        return deco

    def register_custom_kernels(self, kernels: Sequence[TorchMetalKernel]) -> "TorchConverter":
        """Make calls of these ``TorchMetalKernel`` objects convertible
        (lowered to ``coreai.elementwise_kernel``).  Returns ``self``."""
        if isinstance(kernels, TorchMetalKernel):
            kernels = [kernels]
        for k in kernels:
            if not isinstance(k, TorchMetalKernel):
                raise TypeError(f"register_custom_kernels expects TorchMetalKernel objects, got {type(k).__name__}")
            self._kernels[k.qualified_name] = k
        return self

    # -- conversion ----------------------------------------------------------------
    def to_coreai(self, *, entrypoints: Optional[Sequence[str]] = None) -> AIProgram:
        """Convert the staged programs (all, or those named) into an ``AIProgram``."""
        if not self._staged:
            raise ValueError("no program is staged: call add_exported_program() or add_pytorch_module() first")
        if entrypoints is None:
            selected = list(self._staged.values())
        else:
            unknown = [e for e in entrypoints if e not in self._staged]
            if unknown:
                raise ValueError(f"unknown entrypoint(s) {unknown}; staged: {list(self._staged)}")
            selected = [self._staged[e] for e in entrypoints]
        module = ir.Module()
        ctx = LoweringContext(self, module)
        for staged in selected:
            self._convert_entry(ctx, staged)
        return AIProgram(module)

    # -- one entrypoint ---------------------------------------------------------------
    def _convert_entry(self, ctx: LoweringContext, staged: _Staged) -> None:
        view = _ProgramView(staged.program)
        ctx.subprograms.update(staged.subprograms)
        mutated_buffers = {o.target: o for o in view.outputs if o.kind == BUFFER_MUTATION}
        mutated_inputs = {o.target: o for o in view.outputs if o.kind == USER_INPUT_MUTATION}
        states: List[_Input] = [s for s in view.inputs if s.kind == BUFFER and s.target in mutated_buffers]
        states += [s for s in view.inputs if s.kind == USER_INPUT and s.target in mutated_inputs]
        plain_inputs = [s for s in view.inputs if s.kind == USER_INPUT and s.target not in mutated_inputs]
        if len(states) != len(mutated_buffers) + len(mutated_inputs):
            raise ValueError("graph signature: mutation outputs do not match buffer/user inputs")

        state_names = staged.state_names or [s.name if s.kind == BUFFER else s.target for s in states]
        input_names = staged.input_names or [s.target for s in plain_inputs]
        if len(state_names) != len(states):
            raise ValueError(f"state_names has {len(state_names)} names but the program has {len(states)} states "
                             f"({[s.target for s in states]})")
        if len(input_names) != len(plain_inputs):
            raise ValueError(f"input_names has {len(input_names)} names but the program has {len(plain_inputs)} "
                             f"non-state inputs ({[s.name for s in plain_inputs]})")
        user_outputs = [o for o in view.outputs if o.kind == USER_OUTPUT]
        out_nodes = view.output_nodes()
        if staged.output_names is not None:
            output_names = staged.output_names
            if len(output_names) != len(user_outputs):
                raise ValueError(f"output_names has {len(output_names)} names but the program has "
                                 f"{len(user_outputs)} outputs")
        else:
            output_names = []
            taken = set(state_names) | set(input_names)
            for o in user_outputs:
                base = o.name
                name, i = base, 1
                while name in taken:
                    name = f"{base}_{i}"
                    i += 1
                taken.add(name)
                output_names.append(name)
        all_names = list(state_names) + list(input_names) + list(output_names)
        if len(set(all_names)) != len(all_names):
            raise ValueError(f"entrypoint '{staged.entrypoint_name}': names must be unique across states, "
                             f"inputs and outputs, got {all_names}")

        placeholders = {n.name: n for n in view.placeholders()}
        io = list(zip(states, state_names)) + list(zip(plain_inputs, input_names))
        try:
            table = _symbolic.ExportSymbols(staged.program, [(name, placeholders[spec.name]) for spec, name in io],
                                            ctx.symbols)
        except _symbolic.SymbolicShapeError as e:
            raise UnsupportedOpError(f"entrypoint '{staged.entrypoint_name}': {e}") from None
        with _symbolic.active(table):
            self._convert_entry_body(ctx, staged, view, states, state_names, plain_inputs, input_names,
                                     output_names, placeholders, table)

    def _convert_entry_body(self, ctx, staged, view, states, state_names, plain_inputs, input_names, output_names,
                            placeholders, table) -> None:
        for s in table.map.values():
            ctx.module.add_symbol(s)
        graph = ir.Graph(ctx.unique_graph_name(staged.entrypoint_name))
        vm = ValuesMap(ctx)
        for spec, name in list(zip(states, state_names)) + list(zip(plain_inputs, input_names)):
            shape, dt = node_meta(placeholders[spec.name])
            if dt in _INEXACT_DTYPES:
                raise UnsupportedOpError(
                    f"{'state' if spec in states else 'input'} '{name}' is {dt}, which model format v1 cannot "
                    f"carry ({_INEXACT_DTYPES[dt]}); convert the model with {_INEXACT_HINT[dt]} inputs")
            vm[spec.name] = graph.add_argument(ir.TensorType(shape, ir_dtype(dt)), name)
        for spec in view.inputs:
            if spec.name in vm:
                continue
            if spec.kind in (PARAMETER, BUFFER, CONSTANT):
                tensor = view.tensor_for(spec)
                vm.lazy[spec.name] = (lambda t=tensor: _constant_from_tensor(t))
                vm.params.add(spec.name)
                vm.tensors[spec.name] = tensor
            else:
                raise ValueError(f"unsupported graph input kind {spec.kind} ({spec.name})")

        with ir.InsertionPoint(graph):
            self._lower_graph(ctx, view, vm)
            results = []
            out_by_index = list(zip(view.outputs, view.output_nodes()))
            for spec in states:
                kind = BUFFER_MUTATION if spec.kind == BUFFER else USER_INPUT_MUTATION
                idx = next(i for i, (o, _) in enumerate(out_by_index) if o.kind == kind and o.target == spec.target)
                results.append(self._output_value(vm, out_by_index[idx][1], graph))
            for o, node in out_by_index:
                if o.kind == USER_OUTPUT:
                    results.append(self._output_value(vm, node, graph))
        graph.set_outputs(results)
        for spec, v in zip(states, results[:len(states)]):
            arg = vm[spec.name]
            if arg.type != v.type:
                raise ValueError(f"state '{spec.target}': update type {v.type} differs from the state's {arg.type}")
        ctx.module.add_graph(graph)
        initial = {}
        for spec, name in zip(states, state_names):
            if spec.kind == BUFFER:
                t = view.tensor_for(spec)
            else:
                t = view.example_user_inputs.get(spec.target)
            if t is not None:
                initial[name] = _initial_array(t)
        ctx.module.add_entrypoint(staged.entrypoint_name, graph, states=list(state_names),
                                  inputs=list(input_names), outputs=list(output_names), initial_states=initial)

    def _output_value(self, vm: ValuesMap, node: Any, graph: ir.Graph) -> "ir.Value":
        if isinstance(node, fx.Node):
            v = vm[node.name]
            if not isinstance(v, ir.Value):
                raise ValueError(f"output '{node.name}' is not a tensor")
            return v
        if isinstance(node, (int, float, bool)):
            return coreai.constant(node)
        raise ValueError(f"unsupported output {node!r}")

    # -- graph lowering -----------------------------------------------------------------
    def _lower_graph(self, ctx: LoweringContext, view: Any, vm: ValuesMap) -> None:
        params = vm.params
        for node in view.graph.nodes:
            if node.op in ("placeholder", "output"):
                continue
            if node.op == "get_attr":
                vm.folded[node.name] = _fetch(view.graph_module, node.target)
                continue
            if node.op != "call_function":
                raise UnsupportedOpError(f"unsupported FX node {node.format_node()} ({node.op})")
            if not node.users:
                continue  # dead (e.g. the unused results of a multi-result op)
            val = node.meta.get("val")
            if isinstance(val, (torch.SymInt, torch.SymBool)) or (
                    isinstance(val, (int, bool)) and not isinstance(val, torch.Tensor)
                    and qualified_name(node.target) in _SIZE_OPS):
                # a size (sym_size, arithmetic on sizes): its expression, which
                # lowerings read as an int or ir.Dim; a SymBool only feeds
                # _assert_scalar checks, which the entrypoint's own range
                # checks make at run time
                if isinstance(val, (torch.SymInt, int)) and not isinstance(val, bool):
                    try:
                        vm[node.name] = _symbolic.extent(val, f"{_where(node)}size '{node.name}'")
                    except _symbolic.SymbolicShapeError as e:
                        raise UnsupportedOpError(f"{_where(node)}{e}") from None
                continue
            if self._try_fold(vm, node, params):
                continue
            _refuse_inexact_dtypes(node)
            loc = ir.Location.name(_location_text(node))
            result = self._lower_node(ctx, vm, node, loc)
            _check_lowered_types(node, result)
            self._store(vm, node, result)

    def _store(self, vm: ValuesMap, node: fx.Node, result: Any) -> None:
        if result is None:
            return
        if isinstance(result, (list, tuple)):
            for i, r in enumerate(result):
                if r is not None:
                    vm[f"{node.name}#{i}"] = r
            return
        vm[node.name] = result

    def _lookup(self, name: str) -> Optional[Callable]:
        if name in self._lowerings:
            return self._lowerings[name]
        base = name.rsplit(".", 1)[0] if "." in name.split("::")[-1] else name
        if base in self._lowerings:
            return self._lowerings[base]
        if name in self._kernels:
            return self._kernel_lowering(self._kernels[name])
        if name in COMPRESSION_LOWERINGS:
            return COMPRESSION_LOWERINGS[name]
        return LOWERINGS.get(name)

    def _lower_node(self, ctx: LoweringContext, vm: ValuesMap, node: fx.Node, loc) -> Any:
        if node.target in _AUTO_FUNCTIONALIZED:
            try:
                outs, name = lower_auto_functionalized(self._lookup, qualified_name, vm, node, loc)
            except NotImplementedError as e:
                raise UnsupportedOpError(f"{_where(node)}{e}") from e
            if outs is None:
                raise UnsupportedOpError(
                    f"{_where(node)}no lowering for the mutating op '{name}' (node '{node.name}'); register one "
                    "with TorchConverter.register_torch_lowering() returning its results and then the new value "
                    "of each mutated argument")
            return outs
        name = qualified_name(node.target)
        ext = externalized_op_name(node)
        if ext is not None and name not in self._lowerings:
            return self._lower_externalized(ctx, vm, node, ext, loc)
        fn = self._lookup(name)
        if fn is None:
            path = module_path_of(node)
            where = f" in module '{path}'" if path else " at the top level of the model"
            stack = node.meta.get("nn_module_stack") or {}
            cls = list(stack.values())[-1][1] if stack else None
            cls_text = f" ({cls})" if cls else ""
            hint = ""
            if name.startswith("coreai_kernels::"):
                hint = "; register the TorchMetalKernel with converter.register_custom_kernels([...])"
            else:
                hint = "; register one with TorchConverter.register_torch_lowering()"
            raise UnsupportedOpError(
                f"{_where(node)}no lowering for op '{name}' (node '{node.name}'){where}{cls_text}{hint}")
        try:
            if fn is LOWERINGS.get(name) and name not in _DTYPE_AGNOSTIC and _touches_half(node):
                return _lower_in_f32(fn, vm, node, loc)
            return fn(vm, node, loc)
        except UnsupportedOpError:
            raise
        except (NotImplementedError, SymbolicExtentError) as e:
            # a symbolic extent where the lowering needs a fixed number
            path = module_path_of(node)
            raise UnsupportedOpError(
                f"{_where(node)}op '{name}' (node '{node.name}') in module '{path or '<root>'}': {e}") from e

    # constant folding of tensor-free subgraphs --------------------------------------------
    _NO_FOLD = ("rand", "randn", "randint", "normal", "uniform", "bernoulli", "dropout", "empty")

    def _try_fold(self, vm: ValuesMap, node: fx.Node, params: set) -> bool:
        target = node.target
        if target is operator.getitem:
            src = node.args[0]
            if isinstance(src, fx.Node) and src.name in vm.folded:
                vm.folded[node.name] = vm.folded[src.name][node.args[1]]
                return True
            return False
        name = qualified_name(target)
        if not name.startswith("aten::") or name in self._lowerings or name.split(".")[0] in self._lowerings:
            return False
        if any(k in name for k in self._NO_FOLD):
            return False
        ok = True

        def check(a):
            nonlocal ok
            if isinstance(a, fx.Node):
                if a.name not in vm.folded or a.name in params:
                    ok = False
            return a

        fx.node.map_aggregate(node.args, check)
        fx.node.map_aggregate(node.kwargs, check)
        if not ok:
            return False
        args = fx.node.map_aggregate(node.args, lambda a: vm.folded[a.name] if isinstance(a, fx.Node) else a)
        kwargs = fx.node.map_aggregate(node.kwargs, lambda a: vm.folded[a.name] if isinstance(a, fx.Node) else a)
        try:
            with torch.no_grad():
                value = target(*args, **kwargs)
        except Exception:  # noqa: BLE001 - leave it to the lowering
            return False
        if isinstance(value, torch.Tensor) and value.numel() > (1 << 20):
            return False
        vm.folded[node.name] = value
        return True

    # externalized submodules ---------------------------------------------------------------
    def _lower_externalized(self, ctx: LoweringContext, vm: ValuesMap, node: fx.Node, op: str, loc) -> Any:
        sub = ctx.subprograms.get(op)
        if sub is None:
            raise UnsupportedOpError(
                f"node '{node.name}' calls externalized op '{op}' but no sub-export was recorded for it "
                "(externalization needs add_pytorch_module)")
        args = list(node.args)
        if not sub.state_as_inputs:
            args = args[len(sub.signature.state_names):]
        operands = [vm[a.name] if isinstance(a, fx.Node) else a for a in args]
        graph = self._externalized_graph(ctx, sub)
        for i, (o, a) in enumerate(zip(operands, graph.arguments)):
            if isinstance(o, ir.Value) and o.type != a.type and o.type.shape == a.type.shape:
                operands[i] = coreai.cast(o, a.type.element_type, loc=loc)
        results = coreai.invoke(graph, operands, loc=loc)
        meta = sub.signature.out_meta
        if sub.signature.widened and meta is not None and len(meta) == len(results):
            # the composite ran on f32 copies of f16/bf16 operands: back to the caller's dtypes
            results = [coreai.cast(r, ir_dtype(dt), loc=loc) if ir_dtype(dt) is not r.type.element_type else r
                       for r, (_, dt) in zip(results, meta)]
        return results

    def _externalized_graph(self, ctx: LoweringContext, sub: SubProgram) -> ir.Graph:
        key = (sub.signature.op_name,)
        graph = ctx.externalized.get(key)
        if graph is not None:
            return graph
        view = _ProgramView(sub.program)
        spec = sub.spec
        composite = None
        if spec.composite_op_name:
            attrs = sub.composite_attrs()
            composite = ir.CompositeDecl(spec.composite_op_name, sub.input_names, sub.output_names,
                                         {k: ir_attr(v) for k, v in attrs.items()})
        # The final name is chosen once the body is known (see below).
        base = sub.graph_name()
        name = base
        graph = ir.Graph(name, private=composite is not None, noinline=True, composite=composite)
        vm = ValuesMap(ctx)
        placeholders = [p for p in view.placeholders() if p.name not in view.skipped]
        n_state = len(sub.signature.state_names)
        if len(placeholders) != n_state + len(sub.signature.arg_names):
            raise AssertionError(f"externalized graph {name}: {len(placeholders)} placeholders for "
                                 f"{sub.signature.state_names + sub.signature.arg_names}")
        if not sub.state_as_inputs:
            # simple externalization: the instance's own state is constant inside its graph
            for node, spec in zip(placeholders[:n_state], view.inputs[:n_state]):
                vm.lazy[node.name] = (lambda t=view.tensor_for(spec): _constant_from_tensor(t))
                vm.tensors[node.name] = view.tensor_for(spec)
                vm.params.add(node.name)
            placeholders = placeholders[n_state:]
        outer = ctx.in_composite_body
        # the user chose this boundary: its body stays as written (no pattern
        # inside it becomes a composite, as the externalization guide shows)
        ctx.in_composite_body = True
        try:
            with _symbolic.active(self._sub_symbols(ctx, sub, placeholders)):
                for node, arg_name in zip(placeholders, sub.input_names):
                    shape, dt = node_meta(node)
                    vm[node.name] = graph.add_argument(ir.TensorType(shape, ir_dtype(dt)), arg_name)
                with ir.InsertionPoint(graph):
                    self._lower_graph(ctx, view, vm)
                    outs = [self._output_value(vm, n, graph)
                            for o, n in zip(view.outputs, view.output_nodes()) if o.kind == USER_OUTPUT]
        finally:
            ctx.in_composite_body = outer
        graph.set_outputs(outs)
        # The same submodule converted again with the same body, types and
        # declaration (e.g. called twice with the same signature from
        # different nodes, or in two entrypoints) shares its graph; other
        # instances keep their own graph, named by their module path.
        signature = base + "\n" + _graph_signature(graph)
        same = ctx.by_signature.get(signature)
        if same is not None:
            ctx.externalized[key] = same
            return same
        if ctx.module.find_graph(base) is not None:
            # Another signature of this instance (other input shapes, dtypes
            # or None optionals, or other static arguments) already has the
            # plain name: this one is told apart by a hash of its signature.
            sig_hash = signature_hash([(a.name, str(a.type)) for a in graph.arguments],
                                      [str(o.type) for o in outs], sub.signature.static)
            graph.name = ctx.unique_graph_name(f"{base}_{sig_hash}")
        ctx.module.add_graph(graph)
        ctx.externalized[key] = graph
        ctx.by_signature[signature] = graph
        return graph

    @staticmethod
    def _sub_symbols(ctx: LoweringContext, sub: SubProgram, placeholders) -> Optional["_symbolic.ExportSymbols"]:
        """The symbols of a sub-export (a composite op exported with the
        enclosing program's dynamic sizes, externalize.py), each the
        entrypoint's symbol of the same name: a composite graph may use only
        the symbols of the entrypoints that call it."""
        outer = _symbolic.current()
        try:
            table = _symbolic.ExportSymbols(sub.program, list(zip(sub.input_names, placeholders)), {})
        except _symbolic.SymbolicShapeError as e:
            raise UnsupportedOpError(f"externalized module '{sub.path()}': {e}") from None
        if not table.map:
            return outer
        for sym, s in list(table.map.items()):
            mine = ctx.symbols.get(s.name)
            if mine is None:
                raise UnsupportedOpError(
                    f"externalized module '{sub.path()}': its size '{s.name}' is not a size of the entrypoint's "
                    "inputs")
            table.map[sym] = mine
        return table

    # custom kernels ----------------------------------------------------------------------------
    def _kernel_lowering(self, kernel: TorchMetalKernel) -> Callable:
        def lower(values_map, node, loc):
            inputs = [values_map[a.name] if isinstance(a, fx.Node) else a for a in node.args]
            for i, v in enumerate(inputs):
                if not isinstance(v, ir.Value):
                    raise ValueError(f"TorchMetalKernel '{kernel.name}': input {i} is not a tensor")
            dtypes = {}
            examples = []
            for n, a in zip(kernel.input_names, node.args):
                shape, dt = node_meta(a)
                dtypes[n] = dt
                examples.append(torch.zeros(shape, dtype=dt))
            with torch.no_grad():
                out = kernel.torch_defn(*examples)
            outs = [out] if isinstance(out, torch.Tensor) else list(out)
            result_types = [ir.TensorType(tuple(o.shape), ir_dtype(o.dtype)) for o in outs]
            results = coreai.elementwise_kernel(inputs, kernel.name, kernel.c_source(dtypes), kernel.input_names,
                                                kernel.result_names, result_types, loc=loc)
            return results[0] if len(results) == 1 else results

        return lower


# ---------------------------------------------------------------------------
# f16 / bf16: computed in f32 (model format v1 arithmetic is f32-only)
# ---------------------------------------------------------------------------

_HALF = (torch.float16, torch.bfloat16)
# lowerings that only move data (or cast), valid for every dtype
_DTYPE_AGNOSTIC = {
    name for name in LOWERINGS
    if name.split("::")[-1].split(".")[0].replace("_copy", "") in {
        "getitem", "clone", "alias", "detach", "lift_fresh_copy", "lift_fresh", "lift", "contiguous",
        "_to_copy", "to", "type_as", "copy", "view", "_unsafe_view", "reshape", "_reshape_alias", "squeeze",
        "unsqueeze", "flatten", "view_as", "permute", "t", "numpy_T", "transpose", "expand", "expand_as",
        "broadcast_to", "slice", "select", "cat", "concat", "stack", "split", "split_with_sizes", "unbind",
        "flip", "roll", "repeat", "tile", "index_select", "embedding", "index", "where", "masked_fill",
        "zeros_like", "ones_like", "empty_like", "full_like", "new_zeros", "new_ones", "new_full", "new_empty",
        "fill", "full", "zeros", "ones", "empty", "scalar_tensor", "dropout", "native_dropout",
        "feature_dropout", "slice_scatter", "select_scatter", "pixel_shuffle", "pixel_unshuffle",
        "_local_scalar_dense",
    }
}


def _node_dtypes(node: fx.Node) -> List[torch.dtype]:
    out = []
    tm = node.meta.get("tensor_meta")
    if tm is not None and hasattr(tm, "dtype"):
        out.append(tm.dtype)
    for user in node.users:
        if user.target is operator.getitem:
            um = user.meta.get("tensor_meta")
            if um is not None and hasattr(um, "dtype"):
                out.append(um.dtype)
    return out


def _touches_half(node: fx.Node) -> bool:
    found = False

    def visit(a):
        nonlocal found
        if isinstance(a, fx.Node) and any(d in _HALF for d in _node_dtypes(a)[:1]):
            found = True
        return a

    fx.node.map_aggregate(node.args, visit)
    fx.node.map_aggregate(node.kwargs, visit)
    return found or any(d in _HALF for d in _node_dtypes(node))


class _F32Map(dict):
    """A values map view that hands out f16/bf16 values cast to f32."""

    def __init__(self, base: ValuesMap, loc):
        super().__init__()
        self.base = base
        self.ctx = base.ctx
        self.loc = loc

    def __missing__(self, key):
        v = self.base[key]
        if isinstance(v, ir.Value) and v.type.element_type in (ir.f16, ir.bf16):
            v = coreai.cast(v, ir.f32, loc=self.loc)
        self[key] = v
        return v

    def __contains__(self, key):
        return dict.__contains__(self, key) or key in self.base


def _lower_in_f32(fn: Callable, vm: ValuesMap, node: fx.Node, loc) -> Any:
    """Run a float-only lowering on f32 copies of f16/bf16 operands (node
    metadata says f32 meanwhile) and cast the results back."""
    patched = []

    def patch(n: fx.Node):
        for m in [n] + [u for u in n.users if u.target is operator.getitem]:
            tm = m.meta.get("tensor_meta")
            if tm is not None and hasattr(tm, "dtype") and tm.dtype in _HALF:
                patched.append((m, tm, m.meta.get("val")))
                m.meta["tensor_meta"] = tm._replace(dtype=torch.float32)
                if isinstance(m.meta.get("val"), torch.Tensor):
                    m.meta["val"] = torch.empty(tuple(tm.shape), dtype=torch.float32, device="meta")

    def visit(a):
        if isinstance(a, fx.Node):
            patch(a)
        return a

    fx.node.map_aggregate(node.args, visit)
    fx.node.map_aggregate(node.kwargs, visit)
    patch(node)
    originals = {id(m): tm.dtype for m, tm, _ in patched}
    try:
        result = fn(_F32Map(vm, loc), node, loc)
    finally:
        for m, tm, val in patched:
            m.meta["tensor_meta"] = tm
            if val is not None:
                m.meta["val"] = val

    def back(v, target):
        if isinstance(v, ir.Value) and target in _HALF and v.type.element_type is ir.f32:
            return coreai.cast(v, ir_dtype(target), loc=loc)
        return v

    if isinstance(result, (list, tuple)):
        getitems = {u.args[1]: u for u in node.users if u.target is operator.getitem}
        out = []
        for i, v in enumerate(result):
            g = getitems.get(i)
            out.append(back(v, originals.get(id(g))) if g is not None else v)
        return out
    return back(result, originals.get(id(node)))


def _graph_signature(graph: ir.Graph) -> str:
    text = str(graph)
    return text.replace(f"@{graph.name}(", "@(", 1)


def _initial_array(t: torch.Tensor) -> np.ndarray:
    t = t.detach().cpu()
    if t.dtype == torch.float64:
        t = t.to(torch.float32)
    if t.dtype == torch.bfloat16:
        from coreai.runtime import NDArray

        return NDArray(t).numpy_storage()
    if t.dtype in (torch.int8, torch.int16, torch.uint8):
        t = t.to(torch.int32)
    return t.numpy().copy()


def _fetch(root: torch.nn.Module, target: str):
    obj = root
    for atom in target.split("."):
        obj = getattr(obj, atom)
    return obj


# dtypes model format v1 has no exact equivalent for: computing in them would
# silently give other numbers (i32 does not wrap at 8/16 bits, f32 rounds f64)
_INEXACT_DTYPES = {
    torch.float64: "it has no f64 arithmetic",
    torch.uint8: "i32 does not wrap around at 8 bits",
    torch.int8: "i32 does not wrap around at 8 bits",
    torch.int16: "i32 does not wrap around at 16 bits",
}
_INEXACT_HINT = {torch.float64: "float32", torch.uint8: "int32", torch.int8: "int32", torch.int16: "int32"}


def _refuse_inexact_dtypes(node: fx.Node) -> None:
    if qualified_name(node.target) in COMPRESSION_OPS:
        return  # int8 / uint8 quantized data are exact (model format i8 / u8)
    val = node.meta.get("val")
    vals = val if isinstance(val, (tuple, list)) else [val]
    for v in vals:
        if isinstance(v, torch.Tensor) and v.dtype in _INEXACT_DTYPES:
            raise UnsupportedOpError(
                f"{_where(node)}op '{qualified_name(node.target)}' (node '{node.name}', module "
                f"'{module_path_of(node) or '<root>'}') computes in {v.dtype}, which model format v1 cannot carry "
                f"exactly ({_INEXACT_DTYPES[v.dtype]}); use {_INEXACT_HINT[v.dtype]} in the model")


_EXACT_BYTES = {torch.int8: ir.i8, torch.uint8: ir.u8}


def _check_lowered_types(node: fx.Node, result: Any) -> None:
    """Every lowered value has the shape and dtype torch.export recorded for
    the node: a lowering that gets either wrong fails here, at its node,
    not as wrong numbers later."""
    val = node.meta.get("val")
    pairs = []
    if isinstance(result, ir.Value) and isinstance(val, torch.Tensor):
        pairs = [(result, val)]
    elif isinstance(result, (list, tuple)) and isinstance(val, (list, tuple)):
        pairs = [(r, v) for r, v in zip(result, val) if isinstance(r, ir.Value) and isinstance(v, torch.Tensor)]
    for i, (r, v) in enumerate(pairs):
        want = ir.TensorType(tuple(_symbolic.extent(d) for d in v.shape), ir_dtype(v.dtype))
        if v.dtype in _EXACT_BYTES and r.type.element_type is _EXACT_BYTES[v.dtype]:
            want = want.with_element_type(r.type.element_type)  # quantized data kept as i8 / u8
        if r.type != want:
            which = f" result {i}" if len(pairs) > 1 else ""
            raise AssertionError(
                f"{_where(node)}the lowering of '{qualified_name(node.target)}' (node '{node.name}'){which} gave "
                f"{r.type}; torch.export recorded {want}")


# ops whose result is a size, never a tensor (their value is its expression)
_SIZE_OPS = {"aten::sym_size.int", "aten::sym_numel.default", "add", "sub", "mul", "floordiv", "neg"}


def _where(node: fx.Node) -> str:
    line = source_line_of(node)
    return f"{line}: " if line else ""


def _location_text(node: fx.Node) -> str:
    path = module_path_of(node)
    return f"{path}/{node.name}" if path else node.name


# ---------------------------------------------------------------------------
# generate_composite_decl
# ---------------------------------------------------------------------------


def generate_composite_decl(context: Any, op_name: str, input_names: Sequence[str], output_names: Sequence[str],
                            op_attributes: Dict[str, Any], version: Optional[int] = None) -> "ir.CompositeDecl":
    """The composite declaration of a graph that a custom lowering builds.

    ``context`` is accepted for API compatibility and ignored (this Core AI
    has no context object; pass ``None``, a Value, anything).
    ``op_attributes`` are typed like composite attributes (bool, int ->
    si64, float -> f32, str, list of ints -> si64[], list of floats ->
    f32[]).  ``version``: the declaration always carries a ``version``
    attribute: the ``version`` argument when given, else
    ``op_attributes["version"]``, else ``1``.  The caller's dict is not
    modified.  Returns an ``ir.CompositeDecl``; build the graph with
    ``ir.Graph(name, private=True, noinline=True, composite=decl)``, add it
    with ``values_map.ctx.module.add_graph(graph)`` and call it with
    ``coreai.invoke(graph, operands)``.
    """
    if isinstance(input_names, str) or isinstance(output_names, str):
        raise ValueError("generate_composite_decl: input_names and output_names must be lists of names")
    for n in list(input_names) + list(output_names):
        if not isinstance(n, str):
            raise ValueError(f"generate_composite_decl: names must be strings, got {n!r}")
    attrs = dict(op_attributes or {})
    if version is not None:
        attrs["version"] = version
    attrs.setdefault("version", 1)
    return ir.CompositeDecl(op_name, list(input_names), list(output_names), {k: ir_attr(v) for k, v in attrs.items()})
