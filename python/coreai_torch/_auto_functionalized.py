"""Mutating custom ops as ``torch.export`` presents them.

A ``@torch.library.custom_op(..., mutates_args=[...])`` call becomes, after
``run_decompositions``, one ``torch.ops.higher_order.auto_functionalized_v2``
node (``auto_functionalized`` in older programs): a functional call whose
results are the op's own results followed by the new values of the tensors
it mutated.  The converter lowers such a node with the lowering registered
for the op itself (``register_torch_lowering("ns::op.default")``), called
with a node that looks like a plain call of the op (``node.args`` in schema
order, the mutated arguments being the tensors the op mutates).

The lowering returns the op's results followed by the new value of every
mutated argument, in schema order (a single ``Value`` when that list has one
entry): the same layout as the auto-functionalized node's results.
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional

import torch
import torch.fx as fx


def auto_functionalized_ops() -> tuple:
    ops = []
    for name in ("auto_functionalized", "auto_functionalized_v2"):
        op = getattr(torch.ops.higher_order, name, None)
        if op is not None:
            ops.append(op)
    return tuple(ops)


class _OpCall:
    """The parts of an ``fx.Node`` a lowering reads, for the wrapped op."""

    def __init__(self, node: fx.Node, op: Any, args: list, kwargs: dict, results_meta: Any):
        self.name = node.name
        self.op = "call_function"
        self.target = op
        self.args = tuple(args)
        self.kwargs = kwargs
        self.meta = dict(node.meta)
        self.meta["val"] = results_meta
        self.users = node.users
        self.graph = node.graph

    def format_node(self) -> str:
        return f"{self.name} = {self.target}(*{self.args}, **{self.kwargs})"


def _schema_args(node: fx.Node, op: Any) -> tuple:
    """(positional args, kwarg-only args, names of the mutated arguments)
    of the op call wrapped by ``node``."""
    schema = op._schema
    kw = dict(node.kwargs)
    v2 = node.target is getattr(torch.ops.higher_order, "auto_functionalized_v2", None)
    bases = kw.pop("_all_bases", None) if v2 else None
    args: list = []
    kwonly: dict = {}
    mutated: List[str] = []
    base_of: List[Optional[int]] = []  # v2: the _all_bases index each mutated argument updates
    for a in schema.arguments:
        writes = a.alias_info is not None and a.alias_info.is_write
        if writes:
            mutated.append(a.name)
        if v2 and writes:
            idx = kw.pop(f"_{a.name}_base_index", None)
            view = [k for k in (f"_{a.name}_size", f"_{a.name}_stride", f"_{a.name}_storage_offset",
                                f"_{a.name}_slice_dim", f"_{a.name}_slice_start", f"_{a.name}_slice_end",
                                f"_{a.name}_alias") if k in kw]
            if view:
                raise NotImplementedError(
                    f"argument '{a.name}' of {schema.name} mutates a view of a tensor; pass the whole "
                    "tensor (mutate a slice of it inside the op)")
            value = None if idx is None else bases[idx]
            base_of.append(idx)
        elif a.name in kw:
            value = kw.pop(a.name)
        elif a.has_default_value():
            value = a.default_value
        else:
            raise NotImplementedError(f"{schema.name}: argument '{a.name}' missing in {node.format_node()}")
        if a.kwarg_only:
            kwonly[a.name] = value
        else:
            args.append(value)
    if v2:
        used = [i for i in base_of if i is not None]
        if len(set(used)) != len(used) or len(used) != len(bases):
            raise NotImplementedError(f"{schema.name}: mutated arguments sharing one tensor are not supported")
    return args, kwonly, mutated, (base_of if v2 else None)


def lower_auto_functionalized(lookup: Callable[[str], Optional[Callable]], qualified: Callable[[Any], str],
                              vm: Any, node: fx.Node, loc: Any):
    """Lowers an auto-functionalized node through the wrapped op's lowering;
    returns the node's results (op results, then mutated tensors' new values)."""
    op = node.args[0]
    name = qualified(op)
    fn = lookup(name)
    if fn is None:
        return None, name
    args, kwonly, mutated, base_of = _schema_args(node, op)
    vals = node.meta.get("val")
    n_results = len(op._schema.returns)
    results_meta = None
    if isinstance(vals, (tuple, list)):
        own = list(vals[:n_results])
        results_meta = own[0] if len(own) == 1 else (tuple(own) if own else None)
    out = fn(vm, _OpCall(node, op, args, kwonly, results_meta), loc)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    expected = n_results + len(mutated)
    if len(outs) != expected:
        raise ValueError(
            f"the lowering of {name} returned {len(outs)} value(s); a mutating op's lowering returns its "
            f"{n_results} result(s) followed by the new value of each mutated argument ({', '.join(mutated)})")
    if base_of is not None:  # v2 lists the new values in _all_bases order
        tail = [None] * len(base_of)
        for k, idx in enumerate(base_of):
            if idx is not None:
                tail[idx] = outs[n_results + k]
        outs = outs[:n_results] + [t for t in tail if t is not None]
    return outs, name
