"""coreai_torch: convert PyTorch models into Core AI programs.

Public API (see docs/python-api.md and the seeds' TorchConverter reference):

* ``TorchConverter``: ``add_exported_program``, ``add_pytorch_module``,
  ``to_coreai``, ``clear``, ``register_torch_lowering``,
  ``register_custom_kernels``;
* ``ExternalizeSpec``: which submodules keep their boundary (composite ops);
* ``get_decomp_table()``: decompositions to run before conversion
  (``torch.export.export(...).run_decompositions(get_decomp_table())``);
* ``TorchMetalKernel``, ``MetalParameter``: user kernels;
* ``generate_composite_decl``: composite declarations for custom lowerings;
* ``coreai_torch.compression``: the compression ops (``torch.ops.coreai.*``)
  and modules using them (docs/compression.md).

Needs PyTorch >= 2.8 (``torch.export``, ``torch.library.custom_op``).
"""

import torch as _torch

from ._version import check_torch_version as _check_torch_version

_check_torch_version(_torch.__version__)

from . import compression  # noqa: E402  (registers torch.ops.coreai.*)
from ._decomp import get_decomp_table  # noqa: E402
from ._torch_metal_kernel import MetalParameter, TorchMetalKernel  # noqa: E402
from .converter import TorchConverter, UnsupportedOpError, generate_composite_decl  # noqa: E402
from .externalize import ExternalizeSpec  # noqa: E402

__all__ = [
    "TorchConverter",
    "ExternalizeSpec",
    "get_decomp_table",
    "TorchMetalKernel",
    "MetalParameter",
    "generate_composite_decl",
    "UnsupportedOpError",
]

__version__ = "0.1.0"
