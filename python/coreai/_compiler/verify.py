"""Module-level checks before a module is saved: what coreai-gen's loader
and verifier would reject, reported in Python terms (ValueError)."""
from __future__ import annotations

from .infer import DECLARED, OpError, infer
from .dims import Dim
from .ir import Module, _check_entrypoint


def verify_module(module: Module) -> None:
    if not module.graphs:
        raise ValueError("the module has no graph")
    names = set()
    for g in module.graphs:
        if g.name in names:
            raise ValueError(f"the module has two graphs named @{g.name}")
        names.add(g.name)
    for g in module.graphs:
        _verify_graph(module, g)
    _check_recursion(module)
    if not module.entrypoints:
        raise ValueError("the module has no entrypoint (Module.add_entrypoint)")
    seen = set()
    for e in module.entrypoints:
        if e.name in seen:
            raise ValueError(f"the module has two entrypoints named '{e.name}'")
        seen.add(e.name)
        g = module.find_graph(e.graph)
        if g is None:
            raise ValueError(f"entrypoint '{e.name}' runs unknown graph @{e.graph}")
        _check_entrypoint(e, g)
        _check_entry_symbols(module, e, g)


def _verify_graph(module: Module, g) -> None:
    if g.outputs is None:
        raise ValueError(f"graph @{g.name} has no outputs (call set_outputs)")
    c = g.composite
    if c is not None and (len(c.input_names) != len(g.arguments) or len(c.output_names) != len(g.outputs)):
        raise ValueError(f"composite_decl \"{c.op_name}\" names {len(c.input_names)} inputs and "
                         f"{len(c.output_names)} outputs but graph @{g.name} has {len(g.arguments)} arguments "
                         f"and {len(g.outputs)} results")
    for a in g.arguments:
        if a.type.element_type.is_subbyte:
            raise ValueError(f"graph @{g.name}: argument {a.type} is packed ({a.type.element_type}); sub-byte "
                             "dtypes are only allowed for constants")
    defined = set(g.arguments)
    for op in g.operations:
        if op.graph is not g:
            raise ValueError(f"graph @{g.name}: {op.kind} has a stale graph link")
        for i, v in enumerate(op.operands):
            if v not in defined:
                raise ValueError(f"graph @{g.name}: operand {i} of {op.kind} ({v.type}) is not defined "
                                 f"earlier in the graph")
            if v.is_host_constant:
                raise ValueError(
                    f"graph @{g.name}: host constant %{v.id} ({v.owner.host_dtype}{list(v.type.shape)}) is used as "
                    f"operand {i} of {op.kind}{_at(op)}; unsigned host constants can only feed attributes "
                    f"(cast the data to i32/i64 with coreai.constant(..., dtype=np.int64) instead)")
        if op.kind == "coreai.constant":
            pass
        elif op.kind == "coreai.invoke":
            _verify_invoke(module, g, op)
        else:
            declared = [r.type for r in op.results] if op.kind in DECLARED else ()
            try:
                got = infer(op.kind, [v.type for v in op.operands], op.attributes, declared)
            except OpError as e:
                raise ValueError(f"graph @{g.name}: {e}{_at(op)}") from None
            if got != [r.type for r in op.results]:
                raise ValueError(f"graph @{g.name}: {op.kind} results are declared "
                                 f"{[str(r.type) for r in op.results]} but the operands give "
                                 f"{[str(t) for t in got]}")
        if op.kind != "coreai.constant":
            for r in op.results:
                if r.type.element_type.is_subbyte:
                    raise ValueError(f"graph @{g.name}: {op.kind} gives {r.type}; sub-byte dtypes are only "
                                     f"allowed for constants{_at(op)}")
        defined.update(op.results)
    for v in g.outputs:
        if v.type.element_type.is_subbyte:
            raise ValueError(f"graph @{g.name} returns {v.type}; sub-byte dtypes are only allowed for constants "
                             "feeding coreai.blockwise_shift_scale, coreai.dequantize or coreai.lut_to_dense")
        if v not in defined:
            raise ValueError(f"graph @{g.name} returns a value ({v.type}) that is not defined in it")
        if v.is_host_constant:
            raise ValueError(f"graph @{g.name} returns host constant %{v.id}; host constants cannot be saved")


def _names(t) -> set:
    return {s.name for d in t.shape if isinstance(d, Dim) for s in d.symbols()}


def _check_entry_symbols(module: Module, e, g) -> None:
    """Every symbol the entrypoint's graphs use (callees included) is in the
    shape of one of its inputs: the caller gives the values (coreai-gen's
    verify_entry_symbols)."""
    given = set()
    for a in g.arguments[len(e.states):]:
        given |= _names(a.type)
    seen, stack = {g.name}, [g]
    while stack:
        h = stack.pop()
        values = list(h.arguments) + [r for op in h.operations for r in op.results]
        for v in values:
            missing = sorted(_names(v.type) - given)
            if missing:
                raise ValueError(f"entrypoint '{e.name}': value %{v.id} of graph @{h.name} is {v.type}, but symbol "
                                 f"'{missing[0]}' is in the shape of none of the entrypoint's inputs, so a caller "
                                 "could not give its value")
        for op in h.operations:
            for name, a in op.attributes.items():
                vals = a.value if a.kind == "dim[]" else (a.value,) if a.kind == "dim" else ()
                for x in vals:
                    if isinstance(x, Dim):
                        missing = sorted({s.name for s in x.symbols()} - given)
                        if missing:
                            raise ValueError(f"entrypoint '{e.name}': attribute '{name}' of {op.kind} in graph "
                                             f"@{h.name} names symbol '{missing[0]}', which is in the shape of none "
                                             "of the entrypoint's inputs")
            if op.kind == "coreai.invoke" and op.callee not in seen:
                callee = module.find_graph(op.callee)
                if callee is not None:
                    seen.add(op.callee)
                    stack.append(callee)


def _at(op) -> str:
    return "" if op.location.is_unknown else f" at {op.location}"


def _verify_invoke(module, g, op) -> None:
    callee = module.find_graph(op.callee or "")
    if callee is None:
        raise ValueError(f"graph @{g.name}: coreai.invoke calls @{op.callee}, which is not in the module")
    if callee.outputs is None:
        raise ValueError(f"graph @{g.name}: coreai.invoke calls @{callee.name}, which has no outputs")
    if [v.type for v in op.operands] != callee.input_types or [r.type for r in op.results] != callee.output_types:
        raise ValueError(f"graph @{g.name}: coreai.invoke @{callee.name} passes "
                         f"({', '.join(str(v.type) for v in op.operands)}) -> "
                         f"({', '.join(str(r.type) for r in op.results)}) but the graph is "
                         f"({', '.join(map(str, callee.input_types))}) -> "
                         f"({', '.join(map(str, callee.output_types))})")


def _check_recursion(module: Module) -> None:
    state: dict = {}

    def visit(g, chain):
        state[g.name] = 1
        for name in g.callees():
            if state.get(name) == 1:
                raise ValueError(f"recursive call: @{g.name} invokes @{name}, which is already on the call chain "
                                 f"({' -> '.join('@' + c for c in chain + [name])})")
            if state.get(name) is None:
                visit(module.find_graph(name), chain + [name])
        state[g.name] = 2

    for g in module.graphs:
        if state.get(g.name) is None:
            visit(g, [g.name])
