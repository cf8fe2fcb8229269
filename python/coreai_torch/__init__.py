"""coreai_torch: convert PyTorch models into Core AI programs.

Public API (see docs/python-api.md and the seeds' TorchConverter reference):

* ``TorchConverter``: ``add_exported_program``, ``add_pytorch_module``,
  ``to_coreai``, ``clear``, ``register_torch_lowering``,
  ``register_custom_kernels``;
* ``ExternalizeSpec``: which submodules keep their boundary (composite ops);
* ``get_decomp_table()``: decompositions to run before conversion;
* ``export(module, args=..., kwargs=None)``: ``torch.export.export`` stand-in
  for PyTorch 1.13 (returns an ``ExportedProgram`` with
  ``run_decompositions``);
* ``TorchMetalKernel``, ``MetalParameter``: user kernels;
* ``generate_composite_decl``: composite declarations for custom lowerings;
* ``compat``: ``torch.library.custom_op``/``register_fake`` polyfills.
  Importing ``coreai_torch`` installs them into ``torch.library`` when
  PyTorch lacks them (1.13); an existing implementation is never replaced.
"""

from . import compat as compat

compat.install()

from ._decomp import get_decomp_table  # noqa: E402
from ._export import ExportedProgram, export  # noqa: E402
from ._torch_metal_kernel import MetalParameter, TorchMetalKernel  # noqa: E402
from .converter import TorchConverter, UnsupportedOpError, generate_composite_decl  # noqa: E402
from .externalize import ExternalizeSpec  # noqa: E402

__all__ = [
    "TorchConverter",
    "ExternalizeSpec",
    "get_decomp_table",
    "export",
    "ExportedProgram",
    "TorchMetalKernel",
    "MetalParameter",
    "generate_composite_decl",
    "UnsupportedOpError",
    "compat",
]

__version__ = "0.1.0"
