"""Element types of Core AI tensors and their host (NumPy) representation.

The dtypes of model format v1 (docs/model-format.md). NumPy has no
bfloat16, so bf16 data are kept as their uint16 bit patterns; f16 uses
np.float16. Conversions to f16/bf16 round to nearest even from the exact
source value, as coreai-gen's loader (generator/src/ir_half.c) does.

The 8-bit integers i8 / u8 are np.int8 / np.uint8. The sub-byte integers of
compressed weights (i4, u4, u1, u2, u6) are held one value per element in
np.int8 / np.uint8 on the host and packed only in the weights file
(`pack_bits` / `unpack_bits`: element i takes bits [i*b, i*b+b) of the
little-endian bit stream).
"""
from __future__ import annotations

import enum

import numpy as np

__all__ = [
    "DType",
    "f32",
    "f16",
    "bf16",
    "i64",
    "i32",
    "bool_",
    "i8",
    "u8",
    "i4",
    "u4",
    "u1",
    "u2",
    "u6",
    "is_unsigned_numpy",
    "pack_bits",
    "unpack_bits",
    "to_storage",
    "storage_to_float64",
    "small_float_from_f64",
    "small_float_to_f64",
]


class DType(enum.Enum):
    """A tensor element type: ir.f32, ir.f16, ir.bf16, ir.i64, ir.i32, ir.bool_,
    the 8-bit integers ir.i8, ir.u8 and the sub-byte integers of compressed
    constants ir.i4, ir.u4, ir.u1, ir.u2, ir.u6."""

    f32 = "f32"
    f16 = "f16"
    bf16 = "bf16"
    i64 = "i64"
    i32 = "i32"
    bool_ = "bool"
    i8 = "i8"
    u8 = "u8"
    i4 = "i4"
    u4 = "u4"
    u1 = "u1"
    u2 = "u2"
    u6 = "u6"

    # -- properties ---------------------------------------------------------

    @property
    def text(self) -> str:
        """The spelling in the model file and the textual IR ("f32", "bool")."""
        return self.value

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return f"ir.{self.name}"

    @property
    def itemsize(self) -> int:
        """Bytes of one element's host storage (1 for the sub-byte integers)."""
        return _ITEMSIZE[self]

    @property
    def bits(self) -> int:
        """Bits of one element in the model file (4 for i4, 8 for f32's bytes x 8, ...)."""
        return _BITS[self]

    @property
    def is_subbyte(self) -> bool:
        """i4, u4, u1, u2, u6: packed in the weights file, allowed for constants only."""
        return _BITS[self] < 8

    @property
    def is_quant(self) -> bool:
        """An integer type of quantized data: i8, u8, i4, u4, u1, u2, u6."""
        return self in _QUANT

    @property
    def is_signed(self) -> bool:
        return self in (DType.i8, DType.i4, DType.i32, DType.i64)

    @property
    def int_range(self) -> tuple:
        """(min, max) of an integer dtype."""
        return _RANGE[self]

    @property
    def is_float(self) -> bool:
        return self in (DType.f32, DType.f16, DType.bf16)

    @property
    def is_int(self) -> bool:
        """i32 or i64 (the arithmetic integers; i8 / u8 and the sub-byte integers are `is_quant`)."""
        return self in (DType.i32, DType.i64)

    @property
    def is_bool(self) -> bool:
        return self is DType.bool_

    @property
    def storage(self) -> np.dtype:
        """The NumPy dtype holding this dtype's data (uint16 bit patterns for bf16)."""
        return _STORAGE[self]

    @property
    def runtime_enum(self) -> int:
        """The value of `coreai_dtype` in coreai/runtime.h (none for the packed sub-byte dtypes)."""
        if self not in _RUNTIME_ENUM:
            raise ValueError(f"{self} is a packed constant dtype; the runtime API has no {self} tensors")
        return _RUNTIME_ENUM[self]

    @classmethod
    def from_runtime_enum(cls, value: int) -> "DType":
        for k, v in _RUNTIME_ENUM.items():
            if v == value:
                return k
        raise ValueError(f"unknown coreai_dtype value {value}")

    # -- conversion from anything ---------------------------------------------

    @classmethod
    def from_any(cls, x) -> "DType":
        """An ir.DType from an ir.DType, "f32"-style text, a NumPy dtype or
        scalar type, a Python type (float, int, bool) or a torch.dtype (by
        name; torch is never imported). Unsigned NumPy types only exist as host
        constants (see coreai.constant) and are rejected here."""
        if isinstance(x, DType):
            return x
        if x is bool:
            return DType.bool_
        if x is int:
            return DType.i64
        if x is float:
            return DType.f32
        if isinstance(x, str):
            return _from_text(x)
        # torch.dtype, recognised without importing torch
        if type(x).__module__ == "torch" and type(x).__name__ == "dtype":
            return _from_text(str(x))
        try:
            nd = np.dtype(x)
        except TypeError:
            raise ValueError(f"cannot interpret {x!r} as a Core AI dtype") from None
        return _from_numpy(nd)

    @classmethod
    def from_numpy(cls, nd) -> "DType":
        return _from_numpy(np.dtype(nd))


_ITEMSIZE = {DType.f32: 4, DType.f16: 2, DType.bf16: 2, DType.i64: 8, DType.i32: 4, DType.bool_: 1,
             DType.i8: 1, DType.u8: 1, DType.i4: 1, DType.u4: 1, DType.u1: 1, DType.u2: 1, DType.u6: 1}
_BITS = {d: 8 * n for d, n in _ITEMSIZE.items()}
_BITS.update({DType.i4: 4, DType.u4: 4, DType.u1: 1, DType.u2: 2, DType.u6: 6})
_QUANT = frozenset({DType.i8, DType.u8, DType.i4, DType.u4, DType.u1, DType.u2, DType.u6})
_RANGE = {DType.i64: (-(1 << 63), (1 << 63) - 1), DType.i32: (-(1 << 31), (1 << 31) - 1)}
_RANGE.update({d: ((-(1 << (_BITS[d] - 1)), (1 << (_BITS[d] - 1)) - 1) if d in (DType.i8, DType.i4)
                   else (0, (1 << _BITS[d]) - 1)) for d in _QUANT})
_STORAGE = {
    DType.f32: np.dtype(np.float32),
    DType.f16: np.dtype(np.float16),
    DType.bf16: np.dtype(np.uint16),
    DType.i64: np.dtype(np.int64),
    DType.i32: np.dtype(np.int32),
    DType.bool_: np.dtype(np.bool_),
    DType.i8: np.dtype(np.int8),
    DType.u8: np.dtype(np.uint8),
    DType.i4: np.dtype(np.int8),
    DType.u4: np.dtype(np.uint8),
    DType.u1: np.dtype(np.uint8),
    DType.u2: np.dtype(np.uint8),
    DType.u6: np.dtype(np.uint8),
}
# sub-byte dtypes never cross the runtime's API (constants only)
_RUNTIME_ENUM = {DType.f32: 0, DType.f16: 1, DType.bf16: 2, DType.i64: 3, DType.i32: 4, DType.bool_: 5,
                 DType.i8: 6, DType.u8: 7}

_TEXT = {
    "f32": DType.f32, "float32": DType.f32, "float": DType.f32,
    "f16": DType.f16, "float16": DType.f16, "half": DType.f16,
    "bf16": DType.bf16, "bfloat16": DType.bf16,
    "i64": DType.i64, "int64": DType.i64, "long": DType.i64, "si64": DType.i64,
    "i32": DType.i32, "int32": DType.i32, "int": DType.i32, "si32": DType.i32,
    "bool": DType.bool_, "bool_": DType.bool_, "i1": DType.bool_,
    "i8": DType.i8, "int8": DType.i8, "si8": DType.i8,
    "u8": DType.u8, "ui8": DType.u8,
    "i4": DType.i4, "int4": DType.i4, "si4": DType.i4,
    "u4": DType.u4, "uint4": DType.u4, "ui4": DType.u4,
    "u1": DType.u1, "uint1": DType.u1, "ui1": DType.u1,
    "u2": DType.u2, "uint2": DType.u2, "ui2": DType.u2,
    "u6": DType.u6, "uint6": DType.u6, "ui6": DType.u6,
}


def _from_text(s: str) -> DType:
    key = s.strip()
    if key.startswith("torch."):
        key = key[len("torch."):]
    if key in _TEXT:
        return _TEXT[key]
    if key in ("uint8", "uint16", "uint32", "uint64", "u16", "u32", "u64"):
        raise ValueError(f"unsigned dtype '{s}' is only allowed for host constants "
                         "(coreai.constant(..., dtype=np.uint32)); the 8-bit quantized type is 'u8'")
    raise ValueError(f"unknown dtype '{s}' (expected one of f32, f16, bf16, i64, i32, bool, i8, u8, i4, u4, "
                     "u1, u2, u6)")


def _from_numpy(nd: np.dtype) -> DType:
    if nd == np.float32:
        return DType.f32
    if nd == np.float16:
        return DType.f16
    if nd == np.int64:
        return DType.i64
    if nd == np.int32:
        return DType.i32
    if nd == np.bool_:
        return DType.bool_
    if nd == np.int8:
        return DType.i8
    if nd == np.uint8:
        return DType.u8
    if nd.kind == "u":
        raise ValueError(f"unsigned dtype {nd} is only allowed for host constants "
                         "(coreai.constant(..., dtype=np.uint32))")
    raise ValueError(f"NumPy dtype {nd} has no Core AI equivalent "
                     "(expected float32, float16, int64, int32, int8 or bool)")


f32 = DType.f32
f16 = DType.f16
bf16 = DType.bf16
i64 = DType.i64
i32 = DType.i32
bool_ = DType.bool_
i8 = DType.i8
u8 = DType.u8
i4 = DType.i4
u4 = DType.u4
u1 = DType.u1
u2 = DType.u2
u6 = DType.u6


def is_unsigned_numpy(x) -> bool:
    """True for NumPy unsigned integer dtypes/types (host-constant dtypes)."""
    if isinstance(x, (DType, str)) or x in (bool, int, float):
        return isinstance(x, str) and x.strip() in ("uint8", "uint16", "uint32", "uint64",
                                                    "u16", "u32", "u64")
    try:
        return np.dtype(x).kind == "u"
    except TypeError:
        return False


# --------------------------------------------------------------------------
# f16 / bf16 conversions, bit-exact with generator/src/ir_half.c
# --------------------------------------------------------------------------

_FORMATS = {DType.f16: (10, 5), DType.bf16: (7, 8)}  # (mantissa bits, exponent bits)


def small_float_from_f64(values, dtype: DType):
    """Round float64 values to f16/bf16 bit patterns (uint16), nearest even.

    Returns (bits, overflow) where overflow marks finite values that rounded
    to infinity."""
    mant_bits, exp_bits = _FORMATS[dtype]
    v = np.asarray(values, dtype=np.float64)
    bias = (1 << (exp_bits - 1)) - 1
    emin = 1 - bias
    inf_bits = ((1 << exp_bits) - 1) << mant_bits
    sign = np.where(np.signbit(v), 1 << (mant_bits + exp_bits), 0).astype(np.uint32)
    a = np.abs(v)
    finite = np.isfinite(a)
    nonzero = finite & (a != 0)
    safe = np.where(nonzero, a, 1.0)
    _, ex = np.frexp(safe)
    e = np.maximum(ex.astype(np.int64) - 1, emin)
    q = np.ldexp(safe, (mant_bits - e).astype(np.int32))
    r = np.rint(q)  # round half to even; q is exact (power-of-two scaling)
    normal = r >= float(1 << mant_bits)
    biased = (e + bias).astype(np.int64)
    bits = np.where(normal, (biased << mant_bits) + (r.astype(np.int64) - (1 << mant_bits)),
                    r.astype(np.int64))
    overflow = nonzero & (bits >= inf_bits)
    bits = np.where(bits >= inf_bits, inf_bits, bits)
    bits = np.where(nonzero, bits, 0)
    bits = np.where(np.isinf(v), inf_bits, bits)
    bits = np.where(np.isnan(v), inf_bits | (1 << (mant_bits - 1)), bits)
    out = (sign | bits.astype(np.uint32)).astype(np.uint16)
    return out.reshape(v.shape), overflow.reshape(v.shape)


def small_float_to_f64(bits, dtype: DType):
    """The exact float64 values of f16/bf16 bit patterns."""
    b = np.asarray(bits, dtype=np.uint16)
    if dtype is DType.f16:
        return b.view(np.float16).astype(np.float64)
    # bf16 is the top half of an f32
    return (b.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def storage_to_float64(data: np.ndarray, dtype: DType) -> np.ndarray:
    """The values of stored data as float64 (bf16 bit patterns decoded)."""
    if dtype is DType.bf16:
        return small_float_to_f64(data, dtype)
    return np.asarray(data).astype(np.float64)


def to_storage(values, dtype: DType, *, what: str = "value", strict: bool = True) -> np.ndarray:
    """Convert array-like values to the storage of `dtype`.

    With strict=True (constants written by the user) a float that is not an
    integer for an int dtype, an integer out of range, or a finite value that
    overflows f16/bf16 raises ValueError. bf16 input is taken as float values,
    not bit patterns."""
    arr = np.asarray(values)
    if arr.dtype == object:
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{what}: cannot convert {values!r} to numbers") from None
    if arr.dtype.kind in "SUV":
        raise ValueError(f"{what}: cannot convert text/bytes data to {dtype}")
    if dtype is DType.bool_:
        return arr.astype(np.bool_) if arr.dtype.kind != "f" else (arr != 0)
    if dtype.is_int or dtype.is_quant:
        lo, hi = dtype.int_range
        if arr.dtype.kind == "f":
            if strict:
                if not np.all(np.isfinite(arr)) or np.any(np.trunc(arr) != arr):
                    raise ValueError(f"{what}: {dtype} constant from non-integer values")
            arr = np.trunc(arr)
            if strict and arr.size and (arr.min() < lo or arr.max() > hi):
                raise ValueError(f"{what}: values out of range for {dtype}")
            return arr.astype(dtype.storage)
        if strict and arr.size and arr.dtype.kind in "iu":
            if int(arr.min()) < lo or int(arr.max()) > hi:
                raise ValueError(f"{what}: values out of range for {dtype}")
        return arr.astype(dtype.storage)
    # float targets
    if arr.dtype == np.bool_:
        arr = arr.astype(np.float64)
    if dtype is DType.f32:
        f64 = arr.astype(np.float64)
        out = f64.astype(np.float32)
        if strict and np.any(np.isinf(out) & np.isfinite(f64)):
            raise ValueError(f"{what}: values out of range for f32")
        return out
    f64 = arr.astype(np.float64)
    bits, overflow = small_float_from_f64(f64, dtype)
    if strict and np.any(overflow):
        raise ValueError(f"{what}: values out of range for {dtype}")
    if dtype is DType.f16:
        return bits.view(np.float16)
    return bits


# --------------------------------------------------------------------------
# sub-byte packing of the model file (docs/model-format.md, "Packed integers")
# --------------------------------------------------------------------------

def pack_bits(values, dtype: DType) -> bytes:
    """The bytes of a sub-byte tensor: element i in bits [i*b, i*b+b) of the
    little-endian bit stream (bit j of the stream is bit j % 8 of byte j // 8),
    negative values in two's complement, the unused high bits of the last
    byte zero. len == ceil(numel * b / 8)."""
    b = dtype.bits
    v = np.asarray(values).reshape(-1).astype(np.int64) & ((1 << b) - 1)
    bits = ((v[:, None] >> np.arange(b)) & 1).astype(np.uint8).reshape(-1)
    return np.packbits(bits, bitorder="little").tobytes()


def unpack_bits(data, dtype: DType, count: int) -> np.ndarray:
    """The inverse of pack_bits: `count` values in dtype's host storage."""
    b = dtype.bits
    raw = np.frombuffer(bytes(data), dtype=np.uint8)
    bits = np.unpackbits(raw, bitorder="little")[: count * b].reshape(count, b).astype(np.int64)
    v = (bits << np.arange(b)).sum(axis=1)
    if dtype.is_signed:
        v = np.where(v >= (1 << (b - 1)), v - (1 << b), v)
    return v.astype(dtype.storage)
