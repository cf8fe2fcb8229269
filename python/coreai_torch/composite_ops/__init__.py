"""Module-class composite ops: ``nn.Module`` subclasses to build into a model
and externalize with an ``ExternalizeSpec`` (see ``coreai_torch.externalize``).
The declarations they produce, and what ``coreai-gen`` does with them, are
the contract of docs/composite-ops.md.

| class | composite op | ``composite_attrs`` | inputs (``None`` ones left out) |
|---|---|---|---|
| ``RMSNormImpl(axes=-1, eps=1e-5)`` | ``rms_norm`` | ``axes, eps, version`` | ``input, scale`` |
| ``RoPE(scale=1.0, base=1e4, dims=None, interleaved=False)`` | ``rope`` | ``scale, base, dims, interleaved, version`` | ``input, cos, sin, position_ids, freqs, offset`` |
| ``SDPA(scale=None, is_causal=False, window_size=0)`` | ``scaled_dot_product_attention`` | ``scale, is_causal, window_size, version`` | ``query, key, value, attn_mask, sinks`` |
| ``GatherMM(num_batch_axes=0)`` | ``gather_mm`` | ``num_batch_axes, version`` | ``lhs, rhs, lhs_indices, rhs_indices`` |
| ``GatedDeltaUpdate(use_qk_l2_norm=True)`` | ``gated_delta_update`` | ``use_qk_l2_norm, version`` | ``query, key, value, g, beta, initial_state`` |
| ``SwiGLUImpl()`` | ``swiglu`` | ``version`` | ``gate, value`` |

Attributes whose value is ``None`` (``SDPA.scale``, ``RoPE.dims``) are left
out of the declaration.  ``COMPOSITE_SPECS`` holds one ready
``ExternalizeSpec`` per class.

Wrappers: ``RMSNorm(dim, eps=1e-5, n_heads=None)`` owns the scale
(``[dim]``, or ``[n_heads, 1, dim]`` for a per-head Q/K norm) and calls an
inner ``RMSNormImpl`` (``.norm``); ``SwiGLU(in_features, ...)`` is the
feed-forward block around a ``SwiGLUImpl`` (``.swiglu_impl``).
Externalize the ``*Impl`` classes, not the wrappers.
"""

from ._gated_delta_update import GatedDeltaUpdate
from ._gather_mm import GatherMM
from ._rms_norm import RMSNorm, RMSNormImpl
from ._rope import RoPE
from ._sdpa import SDPA
from ._swiglu import SwiGLU, SwiGLUImpl


def _specs():
    from ..externalize import ExternalizeSpec

    return {
        RMSNormImpl: ExternalizeSpec(RMSNormImpl, "rms_norm", ["axes", "eps", "version"]),
        RoPE: ExternalizeSpec(RoPE, "rope", ["scale", "base", "dims", "interleaved", "version"]),
        SDPA: ExternalizeSpec(SDPA, "scaled_dot_product_attention", ["scale", "is_causal", "window_size", "version"]),
        GatherMM: ExternalizeSpec(GatherMM, "gather_mm", ["num_batch_axes", "version"]),
        GatedDeltaUpdate: ExternalizeSpec(GatedDeltaUpdate, "gated_delta_update", ["use_qk_l2_norm", "version"]),
        SwiGLUImpl: ExternalizeSpec(SwiGLUImpl, "swiglu", ["version"]),
    }


#: ``{class: ExternalizeSpec}`` with the op name and attributes of
#: docs/composite-ops.md for every module-class composite op.
COMPOSITE_SPECS = _specs()

__all__ = [
    "COMPOSITE_SPECS",
    "GatherMM",
    "GatedDeltaUpdate",
    "RMSNorm",
    "RMSNormImpl",
    "RoPE",
    "SDPA",
    "SwiGLU",
    "SwiGLUImpl",
]
