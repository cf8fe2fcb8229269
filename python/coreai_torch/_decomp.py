"""``get_decomp_table()``: the decompositions run before conversion.

The table is "the default core ATen decompositions minus the ops the
converter keeps (and lowers itself) as composites".

The default set is ``torch._decomp.core_aten_decompositions()`` (what
``ExportedProgram.run_decompositions()`` uses without a table);
``KEPT_AS_COMPOSITES`` is removed from it.  Its exact content is:

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

__all__ = ["get_decomp_table", "KEPT_AS_COMPOSITES"]

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

def _packet_name(op) -> str:
    packet = getattr(op, "overloadpacket", op)
    name = getattr(packet, "__name__", None) or str(packet)
    return name.split(".")[-1]


def core_decompositions() -> Dict[object, object]:
    """The default decomposition set, before removing the kept composites."""
    import torch._decomp as decomp

    return dict(decomp.core_aten_decompositions())


def get_decomp_table() -> dict:
    """Decomposition table for ``ExportedProgram.run_decompositions()``.

    The default core ATen decompositions minus ``KEPT_AS_COMPOSITES``, so
    those ops stay single nodes the converter lowers itself.  A fresh ``dict``
    on every call.
    """
    return {op: fn for op, fn in core_decompositions().items() if _packet_name(op) not in KEPT_AS_COMPOSITES}
