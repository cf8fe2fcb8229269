"""Module-class composite ops: ``nn.Module`` subclasses to build into a model
and externalize with an ``ExternalizeSpec`` (see ``coreai_torch.externalize``).

* ``RMSNormImpl(axes=-1, eps=1e-5, version=1)``: ``forward(input, scale=None)``;
  the ``rms_norm`` composite op (``ExternalizeSpec(target_class=RMSNormImpl,
  composite_op_name="rms_norm", composite_attrs=["axes", "eps", "version"])``).
* ``RMSNorm(dim, eps=1e-5)``: convenience wrapper owning the learnable scale
  (``weight``, initialised to ones) and calling an inner ``RMSNormImpl``
  (``.norm``).  Externalize ``RMSNormImpl``, not ``RMSNorm``.
"""

from ._rms_norm import RMSNorm, RMSNormImpl

__all__ = ["RMSNormImpl", "RMSNorm"]
