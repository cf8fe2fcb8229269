"""``get_decomp_table()``: the decompositions run before conversion.

The table is "the default core ATen decompositions minus the ops the
converter keeps (and lowers itself) as composites".

* On PyTorch >= 2.1 the default set is ``torch._decomp.core_aten_decompositions()``.
* On PyTorch 1.13 (this project's interpreter) there is no core set:
  ``torch._decomp.decomposition_table`` mixes ATen-to-ATen decompositions
  (``torch._decomp.decompositions``) with the ``torch._refs`` references,
  which decompose into ``prims`` the converter does not lower.  The default
  set is therefore the ATen-to-ATen decompositions of the ops in
  ``CORE_DECOMPOSED_OPS`` (forward overloads only, no ``.out``/in-place).

``KEPT_AS_COMPOSITES`` is removed from either set.  Its exact content is:

    instance_norm, pixel_shuffle, pixel_unshuffle,
    scaled_dot_product_attention (and its _scaled_dot_product_* kernels),
    hardsigmoid, hardswish, silu, gelu,
    pad, constant_pad_nd, reflection_pad{1,2,3}d, replication_pad{1,2,3}d,
    layer_norm, native_layer_norm, group_norm, native_group_norm,
    batch_norm, native_batch_norm, _native_batch_norm_legit,
    _native_batch_norm_legit_no_training, _native_batch_norm_legit_functional,
    log_softmax, _log_softmax, linalg_vector_norm,
    upsample_bilinear2d, upsample_linear1d, upsample_nearest2d

nn.RNN/GRU/LSTM are not kept: ``add_pytorch_module`` externalizes them as
rnn/gru/lstm composites before export (_recurrent.py); in a program given
to ``add_exported_program`` they decompose into per-step ATen ops.

Each call returns a fresh ``dict`` (mutating it affects no other caller).
"""

from __future__ import annotations

from typing import Dict, FrozenSet

__all__ = ["get_decomp_table", "KEPT_AS_COMPOSITES", "CORE_DECOMPOSED_OPS"]

#: Overload packets (``aten`` names) never decomposed: the converter lowers them.
KEPT_AS_COMPOSITES: FrozenSet[str] = frozenset(
    {
        "instance_norm",
        "pixel_shuffle",
        "pixel_unshuffle",
        "scaled_dot_product_attention",
        "_scaled_dot_product_attention_math",
        "_scaled_dot_product_flash_attention",
        "_scaled_dot_product_flash_attention_for_cpu",
        "_scaled_dot_product_efficient_attention",
        "hardsigmoid",
        "hardswish",
        "silu",
        "gelu",
        "pad",
        "constant_pad_nd",
        "reflection_pad1d",
        "reflection_pad2d",
        "reflection_pad3d",
        "replication_pad1d",
        "replication_pad2d",
        "replication_pad3d",
        "layer_norm",
        "native_layer_norm",
        "group_norm",
        "native_group_norm",
        "batch_norm",
        "native_batch_norm",
        "_native_batch_norm_legit",
        "_native_batch_norm_legit_no_training",
        "_native_batch_norm_legit_functional",
        "log_softmax",
        "_log_softmax",
        "linalg_vector_norm",
        "upsample_bilinear2d",
        "upsample_linear1d",
        "upsample_nearest2d",
    }
)

#: PyTorch 1.13 only: ops whose ``torch._decomp.decompositions`` entry is part
#: of the default ("core") table.  Each decomposes into ATen ops the converter
#: lowers (or, for training-only/loss ops, into ATen ops at all).
CORE_DECOMPOSED_OPS: FrozenSet[str] = frozenset(
    {
        "_euclidean_dist",
        "_fused_dropout",
        "_reshape_alias",
        "_unsafe_view",
        "addcmul",
        "binary_cross_entropy",
        "binary_cross_entropy_with_logits",
        "col2im",
        "cudnn_batch_norm",
        "detach",
        "dot",
        "elu",
        "grid_sampler_2d",
        "im2col",
        "is_same_size",
        "lift",
        "lift_fresh",
        "log_sigmoid_forward",
        "logsumexp",
        "mse_loss",
        "mv",
        "native_dropout",
        "nll_loss_forward",
        "norm",
        "rsub",
        "soft_margin_loss",
        "split",
        "split_with_sizes",
        "std",
        "var",
        "upsample_bicubic2d",
        "xlogy",
        # the composites are listed too, so that core_decompositions() (the
        # default of ExportedProgram.run_decompositions) decomposes them
        "hardsigmoid",
        "hardswish",
        "silu",
        "native_batch_norm",
        "native_group_norm",
        "_log_softmax",
    }
)


def _packet_name(op) -> str:
    packet = getattr(op, "overloadpacket", op)
    name = getattr(packet, "__name__", None) or str(packet)
    return name.split(".")[-1]


def _is_forward_overload(op) -> bool:
    overload = getattr(op, "_overloadname", "default")
    name = _packet_name(op)
    return overload not in ("out",) and not overload.endswith("_out") and not overload.startswith("out") \
        and not name.endswith("_") and "backward" not in name


def core_decompositions() -> Dict[object, object]:
    """The default decomposition set, before removing the kept composites."""
    import torch._decomp as decomp

    core = getattr(decomp, "core_aten_decompositions", None)
    if core is not None:  # PyTorch >= 2.1
        return dict(core())
    from torch._decomp import decompositions as aten_decomps

    table = {}
    for op, fn in decomp.decomposition_table.items():
        if getattr(fn, "__module__", "") != aten_decomps.__name__:
            continue
        if not _is_forward_overload(op):
            continue
        if _packet_name(op) in CORE_DECOMPOSED_OPS:
            table[op] = fn
    return table


def get_decomp_table() -> dict:
    """Decomposition table for ``ExportedProgram.run_decompositions()``.

    The default core ATen decompositions minus ``KEPT_AS_COMPOSITES``, so
    those ops stay single nodes the converter lowers itself.  A fresh ``dict``
    on every call.
    """
    return {op: fn for op, fn in core_decompositions().items() if _packet_name(op) not in KEPT_AS_COMPOSITES}
