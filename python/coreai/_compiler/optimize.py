"""Module-level clean-ups run by AIProgram.optimize():

* constant folding: an op whose operands are all constants is evaluated with
  NumPy (coreai._compiler.evaluate, in the op's dtype semantics) and replaced
  by a constant, unless that would add much data (a broadcast or fill of a
  large shape stays an op) or the op decompresses a weight
  (blockwise_shift_scale, lut_to_dense, dequantize stay ops);
* identity casts (to the operand's own dtype) are removed;
* dead-code elimination: ops whose results nobody uses;
* graphs that no entrypoint reaches through coreai.invoke are removed.
"""
from __future__ import annotations

import numpy as np

from .evaluate import EvalError, evaluate_op
from .ir import Operation

#: a folded result may have at most this many elements more than its operands
FOLD_GROWTH_LIMIT = 4096

# the decompressing ops keep their constants compressed: folding them would
# write the dense weight into the model
_NEVER_FOLD = {"coreai.invoke", "coreai.elementwise_kernel", "coreai.constant", "coreai.blockwise_shift_scale",
               "coreai.lut_to_dense", "coreai.dequantize"}


def _rewrite(graph, visit) -> int:
    """One pass over graph's ops: visit(op) returns None to keep the op, or
    (replacement ops, {old result: new value}). Operands and outputs are
    renamed as the pass goes, so the whole rewrite is linear."""
    subst: dict = {}
    new_ops = []
    changed = 0
    for op in graph.operations:
        if subst:
            op.operands = [subst.get(v, v) for v in op.operands]
        r = visit(op)
        if r is None:
            new_ops.append(op)
            continue
        repl, mapping = r
        for c in repl:
            c.graph = graph
        new_ops.extend(repl)
        subst.update(mapping)
        op.graph = None
        changed += 1
    if changed:
        graph.operations = new_ops
        if graph.outputs is not None:
            graph.outputs = [subst.get(v, v) for v in graph.outputs]
        graph._touch()
    return changed


def _fold(op):
    if op.kind in _NEVER_FOLD or not all(v.is_constant and not v.is_host_constant for v in op.operands):
        return None
    if any(r.type.is_dynamic for r in op.results) or op.kind == "coreai.dim_value":
        return None  # a value known only when the entrypoint runs
    in_elems = sum(v.type.numel for v in op.operands)
    out_elems = sum(r.type.numel for r in op.results)
    if out_elems > in_elems + FOLD_GROWTH_LIMIT:
        return None
    try:
        with np.errstate(all="ignore"):
            outs = evaluate_op(op, [v.constant_value for v in op.operands])
    except EvalError:
        return None
    repl, mapping = [], {}
    for r, data in zip(op.results, outs):
        c = Operation("coreai.constant", [], [r.type], location=op.location)
        arr = np.array(np.asarray(data, dtype=r.type.element_type.storage).reshape(r.type.shape), order="C",
                       copy=True)
        arr.setflags(write=False)
        c.data = arr
        repl.append(c)
        mapping[r] = c.results[0]
    return repl, mapping


def fold_constants(graph) -> int:
    """Fold ops with only (non-host) constant operands; returns how many."""
    return _rewrite(graph, _fold)


def remove_identity_casts(graph) -> int:
    def visit(op):
        if op.kind == "coreai.cast" and op.operands[0].type == op.results[0].type:
            return [], {op.results[0]: op.operands[0]}
        return None
    return _rewrite(graph, visit)


def eliminate_dead_code(graph) -> int:
    uses = graph.uses()
    keep = []
    removed = 0
    for op in reversed(graph.operations):
        if any(uses.get(r, 0) for r in op.results):
            keep.append(op)
            continue
        for v in op.operands:
            uses[v] -= 1
        op.graph = None
        removed += 1
    if removed:
        keep.reverse()
        graph.operations = keep
        graph._touch()
    return removed


def reachable_graphs(module) -> set:
    seen = set()
    stack = [e.graph for e in module.entrypoints]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        g = module.find_graph(name)
        if g is not None:
            stack.extend(g.callees())
    return seen


def optimize_module(module) -> dict:
    """Runs every pass to a fixed point; returns counts for diagnostics."""
    stats = {"folded": 0, "casts": 0, "dead": 0, "graphs": 0}
    changed = True
    while changed:
        changed = False
        for g in module.graphs:
            n = remove_identity_casts(g)
            f = fold_constants(g)
            d = eliminate_dead_code(g)
            stats["casts"] += n
            stats["folded"] += f
            stats["dead"] += d
            changed = changed or bool(n or f)
    if module.entrypoints:
        keep = reachable_graphs(module)
        for g in list(module.graphs):
            if g.name not in keep:
                module.remove_graph(g)
                stats["graphs"] += 1
    return stats
