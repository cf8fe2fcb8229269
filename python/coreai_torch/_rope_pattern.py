"""Rotary embeddings as Hugging Face writes them, lowered to the ``rope``
composite op (docs/composite-ops.md, ``rope``).

HF's ``apply_rotary_pos_emb`` (Llama, Qwen2/3, Mistral, Phi-3, ...) is

    q * cos + rotate_half(q) * sin,   rotate_half(q) = cat(-q[..., D/2:], q[..., :D/2])

with ``cos = cat(f, f).cos()`` (the same angles in both halves).  That
equals the split-half ``rope`` with the ``cos`` / ``sin`` inputs
``cos[..., :D/2]`` / ``sin[..., :D/2]`` exactly when each table's halves are
equal, and then bit for bit (``x1*c + (-x2)*s`` is ``c*x1 - s*x2`` in IEEE
arithmetic).  So the ``aten::add.Tensor`` lowering below matches that
expression and proves the halves equal before it emits the composite;
otherwise the expression stays op by op.  The proof is either

* numeric: the table (or the tensor it reads rows from) depends on no user
  input, so it is evaluated here with PyTorch, as eager does, and its two
  halves compared bit for bit; the first half becomes a constant input.
  This is HF's case with static shapes (positions ``arange(T)``), and a
  table cached in a buffer;
* structural: the table is an elementwise function (``cos``, ``sin``,
  ``* attention_scaling``, dtype copies) of ``cat([A, A], -1)``, reached
  through ops that move whole rows (unsqueeze, view with the last extent
  kept, expand, row slices / index / embedding), as when ``position_ids``
  is an input; the first half is then sliced from the table at run time.

The angles are HF's own numbers (never recomputed from a guessed base), so
any rope scaling (linear, dynamic, llama3, yarn, longrope) is fine.  Not
matched: interleaved rotations (``stack((-x2, x1), -1)``), a rotation of
part of the features through ``dims`` (HF's partial rotary slices ``q``
first, and the slice is then the matched input), non-f32 graphs, and
anything inside an externalized graph's body.
"""

from __future__ import annotations

from typing import Optional, Tuple

import torch
import torch.fx as fx

from coreai._compiler import ir
from coreai._compiler.dialects import coreai

from ._aten_to_core import _binary_arith, _is_f32, _through_f32_copies, _v, qualified_name, register
from ._utils import node_meta

_ADD_TENSOR = _binary_arith(coreai.add, True)
_BIG = 1 << 62

# ---------------------------------------------------------------------------
# the expression
# ---------------------------------------------------------------------------


def _named(n, *names) -> bool:
    return isinstance(n, fx.Node) and n.op == "call_function" and qualified_name(n.target) in names


def _shape(n) -> Tuple[int, ...]:
    return node_meta(n)[0]


def _is_last(dim, rank: int) -> bool:
    return isinstance(dim, int) and dim in (-1, rank - 1)


def _half_of(n, d: int):
    """``(x, 0)`` for ``x[..., :d/2]``, ``(x, 1)`` for ``x[..., d/2:]``; else None."""
    if not _named(n, "aten::slice.Tensor", "aten::slice_copy.Tensor"):
        return None
    a = list(n.args) + [None] * (5 - len(n.args))
    x, dim, start, end, step = a[:5]
    dim = n.kwargs.get("dim", 0 if dim is None else dim)
    start = n.kwargs.get("start", start) or 0
    end = n.kwargs.get("end", end)
    step = n.kwargs.get("step", step) or 1
    end = _BIG if end is None else end
    if not isinstance(x, fx.Node) or _shape(x)[-1:] != (d,) or not _is_last(dim, len(_shape(x))) or step != 1:
        return None
    h = d // 2
    if (start, end) == (0, h):
        return x, 0
    if start == h and end >= d:
        return x, 1
    return None


def _rotated_half_of(n, d: int):
    """``x`` when ``n`` is ``cat([-x[..., d/2:], x[..., :d/2]], -1)``; else None."""
    if not _named(n, "aten::cat.default"):
        return None
    parts = n.args[0]
    dim = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim", 0)
    if len(parts) != 2 or not _is_last(dim, len(_shape(n))) or not _named(parts[0], "aten::neg.default"):
        return None
    hi, lo = _half_of(parts[0].args[0], d), _half_of(parts[1], d)
    if hi is None or lo is None or hi[1] != 1 or lo[1] != 0 or hi[0] is not lo[0]:
        return None
    return hi[0]


def match_rotate_half(node):
    """``(x, cos, sin)`` when ``node`` is ``x * cos + rotate_half(x) * sin``
    (either operand order of the add and of each mul), f32, the result of
    ``x``'s shape ``[..., D]`` (D even); else None."""
    if not (_named(node, "aten::add.Tensor") and len(node.args) == 2 and node.kwargs.get("alpha", 1) == 1
            and _is_f32(node)):
        return None
    shape = _shape(node)
    if len(shape) < 2 or not isinstance(shape[-1], int) or shape[-1] < 2 or shape[-1] % 2:
        return None
    d = shape[-1]
    for m1, m2 in ((node.args[0], node.args[1]), (node.args[1], node.args[0])):
        if not (_named(m1, "aten::mul.Tensor") and _named(m2, "aten::mul.Tensor")):
            continue
        for r, sin in ((m2.args[0], m2.args[1]), (m2.args[1], m2.args[0])):
            x = _rotated_half_of(r, d)
            if x is None:
                continue
            for xm, cos in ((m1.args[0], m1.args[1]), (m1.args[1], m1.args[0])):
                if not isinstance(xm, fx.Node) or _through_f32_copies(xm) is not _through_f32_copies(x):
                    continue
                if _tables_fit(xm, cos, sin, shape):
                    return xm, cos, sin
    return None


def _tables_fit(x, cos, sin, shape) -> bool:
    if not (_is_f32(x) and _is_f32(cos) and _is_f32(sin)) or _shape(x) != shape:
        return False
    for t in (cos, sin):
        ts = _shape(t)
        if len(ts) > len(shape) or ts[-1:] not in ((shape[-1],), (1,)):
            return False
        try:
            if tuple(torch.broadcast_shapes(ts, shape)) != shape:
                return False
        except RuntimeError:
            return False
    return True


# ---------------------------------------------------------------------------
# proving the halves of a table equal
# ---------------------------------------------------------------------------

_NOT_STATIC = object()
_NO_EVAL = ("rand", "randn", "randint", "normal", "uniform", "bernoulli", "dropout", "empty")
_STATIC_MAX = 1 << 20  # elements of any tensor evaluated here


def static_tensor(vm, root: fx.Node) -> Optional[torch.Tensor]:
    """The value of ``root`` when it depends on no input of the graph
    (only parameters, buffers, constants and literals): evaluated with the
    node's own ATen op, as eager PyTorch does.  Ops with a user-registered
    lowering are not evaluated (the user decides what they compute)."""
    memo = vm.__dict__.setdefault("_static_memo", {})
    stack = [root]
    while stack:
        n = stack[-1]
        if n.name in memo:
            stack.pop()
            continue
        deps = []
        fx.node.map_aggregate((n.args, n.kwargs), lambda a: deps.append(a) if isinstance(a, fx.Node) else a)
        pending = [a for a in deps if a.name not in memo]
        if pending and not (n.name in vm.folded or n.name in vm.tensors):
            stack.extend(pending)
            continue
        stack.pop()
        memo[n.name] = _evaluate(vm, n, deps, memo)
    v = memo[root.name]
    return v if isinstance(v, torch.Tensor) else None


def _evaluate(vm, n, deps, memo):
    if n.name in vm.tensors:
        return vm.tensors[n.name]
    if n.name in vm.folded:
        return vm.folded[n.name]
    if n.op != "call_function" or any(memo[a.name] is _NOT_STATIC for a in deps):
        return _NOT_STATIC
    name = qualified_name(n.target)
    user = vm.ctx.converter._lowerings
    if not name.startswith("aten::") or any(k in name for k in _NO_EVAL) or name in user \
            or name.rsplit(".", 1)[0] in user:
        return _NOT_STATIC
    args, kwargs = fx.node.map_aggregate((n.args, n.kwargs), lambda a: memo[a.name] if isinstance(a, fx.Node) else a)
    try:
        with torch.no_grad():
            value = n.target(*args, **kwargs)
    except Exception:  # noqa: BLE001 - not evaluable here: not static
        return _NOT_STATIC
    if isinstance(value, torch.Tensor) and value.numel() > _STATIC_MAX:
        return _NOT_STATIC
    return value


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.contiguous().view(torch.int32)


def _halves_equal(t: torch.Tensor, h: int) -> bool:
    return t.dtype == torch.float32 and t.shape[-1] == 2 * h and torch.equal(_bits(t[..., :h]), _bits(t[..., h:]))


#: ops that apply one function to every element: equal halves stay equal
_ELEMENTWISE = ("aten::cos.default", "aten::sin.default", "aten::neg.default", "aten::clone.default",
                "aten::alias.default", "aten::alias_copy.default", "aten::_to_copy.default")
_SCALED = ("aten::mul.Tensor", "aten::mul.Scalar", "aten::div.Tensor", "aten::div.Scalar")
#: ops that move whole rows (the last axis untouched): their source's halves decide
_ROWS = ("aten::unsqueeze.default", "aten::unsqueeze_copy.default", "aten::view.default", "aten::view_copy.default",
         "aten::_unsafe_view.default", "aten::reshape.default", "aten::expand.default", "aten::expand_copy.default",
         "aten::slice.Tensor", "aten::slice_copy.Tensor", "aten::select.int", "aten::select_copy.int",
         "aten::index.Tensor", "aten::embedding.default")


def _row_source(n, h: int):
    """The tensor whose rows ``n`` is made of, or None."""
    name = qualified_name(n.target)
    if name in _ELEMENTWISE:
        return n.args[0]
    if name in _SCALED:
        a, b = n.args[0], n.args[1]
        if name.startswith("aten::mul") and not isinstance(a, fx.Node):
            a, b = b, a
        return a if isinstance(b, (int, float)) and not isinstance(b, bool) else None
    if name not in _ROWS:
        return None
    src = n.args[0]
    if not isinstance(src, fx.Node) or _shape(src)[-1:] != (2 * h,):
        return None
    rank = len(_shape(src))
    if name.startswith("aten::slice") or name.startswith("aten::select"):
        dim = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim", 0)
        return None if _is_last(dim, rank) else src
    if name == "aten::index.Tensor":
        return src if len(n.args[1]) < rank else None
    if name == "aten::embedding.default":
        return src if rank == 2 else None
    if name.startswith("aten::unsqueeze"):
        return None if _is_last(n.args[1], rank + 1) else src
    return src  # view / reshape / expand: the last extent checked below


def _rows_have_equal_halves(vm, t: fx.Node, h: int) -> bool:
    """Structural proof that every row of ``t`` (last extent 2h) has equal halves."""
    n = t
    for _ in range(64):
        if not isinstance(n, fx.Node) or _shape(n)[-1:] != (2 * h,) or not _is_f32(n):
            return False
        st = static_tensor(vm, n)
        if st is not None:
            return _halves_equal(st, h)
        if _named(n, "aten::cat.default"):
            parts = n.args[0]
            dim = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim", 0)
            return len(parts) == 2 and parts[0] is parts[1] and _is_last(dim, len(_shape(n)))
        if n.op != "call_function":
            return False
        n = _row_source(n, h)
    return False


def _table_half(vm, t: fx.Node, h: int):
    """A builder of ``t[..., :h]``'s Value when ``t``'s halves are proved
    equal, else None.  A static table becomes a constant of its first half,
    shared by every rope reading it."""
    if _shape(t)[-1] == 1:
        return lambda loc: _v(vm, t, ir.f32, loc)  # one value for every feature
    st = static_tensor(vm, t)
    if st is not None:
        if not _halves_equal(st, h):
            return None
        key = f"{t.name}#rope_half"

        def constant(loc):
            if key not in vm:
                vm[key] = _v(vm, st[..., :h].contiguous(), ir.f32, loc)
            return vm[key]
        return constant
    if not _rows_have_equal_halves(vm, t, h):
        return None

    def sliced(loc):
        v = _v(vm, t, ir.f32, loc)
        shape = list(v.type.shape)
        return coreai.slice(v, [0] * len(shape), shape[:-1] + [h], loc=loc)
    return sliced


# ---------------------------------------------------------------------------
# the composite
# ---------------------------------------------------------------------------


def _rope_body(x, cos, sin, loc):
    """Split-half rotation: y1 = c x1 - s x2, y2 = s x1 + c x2."""
    shape = list(x.type.shape)
    rank, h = len(shape), shape[-1] // 2
    x1 = coreai.slice(x, [0] * rank, shape[:-1] + [h], loc=loc)
    x2 = coreai.slice(x, [0] * (rank - 1) + [h], shape, loc=loc)
    y1 = coreai.sub(coreai.mul(cos, x1, loc=loc), coreai.mul(sin, x2, loc=loc), loc=loc)
    y2 = coreai.add(coreai.mul(sin, x1, loc=loc), coreai.mul(cos, x2, loc=loc), loc=loc)
    return coreai.concat([y1, y2], rank - 1, loc=loc)


@register("aten::add.Tensor")
def lower_add_with_rope(vm, node, loc):
    """``aten::add.Tensor``, recognising HF's rotary embedding (see above)."""
    # (a values map without ``tensors`` is the f32 view of an f16/bf16 node: not matched)
    if not getattr(vm.ctx, "in_composite_body", False) and hasattr(vm, "tensors"):
        m = match_rotate_half(node)
        if m is not None:
            x, cos, sin = m
            h = _shape(node)[-1] // 2
            c, s = _table_half(vm, cos, h), _table_half(vm, sin, h)
            if c is not None and s is not None:
                xv = _v(vm, x, ir.f32, loc)
                inputs = [("input", xv), ("cos", c(loc)), ("sin", s(loc))]
                body = lambda a: [_rope_body(a[0], a[1], a[2], loc)]  # noqa: E731
                return vm.ctx.composite("rope", {"interleaved": False}, inputs, ["output"], body, loc)[0]
    return _ADD_TENSOR(vm, node, loc)
