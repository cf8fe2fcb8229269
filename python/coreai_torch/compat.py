"""Polyfills for PyTorch APIs this package's users expect but 1.13 lacks.

``custom_op(qualname, fn=None, *, mutates_args, device_types=None, schema=None)``
    A small stand-in for ``torch.library.custom_op`` (PyTorch >= 2.4) built on
    ``torch.library.Library``:

    * the schema is inferred from the type annotations of ``fn`` (``Tensor``,
      ``Optional[Tensor]``, ``int``, ``float``, ``bool``, ``str``,
      ``list[int]``/``Sequence[int]``, ``list[float]``, ``list[Tensor]``;
      results ``Tensor``, ``tuple[Tensor, ...]`` or ``list[Tensor]``), or
      given as ``schema="(Tensor x) -> Tensor"``;
    * ``fn`` becomes the CPU kernel (and the kernel of ``device_types`` when
      given);
    * ``.register_fake(fake_fn)`` registers ``fake_fn`` as the ``Meta``
      kernel (what ``torch.export``/``make_fx(tracing_mode="fake")`` call for
      shapes);
    * calling the returned object calls ``torch.ops.<ns>.<name>``; the op
      appears in a traced graph as the single node
      ``torch.ops.<ns>.<name>.default`` (qualified name
      ``"<ns>::<name>.default"`` for ``TorchConverter.register_torch_lowering``).

    ``mutates_args`` must be ``()`` (mutating custom ops are not supported).

``register_fake(qualname_or_op, fn=None)``
    The function form of ``.register_fake``.

``install()``
    Sets ``torch.library.custom_op`` and ``torch.library.register_fake`` to
    the polyfills **only if torch does not already have them**.  ``import
    coreai_torch`` calls it, so code written for PyTorch >= 2.4 (like the
    custom-op-lowering guide) runs unchanged on 1.13.

Namespaces: one ``torch.library.Library(ns, "DEF")`` is created per namespace
and kept for the life of the process (PyTorch 1.13 allows a single ``DEF``
library per namespace, so a namespace used here cannot also be defined by
another ``Library(ns, "DEF")``).
"""

from __future__ import annotations

import collections.abc
import inspect
import typing
from typing import Any, Callable, Dict, Iterable, Optional, Sequence, Union

import torch

__all__ = ["custom_op", "register_fake", "install", "library_for", "CustomOpDef"]

_LIBRARIES: Dict[str, "torch.library.Library"] = {}
_DEFINED: Dict[str, "CustomOpDef"] = {}


def library_for(namespace: str) -> "torch.library.Library":
    """The process-wide ``DEF`` library of ``namespace`` (created on first use)."""
    lib = _LIBRARIES.get(namespace)
    if lib is None:
        lib = torch.library.Library(namespace, "DEF")
        _LIBRARIES[namespace] = lib
    return lib


def _type_to_schema(annotation: Any, what: str) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is torch.Tensor:
        return "Tensor"
    if annotation is int:
        return "int"
    if annotation is float:
        return "float"
    if annotation is bool:
        return "bool"
    if annotation is str:
        return "str"
    if origin is Union and len(args) == 2 and type(None) in args:
        inner = args[0] if args[1] is type(None) else args[1]
        return _type_to_schema(inner, what) + "?"
    try:  # PEP 604 unions (X | None)
        import types

        if isinstance(annotation, types.UnionType):
            parts = [a for a in annotation.__args__ if a is not type(None)]
            if len(parts) == 1 and len(annotation.__args__) == 2:
                return _type_to_schema(parts[0], what) + "?"
    except AttributeError:  # pragma: no cover
        pass
    if origin in (list, tuple, collections.abc.Sequence) and args:
        if origin is not tuple or (len(args) == 2 and args[1] is Ellipsis):
            return _type_to_schema(args[0], what) + "[]"
    raise TypeError(f"custom_op: cannot infer a schema type for {what} annotated {annotation!r}; "
                    "pass schema=... explicitly")


def _return_schema(annotation: Any) -> str:
    if annotation is inspect.Signature.empty:
        raise TypeError("custom_op: the function needs a return annotation (or pass schema=...)")
    if annotation is None or annotation is type(None):
        return "()"
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
        return "(" + ", ".join(_type_to_schema(a, "a result") for a in args) + ")"
    return _type_to_schema(annotation, "the result")


def infer_schema(fn: Callable) -> str:
    sig = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn)
    except Exception:
        hints = {}
    parts = []
    for name, p in sig.parameters.items():
        if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise TypeError("custom_op: *args/**kwargs are not supported")
        ann = hints.get(name, p.annotation)
        if ann is inspect.Parameter.empty:
            raise TypeError(f"custom_op: parameter '{name}' needs a type annotation (or pass schema=...)")
        text = f"{_type_to_schema(ann, f'parameter {name!r}')} {name}"
        if p.default is not inspect.Parameter.empty:
            d = p.default
            text += "=" + ("None" if d is None else ("True" if d is True else "False" if d is False else repr(d)))
        parts.append(text)
    ret = _return_schema(hints.get("return", sig.return_annotation))
    return f"({', '.join(parts)}) -> {ret}"


class CustomOpDef:
    """What ``custom_op`` returns: callable like the function it wraps."""

    def __init__(self, namespace: str, name: str, fn: Callable, schema: str, device_types: Iterable[str]):
        self._namespace = namespace
        self._name = name
        self._fn = fn
        self._schema = schema
        lib = library_for(namespace)
        lib.define(f"{name}{schema}")
        for dev in device_types:
            lib.impl(name, fn, dev)
        self._opoverloadpacket = getattr(getattr(torch.ops, namespace), name)
        self._opoverload = self._opoverloadpacket.default
        self.__name__ = name
        self.__doc__ = getattr(fn, "__doc__", None)

    @property
    def qualname(self) -> str:
        return f"{self._namespace}::{self._name}"

    def register_fake(self, fn: Callable) -> Callable:
        lib = library_for(self._namespace)
        lib.impl(self._name, fn, "Meta")
        try:  # 1.13 has no autograd fallthrough for meta tensors
            lib.impl(self._name, fn, "AutogradMeta")
        except Exception:  # pragma: no cover - newer torch
            pass
        return fn

    # alias of the older name
    impl_abstract = register_fake

    def __call__(self, *args, **kwargs):
        return self._opoverload(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<CustomOpDef {self.qualname}{self._schema}>"


def custom_op(
    name: str,
    fn: Optional[Callable] = None,
    /,
    *,
    mutates_args: Union[str, Iterable[str]] = (),
    device_types: Union[None, str, Sequence[str]] = None,
    schema: Optional[str] = None,
):
    """Define a custom operator ``"namespace::name"`` from a Python function
    (a polyfill of ``torch.library.custom_op``; see the module docstring)."""
    if not isinstance(name, str) or "::" not in name:
        raise ValueError(f"custom_op: name must be 'namespace::op_name', got {name!r}")
    namespace, opname = name.split("::", 1)
    if not namespace.isidentifier() or not opname.isidentifier():
        raise ValueError(f"custom_op: invalid qualified name {name!r}")
    if mutates_args not in ((), [], None) and mutates_args != "unknown":
        if list(mutates_args):
            raise NotImplementedError("custom_op polyfill: mutating custom ops are not supported")
    if isinstance(device_types, str):
        device_types = [device_types]
    devices = [("CPU" if d in ("cpu", "CPU") else d) for d in (device_types or ["CPU"])]

    def wrap(f: Callable) -> CustomOpDef:
        if name in _DEFINED:
            raise RuntimeError(f"custom_op: {name} is already defined")
        op = CustomOpDef(namespace, opname, f, schema or infer_schema(f), devices)
        _DEFINED[name] = op
        return op

    if fn is not None:
        return wrap(fn)
    return wrap


def register_fake(op: Union[str, CustomOpDef, Any], fn: Optional[Callable] = None, /, **_ignored):
    """Register ``fn`` as the fake (``Meta``) kernel of a custom op."""

    def do(f: Callable) -> Callable:
        if isinstance(op, CustomOpDef):
            return op.register_fake(f)
        qualname = op if isinstance(op, str) else op.name()
        qualname = qualname.split(".")[0]
        if qualname in _DEFINED:
            return _DEFINED[qualname].register_fake(f)
        namespace, opname = qualname.split("::", 1)
        lib = _LIBRARIES.get(namespace)
        if lib is None:
            lib = torch.library.Library(namespace, "IMPL")
            _LIBRARIES.setdefault(namespace + "#impl", lib)
        lib.impl(opname, f, "Meta")
        return f

    if fn is not None:
        return do(fn)
    return do


def install() -> None:
    """Install the polyfills into ``torch.library`` where they are missing."""
    if not hasattr(torch.library, "custom_op"):
        torch.library.custom_op = custom_op  # type: ignore[attr-defined]
    if not hasattr(torch.library, "register_fake"):
        torch.library.register_fake = register_fake  # type: ignore[attr-defined]
