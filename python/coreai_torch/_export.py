"""``coreai_torch.export``: an ``ExportedProgram`` stand-in for PyTorch 1.13.

PyTorch 1.13 has no ``torch.export``.  This module captures the same thing the
converter needs from one: a functional ATen-level ``torch.fx`` graph whose
placeholders are the module's parameters, buffers and the user inputs, plus a
graph signature telling which placeholder is what and which outputs are
in-place updates of buffers or of user inputs.

How the graph is captured
-------------------------
``make_fx`` (real tensors, ``torch.fx.experimental.proxy_tensor``) traces

    functionalize(lambda *params_buffers_inputs: module(*user_args))

with the module's parameters and buffers swapped, for the call, for the
traced placeholder tensors (``swap_tensors``: the ``_parameters`` /
``_buffers`` entries are replaced by identity, tied ones included, and put
back afterwards; this is ``functional_call`` in effect, but nestable, which
externalization needs), under ``torch.no_grad()``, on detached clones of the
parameters, buffers and inputs (so tracing never changes the caller's module
or tensors).
``functionalize(remove="mutations")`` turns every in-place update of an input
(a buffer or a user argument) into an out-of-place op followed by a trailing
``aten.copy_(input, new_value)``.  Those trailing copies are removed from the
graph and their sources become extra graph outputs, ahead of the user outputs,
exactly like ``torch.export`` does:

    outputs = [buffer mutations (placeholder order),
               user-input mutations (placeholder order),
               user outputs (pytree-flattened return value)]

Placeholders are renamed the way ``torch.export`` names them: ``p_<param>``,
``b_<buffer>`` (dots become underscores) and the ``forward()`` argument name
for user inputs.  Every node gets ``meta["tensor_meta"]``, ``meta["val"]`` (a
``meta``-device tensor of the same shape and dtype) and
``meta["nn_module_stack"]`` (``{path: (path, class qualname)}`` of the
submodules whose ``forward`` was running when the node was created; recorded
with global module forward hooks).

``ExportedProgram.run_decompositions(table)`` re-traces the captured graph
with ``make_fx(..., decomposition_table=table)``: op overloads in ``table``
are replaced by their decompositions, node metadata is carried over.

If ``torch.export`` exists (PyTorch >= 2.1) the converter also accepts real
``torch.export.ExportedProgram`` objects; see ``_program_view``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import threading
from collections import OrderedDict
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch
import torch.fx as fx
import torch.utils._pytree as pytree
from torch.fx.experimental import proxy_tensor

try:  # functorch ships with torch 1.13
    from functorch.experimental import functionalize as _functionalize
except Exception:  # pragma: no cover - newer torch
    try:
        from torch.func import functionalize as _functionalize  # type: ignore
    except Exception:  # pragma: no cover
        _functionalize = None

__all__ = [
    "export",
    "ExportedProgram",
    "ExportGraphSignature",
    "InputSpec",
    "OutputSpec",
]


# ---------------------------------------------------------------------------
# Graph signature
# ---------------------------------------------------------------------------

# Input kinds (same spelling as torch.export.graph_signature.InputKind names).
USER_INPUT = "USER_INPUT"
PARAMETER = "PARAMETER"
BUFFER = "BUFFER"
# Output kinds.
USER_OUTPUT = "USER_OUTPUT"
BUFFER_MUTATION = "BUFFER_MUTATION"
USER_INPUT_MUTATION = "USER_INPUT_MUTATION"


@dataclasses.dataclass
class InputSpec:
    """One placeholder of the graph.

    ``name`` is the placeholder's node name, ``target`` the state-dict key
    (parameters and buffers) or the ``forward()`` argument name (user inputs).
    """

    kind: str
    name: str
    target: str
    persistent: Optional[bool] = None


@dataclasses.dataclass
class OutputSpec:
    """One graph output: ``name`` is the producing node's name; ``target`` the
    mutated buffer's state-dict key or the mutated user input's name."""

    kind: str
    name: str
    target: Optional[str] = None


@dataclasses.dataclass
class ExportGraphSignature:
    input_specs: List[InputSpec]
    output_specs: List[OutputSpec]

    # -- the torch.export-style convenience views -------------------------
    @property
    def parameters(self) -> List[str]:
        return [s.target for s in self.input_specs if s.kind == PARAMETER]

    @property
    def buffers(self) -> List[str]:
        return [s.target for s in self.input_specs if s.kind == BUFFER]

    @property
    def user_inputs(self) -> List[str]:
        return [s.name for s in self.input_specs if s.kind == USER_INPUT]

    @property
    def user_input_targets(self) -> List[str]:
        return [s.target for s in self.input_specs if s.kind == USER_INPUT]

    @property
    def user_outputs(self) -> List[str]:
        return [s.name for s in self.output_specs if s.kind == USER_OUTPUT]

    @property
    def inputs_to_parameters(self) -> Dict[str, str]:
        return {s.name: s.target for s in self.input_specs if s.kind == PARAMETER}

    @property
    def inputs_to_buffers(self) -> Dict[str, str]:
        return {s.name: s.target for s in self.input_specs if s.kind == BUFFER}

    @property
    def buffers_to_mutate(self) -> Dict[str, str]:
        return {s.name: s.target for s in self.output_specs if s.kind == BUFFER_MUTATION}

    @property
    def user_inputs_to_mutate(self) -> Dict[str, str]:
        return {s.name: s.target for s in self.output_specs if s.kind == USER_INPUT_MUTATION}

    @property
    def mutated_buffers(self) -> List[str]:
        return [s.target for s in self.output_specs if s.kind == BUFFER_MUTATION]

    @property
    def mutated_user_inputs(self) -> List[str]:
        return [s.target for s in self.output_specs if s.kind == USER_INPUT_MUTATION]


# ---------------------------------------------------------------------------
# Module-path tracking (nn_module_stack) during tracing
# ---------------------------------------------------------------------------

_tls = threading.local()


def _current_stack() -> "OrderedDict[str, Tuple[str, str]]":
    stack = getattr(_tls, "stack", None)
    if stack is None:
        return OrderedDict()
    return OrderedDict(stack)


@contextlib.contextmanager
def _node_meta_recording():
    """While active, every node a ``make_fx`` tracer creates gets
    ``meta["nn_module_stack"]`` from the current module stack."""
    tracer_cls = proxy_tensor.PythonKeyTracer
    had_own = "create_node" in tracer_cls.__dict__
    original = tracer_cls.__dict__.get("create_node")
    base_create = tracer_cls.create_node

    def create_node(self, *args, **kwargs):
        node = base_create(self, *args, **kwargs)
        stack = getattr(_tls, "stack", None)
        if stack:
            node.meta["nn_module_stack"] = OrderedDict(stack)
        override = getattr(_tls, "meta_override", None)
        if override:
            for key, value in override.items():
                node.meta.setdefault(key, value)
        return node

    tracer_cls.create_node = create_node
    try:
        yield
    finally:
        if had_own:
            tracer_cls.create_node = original
        else:
            del tracer_cls.create_node


@contextlib.contextmanager
def _module_stack_hooks(root: torch.nn.Module, prefix: str = ""):
    """Track which submodule's forward is running (global forward hooks)."""
    paths = {}
    for name, mod in root.named_modules(remove_duplicate=False):
        full = ".".join(p for p in (prefix, name) if p)
        paths.setdefault(id(mod), (full, type(mod).__qualname__))
    from torch.nn.modules import module as _module_mod

    _tls.stack = OrderedDict()

    def pre_hook(mod, args):
        entry = paths.get(id(mod))
        if entry is not None and entry[0]:
            key = entry[0]
            # A module re-entered (called twice) keeps one entry; the list of
            # (key, depth) in _tls.frames restores properly on exit.
            frames = getattr(_tls, "frames", [])
            frames.append((key, key in _tls.stack))
            _tls.frames = frames
            _tls.stack[key] = entry
        return None

    def post_hook(mod, args, out):
        entry = paths.get(id(mod))
        if entry is not None and entry[0]:
            frames = getattr(_tls, "frames", [])
            if frames:
                key, existed = frames.pop()
                if not existed:
                    _tls.stack.pop(key, None)
        return None

    h1 = _module_mod.register_module_forward_pre_hook(pre_hook)
    h2 = _module_mod.register_module_forward_hook(post_hook)
    try:
        yield
    finally:
        h1.remove()
        h2.remove()
        _tls.stack = None
        _tls.frames = []


def module_path_of(node: fx.Node) -> str:
    """The innermost module path recorded for ``node`` ('' for the root)."""
    stack = node.meta.get("nn_module_stack") or {}
    if not stack:
        return ""
    last = list(stack.values())[-1]
    if isinstance(last, tuple):
        return str(last[0])
    return str(last)


# ---------------------------------------------------------------------------
# The program object
# ---------------------------------------------------------------------------


def _sanitize(name: str) -> str:
    return name.replace(".", "_")


class ExportedProgram:
    """What ``coreai_torch.export`` returns (mimics ``torch.export.ExportedProgram``).

    Attributes: ``graph_module`` (functional ``fx.GraphModule``), ``graph``,
    ``graph_signature`` (``ExportGraphSignature``), ``state_dict`` (parameter
    and buffer values at export time, detached clones), ``constants``
    (tensors the graph reads through ``get_attr``), ``example_inputs``
    (``(args, kwargs)``), ``decomposition_table`` (the table of the last
    ``run_decompositions``, or ``None``).
    """

    def __init__(
        self,
        graph_module: fx.GraphModule,
        graph_signature: ExportGraphSignature,
        state_dict: Dict[str, torch.Tensor],
        example_inputs: Tuple[tuple, dict],
        flat_user_inputs: List[torch.Tensor],
        out_spec: Any,
        module_name: str = "",
        decomposition_table: Optional[dict] = None,
    ):
        self.graph_module = graph_module
        self.graph_signature = graph_signature
        self.state_dict = state_dict
        self.example_inputs = example_inputs
        self._flat_user_inputs = flat_user_inputs
        self._out_spec = out_spec
        self.module_name = module_name
        self.decomposition_table = decomposition_table

    # -- torch.export-like surface ----------------------------------------
    @property
    def graph(self) -> fx.Graph:
        return self.graph_module.graph

    @property
    def constants(self) -> Dict[str, torch.Tensor]:
        out = {}
        for node in self.graph.nodes:
            if node.op == "get_attr":
                out[node.target] = _fetch_attr(self.graph_module, node.target)
        return out

    def placeholder_values(self) -> List[torch.Tensor]:
        """Values for every placeholder, in order (state dict + example inputs)."""
        values = []
        user = iter(self._flat_user_inputs)
        for spec in self.graph_signature.input_specs:
            if spec.kind in (PARAMETER, BUFFER):
                values.append(self.state_dict[spec.target])
            else:
                values.append(next(user))
        return values

    def run_decompositions(self, decomp_table: Optional[dict] = None) -> "ExportedProgram":
        """Re-trace the graph with ``decomp_table`` (default: the core table of
        ``coreai_torch.get_decomp_table`` without its composite exclusions) and
        return a new program; this one is unchanged."""
        if decomp_table is None:
            from ._decomp import core_decompositions

            decomp_table = core_decompositions()
        inputs = [t.detach().clone() for t in self.placeholder_values()]
        gm = _retrace(self.graph_module, inputs, decomp_table)
        gm = _finish_graph(gm, [s.name for s in self.graph_signature.input_specs], None)
        names = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
        in_specs = [dataclasses.replace(s, name=n) for s, n in zip(self.graph_signature.input_specs, names)]
        # Keep the output names of the signature in step with the new graph.
        out_node = next(n for n in gm.graph.nodes if n.op == "output")
        flat_out = list(out_node.args[0])
        specs = []
        for spec, node in zip(self.graph_signature.output_specs, flat_out):
            specs.append(OutputSpec(spec.kind, node.name if isinstance(node, fx.Node) else str(node), spec.target))
        sig = ExportGraphSignature(in_specs, specs)
        return ExportedProgram(
            gm,
            sig,
            self.state_dict,
            self.example_inputs,
            self._flat_user_inputs,
            self._out_spec,
            self.module_name,
            decomposition_table=dict(decomp_table),
        )

    def module(self) -> Callable:
        """A callable running the captured graph (state updates are applied
        to an internal copy of the state dict, like a stateful module)."""
        program = self
        state = {k: v.clone() for k, v in self.state_dict.items()}

        def run(*args, **kwargs):
            flat_user, _ = pytree.tree_flatten((args, kwargs))
            flat_user = [a for a in flat_user if isinstance(a, torch.Tensor)]
            values = []
            user = iter(flat_user)
            for spec in program.graph_signature.input_specs:
                if spec.kind in (PARAMETER, BUFFER):
                    values.append(state[spec.target])
                else:
                    values.append(next(user))
            with torch.no_grad():
                outs = program.graph_module(*values)
            if not isinstance(outs, (tuple, list)):
                outs = (outs,)
            user_outs = []
            user_inputs = {s.target: t for s, t in zip(
                [s for s in program.graph_signature.input_specs if s.kind == USER_INPUT], flat_user)}
            for spec, value in zip(program.graph_signature.output_specs, outs):
                if spec.kind == BUFFER_MUTATION:
                    state[spec.target].copy_(value)
                elif spec.kind == USER_INPUT_MUTATION:
                    user_inputs[spec.target].copy_(value)
                else:
                    user_outs.append(value)
            return pytree.tree_unflatten(user_outs, program._out_spec)

        return run

    def __str__(self) -> str:
        return f"ExportedProgram({self.module_name or 'module'}):\n{self.graph_module.code}"

    __repr__ = __str__


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


def _fetch_attr(root: torch.nn.Module, target: str):
    obj = root
    for atom in target.split("."):
        obj = getattr(obj, atom)
    return obj


# ---------------------------------------------------------------------------
# Tracing
# ---------------------------------------------------------------------------


def _trace(fn: Callable, inputs: Sequence[torch.Tensor], decomp_table: Optional[dict]) -> fx.GraphModule:
    if _functionalize is None:  # pragma: no cover
        raise RuntimeError("coreai_torch.export needs functorch.experimental.functionalize")
    functional = _functionalize(fn, remove="mutations")
    with torch.no_grad(), _node_meta_recording():
        return proxy_tensor.make_fx(functional, decomposition_table=decomp_table or {})(*inputs)


class _MetaInterpreter(fx.Interpreter):
    """Runs a graph node by node, exposing each node's module stack (and
    other preserved metadata) to the tracer that records the re-trace."""

    def run_node(self, n):
        stack = n.meta.get("nn_module_stack")
        old_stack = getattr(_tls, "stack", None)
        old_override = getattr(_tls, "meta_override", None)
        _tls.stack = OrderedDict(stack) if stack else None
        keep = {k: n.meta[k] for k in ("coreai_externalized",) if k in n.meta}
        _tls.meta_override = keep or None
        try:
            return super().run_node(n)
        finally:
            _tls.stack = old_stack
            _tls.meta_override = old_override


def _retrace(gm: fx.GraphModule, inputs: Sequence[torch.Tensor], decomp_table: dict) -> fx.GraphModule:
    def run(*args):
        return _MetaInterpreter(gm).run(*args)

    return _trace(run, inputs, decomp_table)


def _finish_graph(
    gm: fx.GraphModule,
    placeholder_names: Sequence[str],
    mutation_sink: Optional[Dict[int, fx.Node]],
) -> fx.GraphModule:
    """Rebuild ``gm`` with named placeholders; drop trailing ``copy_`` into
    placeholders (recording them in ``mutation_sink`` by placeholder index
    when given, else they must not exist); fill in node metadata."""
    old = gm.graph
    new = fx.Graph()
    env: Dict[fx.Node, fx.Node] = {}
    placeholders = [n for n in old.nodes if n.op == "placeholder"]
    if len(placeholders) != len(placeholder_names):
        raise AssertionError("placeholder count mismatch while rebuilding the exported graph")
    ph_index = {}
    for i, (node, name) in enumerate(zip(placeholders, placeholder_names)):
        p = new.placeholder(name)
        p.meta = dict(node.meta)
        env[node] = p
        ph_index[node] = i
    copies: Dict[int, fx.Node] = {}
    output_args = None
    for node in old.nodes:
        if node.op == "placeholder":
            continue
        if node.op == "output":
            output_args = node.args[0]
            continue
        if (
            node.op == "call_function"
            and node.target is torch.ops.aten.copy_.default
            and node.args[0] in ph_index
        ):
            copies[ph_index[node.args[0]]] = node.args[1]
            continue
        env[node] = new.node_copy(node, lambda n: env[n])
        env[node].meta = dict(node.meta)

    flat_out, _ = pytree.tree_flatten(output_args)
    mapped_out = [env[o] if isinstance(o, fx.Node) else o for o in flat_out]
    extra = []
    if copies:
        if mutation_sink is None:
            raise AssertionError("unexpected input mutation in a functional graph")
        for index in sorted(copies):
            src = env[copies[index]]
            dst = env[placeholders[index]]
            src = _match_mutation_type(new, src, dst)
            mutation_sink[index] = src
    new.output(tuple(mapped_out + extra))
    _fill_meta(new)
    result = fx.GraphModule(gm, new)
    return result


def _match_mutation_type(graph: fx.Graph, src: fx.Node, dst: fx.Node) -> fx.Node:
    """``copy_`` broadcasts and casts: make the new value's type the input's."""
    smeta = src.meta.get("tensor_meta")
    dmeta = dst.meta.get("tensor_meta")
    if smeta is None or dmeta is None:
        return src
    out = src
    if smeta.dtype != dmeta.dtype:
        out = graph.call_function(torch.ops.aten._to_copy.default, (out,), {"dtype": dmeta.dtype})
        out.meta = dict(src.meta)
        out.meta["tensor_meta"] = _tensor_meta_like(dmeta.dtype, smeta.shape)
    if tuple(smeta.shape) != tuple(dmeta.shape):
        out2 = graph.call_function(torch.ops.aten.expand.default, (out, list(dmeta.shape)))
        out2.meta = dict(src.meta)
        out2.meta["tensor_meta"] = _tensor_meta_like(dmeta.dtype, dmeta.shape)
        out = out2
    return out


def _tensor_meta_like(dtype, shape):
    t = torch.empty(tuple(shape), dtype=dtype, device="meta")
    return proxy_tensor._extract_tensor_metadata(t)


def _fill_meta(graph: fx.Graph) -> None:
    for node in graph.nodes:
        tm = node.meta.get("tensor_meta")
        if tm is not None and "val" not in node.meta:
            try:
                node.meta["val"] = torch.empty(tuple(tm.shape), dtype=tm.dtype, device="meta")
            except Exception:  # pragma: no cover
                pass
        node.meta.setdefault("nn_module_stack", OrderedDict())


def _user_input_names(module: torch.nn.Module, args: tuple, kwargs: dict) -> Tuple[List[str], List[torch.Tensor], List[Any]]:
    """Names and values of the tensor leaves of (args, kwargs), named after
    the ``forward()`` parameters they bind to."""
    try:
        sig = inspect.signature(module.forward)
        bound = sig.bind(*args, **kwargs)
        items = list(bound.arguments.items())
        params = sig.parameters
    except (TypeError, ValueError):
        items = [(f"arg{i}", a) for i, a in enumerate(args)] + list(kwargs.items())
        params = {}
    names: List[str] = []
    values: List[torch.Tensor] = []
    for pname, value in items:
        kind = params[pname].kind if pname in params else None
        if kind == inspect.Parameter.VAR_POSITIONAL:
            leaves = [(f"{pname}_{i}", v) for i, v in enumerate(value)]
        elif kind == inspect.Parameter.VAR_KEYWORD:
            leaves = list(value.items())
        else:
            leaves = [(pname, value)]
        for lname, leaf in leaves:
            flat, _ = pytree.tree_flatten(leaf)
            tensors = [t for t in flat if isinstance(t, torch.Tensor)]
            if len(flat) == 1 and len(tensors) == 1:
                names.append(lname)
                values.append(tensors[0])
            else:
                for i, t in enumerate(tensors):
                    names.append(f"{lname}_{i}")
                    values.append(t)
    return names, values, items


def export(
    module: torch.nn.Module,
    args: tuple = (),
    kwargs: Optional[dict] = None,
    *,
    decomposition_table: Optional[dict] = None,
    **_ignored: Any,
) -> ExportedProgram:
    """Capture ``module(*args, **kwargs)`` as an ``ExportedProgram``.

    Stand-in for ``torch.export.export(module, args=..., kwargs=...)`` on
    PyTorch 1.13 (see the module docstring).  Parameters become ``p_*``
    placeholders, buffers ``b_*`` placeholders, tensor arguments user-input
    placeholders named after ``forward()``'s parameters; non-tensor arguments
    are specialised into the graph.  In-place updates of buffers and of
    tensor arguments are reported in ``graph_signature`` as mutations.
    The module and the given tensors are not modified.
    """
    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"export expects an nn.Module, got {type(module).__name__}")
    if not isinstance(args, tuple):
        args = tuple(args) if isinstance(args, list) else (args,)
    kwargs = dict(kwargs or {})

    params = list(module.named_parameters())
    param_ids = {id(p) for _, p in params}
    buffers = [(n, b) for n, b in module.named_buffers() if id(b) not in param_ids]
    persistent = _persistent_buffer_names(module)
    state_names = [n for n, _ in params] + [n for n, _ in buffers]
    state_dict = OrderedDict((n, t.detach().clone()) for n, t in params + buffers)

    # The same tensor object passed as two arguments (``m(x, x)``) must still
    # give two user inputs: leaves are matched to inputs by identity below,
    # so repeated leaves are replaced by distinct copies first.
    flat_args, args_spec = pytree.tree_flatten((args, kwargs))
    seen_ids = set()
    for i, a in enumerate(flat_args):
        if isinstance(a, torch.Tensor):
            if id(a) in seen_ids:
                flat_args[i] = a.detach().clone()
            seen_ids.add(id(flat_args[i]))
    args, kwargs = pytree.tree_unflatten(flat_args, args_spec)
    user_names, user_values, _ = _user_input_names(module, args, kwargs)
    user_ids = {id(v): i for i, v in enumerate(user_values)}
    # Where each tensor leaf of (args, kwargs) goes in the user-input list.
    leaf_slots = [user_ids.get(id(a)) if isinstance(a, torch.Tensor) else None for a in flat_args]

    n_state = len(state_names)
    example_user = [v.detach().clone() for v in user_values]

    def fn(*flat):
        state = dict(zip(state_names, flat[:n_state]))
        user = flat[n_state:]
        leaves = [user[slot] if slot is not None else a for slot, a in zip(leaf_slots, flat_args)]
        call_args, call_kwargs = pytree.tree_unflatten(leaves, args_spec)
        swap = {id(t): state[n] for n, t in params + buffers}
        with swap_tensors(module, swap):
            out = module(*call_args, **call_kwargs)
        flat_out, spec = pytree.tree_flatten(out)
        for o in flat_out:
            if not isinstance(o, torch.Tensor):
                raise TypeError(
                    f"export: forward() of {type(module).__name__} returned a non-tensor "
                    f"value {o!r}; only tensors (in tuples/lists/dicts) are supported")
        fn.out_spec = spec
        return tuple(flat_out)

    inputs = [t.detach().clone() for t in state_dict.values()] + [v.detach().clone() for v in user_values]
    with _module_stack_hooks(module):
        gm = _trace(fn, inputs, decomposition_table)

    placeholder_names = (
        ["p_" + _sanitize(n) for n, _ in params]
        + ["b_" + _sanitize(n) for n, _ in buffers]
        + list(user_names)
    )
    # Unique placeholder names (torch.export does the same with suffixes).
    seen = set()
    unique = []
    for name in placeholder_names:
        base, i = name, 1
        while name in seen:
            name = f"{base}_{i}"
            i += 1
        seen.add(name)
        unique.append(name)
    mutations: Dict[int, fx.Node] = {}
    gm = _finish_graph(gm, unique, mutations)
    # FX may rename a placeholder that shadows a Python builtin ("input" ->
    # "input_1"): the signature records the names the graph really uses.
    unique = [n.name for n in gm.graph.nodes if n.op == "placeholder"]

    # Put the mutation outputs in front of the user outputs.
    graph = gm.graph
    out_node = next(n for n in graph.nodes if n.op == "output")
    user_outs = list(out_node.args[0])
    input_specs: List[InputSpec] = []
    for i, name in enumerate(unique):
        if i < len(params):
            input_specs.append(InputSpec(PARAMETER, name, params[i][0]))
        elif i < n_state:
            bname = buffers[i - len(params)][0]
            input_specs.append(InputSpec(BUFFER, name, bname, bname in persistent))
        else:
            input_specs.append(InputSpec(USER_INPUT, name, user_names[i - n_state]))
    mut_nodes = []
    output_specs: List[OutputSpec] = []
    for index in sorted(mutations):
        spec = input_specs[index]
        if spec.kind == PARAMETER:
            raise RuntimeError(
                f"export: forward() mutates parameter '{spec.target}' in place; "
                "only buffers and user inputs may be mutated")
        kind = BUFFER_MUTATION if spec.kind == BUFFER else USER_INPUT_MUTATION
        mut_nodes.append(mutations[index])
        output_specs.append(OutputSpec(kind, mutations[index].name, spec.target))
    for o in user_outs:
        output_specs.append(OutputSpec(USER_OUTPUT, o.name if isinstance(o, fx.Node) else str(o), None))
    out_node.args = (tuple(mut_nodes + user_outs),)
    graph.lint()
    gm.recompile()

    sig = ExportGraphSignature(input_specs, output_specs)
    return ExportedProgram(
        gm,
        sig,
        state_dict,
        (args, kwargs),
        example_user,
        getattr(fn, "out_spec", None),
        type(module).__name__,
        decomposition_table=dict(decomposition_table) if decomposition_table else None,
    )


def _persistent_buffer_names(module: torch.nn.Module) -> set:
    names = set()
    for prefix, mod in module.named_modules():
        non_persistent = getattr(mod, "_non_persistent_buffers_set", set())
        for bname in mod._buffers:
            if bname not in non_persistent:
                names.add(f"{prefix}.{bname}" if prefix else bname)
    return names
