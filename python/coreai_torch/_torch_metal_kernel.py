"""User kernels: ``TorchMetalKernel`` and ``MetalParameter``.

A ``TorchMetalKernel`` wraps a kernel body (``src``) written for one thread
per element, and a PyTorch reference implementation (``torch_defn``) used
for eager execution and for tracing.  Calling the kernel object inside a
model's ``forward`` runs ``torch_defn`` eagerly and traces to **one** graph
node, ``torch.ops.coreai_kernels.<name>.default``.  After
``TorchConverter.register_custom_kernels([kernel])`` that node lowers to
``coreai.elementwise_kernel`` (docs/model-format.md), which ``coreai-gen``
turns into a C loop running ``src`` for every ``id`` in ``[0, numel)``.

The C generator accepts the subset of Metal that is also C: element
indexing with ``[id]`` and C expressions (``output[id] = x[id] + y[id];``).
Thread-index parameters are mapped to the loop index: a ``MetalParameter``
with attribute ``thread_position_in_grid`` and a scalar type (``uint``,
``int``, ``uint32_t``, ``size_t``) named other than ``id`` becomes
``const unsigned int <name> = (unsigned int)id;`` ahead of ``src``.  Other
Metal parameters (vector types, thread-group attributes) cannot be expressed
and are rejected at conversion with a ``ValueError``.

``template_dtypes={"A": "TYPE"}`` replaces every ``TYPE`` token in ``src``
with the C element type of input ``A`` (``float``, ``int64_t``, ...).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Callable, Dict, Optional, Sequence

import torch

from ._program import library_for

__all__ = ["TorchMetalKernel", "MetalParameter"]

KERNEL_NAMESPACE = "coreai_kernels"

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_USED_OP_NAMES: Dict[str, int] = {}

_C_TYPES = {
    torch.float32: "float",
    torch.float16: "float",  # f16 data are converted by coreai.cast before kernels
    torch.bfloat16: "float",
    torch.int64: "int64_t",
    torch.int32: "int32_t",
    torch.bool: "bool",
}

_SCALAR_INDEX_TYPES = {"uint", "int", "uint32_t", "int32_t", "size_t", "unsigned int", "ulong", "long"}


@dataclasses.dataclass(frozen=True)
class MetalParameter:
    """A kernel parameter bound to a Metal attribute, e.g.
    ``MetalParameter("id", "uint", "thread_position_in_grid")``."""

    name: str
    type: str
    attribute: str

    def __post_init__(self):
        for field in ("name", "type", "attribute"):
            if not isinstance(getattr(self, field), str) or not getattr(self, field):
                raise ValueError(f"MetalParameter.{field} must be a non-empty string")
        if not _IDENT.match(self.name):
            raise ValueError(f"MetalParameter name {self.name!r} is not an identifier")


class TorchMetalKernel:
    """A user kernel usable as a PyTorch op (see the module docstring).

    Call it like a function with the input tensors in ``input_names`` order;
    the call-site keywords ``threads_per_grid``, ``threads_per_thread_group``
    and ``result_shapes`` are accepted (``result_shapes`` is checked against
    ``torch_defn``'s results in eager mode).  Returns a tensor for one result,
    a list for several.
    """

    def __init__(
        self,
        name: str,
        input_names: Sequence[str],
        result_names: Sequence[str],
        src: str,
        torch_defn: Callable,
        metal_params: Optional[Sequence[MetalParameter]] = None,
        template_dtypes: Optional[Dict[str, str]] = None,
    ):
        if not isinstance(name, str) or not _IDENT.match(name):
            raise ValueError(f"TorchMetalKernel: name {name!r} must be an identifier")
        input_names = list(input_names)
        result_names = list(result_names)
        if not result_names:
            raise ValueError("TorchMetalKernel: result_names must not be empty")
        for n in input_names + result_names:
            if not isinstance(n, str) or not _IDENT.match(n):
                raise ValueError(f"TorchMetalKernel '{name}': {n!r} is not an identifier")
        if len(set(input_names + result_names)) != len(input_names) + len(result_names):
            raise ValueError(f"TorchMetalKernel '{name}': input and result names must be unique")
        if not isinstance(src, str) or not src.strip():
            raise ValueError(f"TorchMetalKernel '{name}': src must be a non-empty string")
        if not callable(torch_defn):
            raise ValueError(f"TorchMetalKernel '{name}': torch_defn must be callable")
        self.name = name
        self.input_names = input_names
        self.result_names = result_names
        self.src = src
        self.torch_defn = torch_defn
        self.metal_params = list(metal_params or [])
        for p in self.metal_params:
            if not isinstance(p, MetalParameter):
                raise ValueError(f"TorchMetalKernel '{name}': metal_params must be MetalParameter objects")
        self.template_dtypes = dict(template_dtypes or {})
        for key in self.template_dtypes:
            if key not in input_names:
                raise ValueError(f"TorchMetalKernel '{name}': template_dtypes names unknown input {key!r}")
        self._define_op()

    # -- torch side ------------------------------------------------------------
    def _define_op(self) -> None:
        count = _USED_OP_NAMES.get(self.name, 0)
        _USED_OP_NAMES[self.name] = count + 1
        opname = self.name if count == 0 else f"{self.name}_{count}"
        args = ", ".join(f"Tensor {n}" for n in self.input_names)
        if len(self.result_names) == 1:
            ret = "Tensor"
        else:
            ret = "(" + ", ".join("Tensor" for _ in self.result_names) + ")"
        lib = library_for(KERNEL_NAMESPACE)
        lib.define(f"{opname}({args}) -> {ret}")
        kernel = self

        def run(*inputs):
            out = kernel.torch_defn(*inputs)
            outs = [out] if isinstance(out, torch.Tensor) else list(out)
            if len(outs) != len(kernel.result_names):
                raise RuntimeError(
                    f"TorchMetalKernel '{kernel.name}': torch_defn returned {len(outs)} tensors, "
                    f"expected {len(kernel.result_names)} ({kernel.result_names})")
            fixed = []
            for o in outs:
                # An op result may not alias an input.
                if any(isinstance(i, torch.Tensor) and o.data_ptr() == i.data_ptr() for i in inputs):
                    o = o.clone()
                fixed.append(o)
            return fixed[0] if len(fixed) == 1 else tuple(fixed)

        def run_fake(*inputs):
            # fake tensors have no storage to compare: every result is fresh
            out = kernel.torch_defn(*inputs)
            outs = [out] if isinstance(out, torch.Tensor) else list(out)
            fixed = [o.clone() for o in outs]
            return fixed[0] if len(fixed) == 1 else tuple(fixed)

        lib.impl(opname, run, "CPU")
        torch.library.register_fake(f"{KERNEL_NAMESPACE}::{opname}", run_fake, lib=lib)
        self._op_name = opname
        self._op = getattr(getattr(torch.ops, KERNEL_NAMESPACE), opname).default

    @property
    def qualified_name(self) -> str:
        """The traced node's qualified name, ``"coreai_kernels::<op>.default"``."""
        return f"{KERNEL_NAMESPACE}::{self._op_name}.default"

    @property
    def op(self):
        return self._op

    def __call__(self, *inputs, threads_per_grid=None, threads_per_thread_group=None, result_shapes=None,
                 **kwargs):
        if kwargs:
            raise TypeError(f"TorchMetalKernel '{self.name}': unexpected keyword arguments {sorted(kwargs)}")
        if len(inputs) != len(self.input_names):
            raise TypeError(f"TorchMetalKernel '{self.name}' takes {len(self.input_names)} inputs "
                            f"({self.input_names}), got {len(inputs)}")
        out = self._op(*inputs)
        outs = [out] if isinstance(out, torch.Tensor) else list(out)
        if result_shapes is not None:
            if len(result_shapes) != len(outs):
                raise ValueError(f"TorchMetalKernel '{self.name}': {len(result_shapes)} result shapes "
                                 f"for {len(outs)} results")
            for o, shape in zip(outs, result_shapes):
                if list(o.shape) != [int(d) for d in shape]:
                    raise ValueError(f"TorchMetalKernel '{self.name}': result shape {list(o.shape)} "
                                     f"differs from result_shapes entry {list(shape)}")
        return outs[0] if len(outs) == 1 else outs

    # -- C side ---------------------------------------------------------------
    def c_source(self, input_dtypes: Optional[Dict[str, torch.dtype]] = None) -> str:
        """The kernel body as the C statements ``coreai.elementwise_kernel`` carries."""
        lines = []
        for p in self.metal_params:
            if p.attribute == "thread_position_in_grid" and p.type.strip() in _SCALAR_INDEX_TYPES:
                if p.name != "id":
                    lines.append(f"const unsigned int {p.name} = (unsigned int)id;")
                continue
            raise ValueError(
                f"TorchMetalKernel '{self.name}': metal parameter {p.name} ({p.type} "
                f"[[{p.attribute}]]) has no C equivalent; only a scalar thread_position_in_grid "
                "index is supported by the C generator")
        src = self.src
        for input_name, token in self.template_dtypes.items():
            dtype = (input_dtypes or {}).get(input_name)
            if dtype is None:
                raise ValueError(f"TorchMetalKernel '{self.name}': dtype of input {input_name!r} unknown "
                                 "for template_dtypes")
            src = re.sub(rf"\b{re.escape(token)}\b", _C_TYPES.get(dtype, "float"), src)
        lines.append(src.strip())
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"TorchMetalKernel({self.name!r}, input_names={self.input_names}, "
                f"result_names={self.result_names})")
