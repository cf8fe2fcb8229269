"""Running generated models from Python: NDArray, and the executable /
function objects behind `AIAsset.executable()`.

A model is generated with coreai-gen, compiled into a shared library and
loaded with ctypes; everything about it is read from the program descriptor
`const coreai_program *NAME_program(void)` (runtime-stubs/include/coreai/runtime.h),
whose structs are mirrored below.
"""
from __future__ import annotations

import asyncio
import ctypes
import threading
from typing import Mapping

import numpy as np

from ._compiler.dtypes import DType, small_float_to_f64, to_storage

__all__ = ["NDArray", "TensorSpec", "AIExecutable", "AIFunction", "RuntimeCallError"]


# ---------------------------------------------------------------------------
# NDArray
# ---------------------------------------------------------------------------

def _is_torch_tensor(x) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "detach") and hasattr(x, "dtype")


class NDArray:
    """A host tensor passed to and returned from model functions.

    NDArray(np.ndarray | torch.Tensor | list | NDArray, dtype=None). With
    dtype the data are converted to it (bf16 from float values); without,
    the data keep their dtype (a float64 array stays float64 and is rejected
    by a model that expects f32, rather than silently converted)."""

    __slots__ = ("_data", "_dtype")

    def __init__(self, data, dtype=None) -> None:
        src_dtype = None
        if isinstance(data, NDArray):
            src_dtype, arr = data._dtype, data._data
        elif _is_torch_tensor(data):
            t = data.detach().cpu()
            if str(t.dtype) == "torch.bfloat16":
                arr, _ = np.asarray(t.float().numpy()), None
                arr = to_storage(arr, DType.bf16, strict=False)
                src_dtype = DType.bf16
            else:
                arr = t.contiguous().numpy()
        else:
            arr = np.asarray(data)
        if dtype is not None:
            dt = DType.from_any(dtype)
            if src_dtype is DType.bf16:
                if dt is not DType.bf16:
                    arr = to_storage(small_float_to_f64(arr, DType.bf16), dt, strict=False)
            else:
                arr = to_storage(arr, dt, strict=False)
            src_dtype = dt
        elif src_dtype is None:
            try:
                src_dtype = DType.from_numpy(arr.dtype)
            except ValueError:
                src_dtype = None  # kept; rejected when passed to a model
        self._data = arr
        self._dtype = src_dtype

    @property
    def dtype(self) -> DType | None:
        """The Core AI dtype, or None for NumPy data without one (float64, ...)."""
        return self._dtype

    @property
    def numpy_dtype(self) -> np.dtype:
        return self._data.dtype

    @property
    def shape(self) -> tuple:
        return tuple(self._data.shape)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @classmethod
    def from_storage(cls, data: np.ndarray, dtype) -> "NDArray":
        """An NDArray over data already in Core AI storage (bf16 as uint16 bits)."""
        obj = cls.__new__(cls)
        obj._dtype = DType.from_any(dtype)
        obj._data = np.asarray(data, dtype=obj._dtype.storage)
        return obj

    def numpy(self) -> np.ndarray:
        """The data as NumPy (bf16 as float32 values)."""
        if self._dtype is DType.bf16:
            return small_float_to_f64(self._data, DType.bf16).astype(np.float32)
        return self._data

    def numpy_storage(self) -> np.ndarray:
        """The data in Core AI storage (bf16 as uint16 bit patterns)."""
        return self._data

    def torch(self):
        import torch  # only when asked for

        if self._dtype is DType.bf16:
            return torch.from_numpy(self.numpy().copy()).to(torch.bfloat16)
        return torch.from_numpy(np.array(self._data, copy=True))

    def __array__(self, dtype=None):
        a = self.numpy()
        return a.astype(dtype) if dtype is not None else a

    def __repr__(self) -> str:
        dt = self._dtype.text if self._dtype is not None else str(self._data.dtype)
        return f"NDArray({dt}{list(self.shape)}, {np.array2string(self.numpy(), threshold=8)})"


# ---------------------------------------------------------------------------
# ctypes mirror of coreai/runtime.h
# ---------------------------------------------------------------------------

class _TensorDesc(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int32),
                ("shape", ctypes.POINTER(ctypes.c_int64))]


_EntryFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                            ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p))


_InitStateFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)
_EntryWeightsFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                                   ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p))


class _EntrypointDesc(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p),
                ("n_inputs", ctypes.c_int32), ("inputs", ctypes.POINTER(_TensorDesc)),
                ("n_states", ctypes.c_int32), ("states", ctypes.POINTER(_TensorDesc)),
                ("n_outputs", ctypes.c_int32), ("outputs", ctypes.POINTER(_TensorDesc)),
                ("invoke", _EntryFn), ("invoke_weights", _EntryWeightsFn)]


class _WeightsDesc(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint64), ("alignment", ctypes.c_uint64), ("sha256", ctypes.c_uint8 * 32)]


class _Program(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("generator_version", ctypes.c_char_p),
                ("workspace_size", ctypes.c_size_t), ("workspace_alignment", ctypes.c_size_t),
                ("weights_size", ctypes.c_size_t),
                ("n_entrypoints", ctypes.c_int32), ("entrypoints", ctypes.POINTER(_EntrypointDesc)),
                ("n_composite_ops", ctypes.c_int32), ("composite_ops", ctypes.POINTER(ctypes.c_char_p)),
                ("init_state", _InitStateFn), ("external_weights", ctypes.POINTER(_WeightsDesc))]


class _SymbolDesc(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("min", ctypes.c_int64), ("max", ctypes.c_int64)]


class _DimDesc(ctypes.Structure):
    _fields_ = [("constant", ctypes.c_int64), ("coefs", ctypes.POINTER(ctypes.c_int64))]


_EntrySymbolsFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64),
                                   ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p),
                                   ctypes.POINTER(ctypes.c_void_p))
_EntrySymbolsWeightsFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                                          ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_void_p),
                                          ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p))


class _EntrypointSymbols(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("n_symbols", ctypes.c_int32),
                ("symbols", ctypes.POINTER(_SymbolDesc)),
                ("inputs", ctypes.POINTER(ctypes.POINTER(_DimDesc))),
                ("outputs", ctypes.POINTER(ctypes.POINTER(_DimDesc))),
                ("invoke", _EntrySymbolsFn), ("invoke_weights", _EntrySymbolsWeightsFn)]


class _ProgramSymbols(ctypes.Structure):
    _fields_ = [("n_entrypoints", ctypes.c_int32), ("entrypoints", ctypes.POINTER(_EntrypointSymbols))]


_STATUS = {0: "ok", 1: "invalid argument", 2: "unsupported", 3: "weights do not match the model (size or SHA-256)"}


class RuntimeCallError(RuntimeError):
    """A model function returned a status other than COREAI_STATUS_OK."""

    def __init__(self, function: str, status: int) -> None:
        self.status = status
        super().__init__(f"entrypoint '{function}' failed with status {status} "
                         f"({_STATUS.get(status, 'unknown status')})")


class TensorSpec:
    """Name, dtype and shape of one input, state or output."""

    __slots__ = ("name", "dtype", "shape")

    def __init__(self, name: str, dtype: DType, shape: tuple) -> None:
        self.name, self.dtype, self.shape = name, dtype, shape

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def describe(self) -> str:
        return f"{self.dtype.text}{list(self.shape)}"

    def __repr__(self) -> str:
        return f"TensorSpec({self.name!r}, {self.dtype.text}, {self.shape})"


def _specs(ptr, n) -> list:
    out = []
    for i in range(n):
        d = ptr[i]
        shape = tuple(int(d.shape[k]) for k in range(d.rank)) if d.rank > 0 else ()
        out.append(TensorSpec(d.name.decode("utf-8"), DType.from_runtime_enum(d.dtype), shape))
    return out


# ---------------------------------------------------------------------------
# executable and functions
# ---------------------------------------------------------------------------

class AIExecutable:
    """A loaded model library: descriptor, workspace and functions.

    weights: for a model generated with --weights-format external, the path
    of its weights blob (NAME_weights.bin); it is read and checked once
    (NAME_weights_check: size and SHA-256) and every call passes it. A model
    with linked weights takes none."""

    def __init__(self, library_path, prefix: str, initial_states: Mapping | None = None, weights=None) -> None:
        self.library_path = str(library_path)
        self._lib = ctypes.CDLL(self.library_path)
        try:
            get = getattr(self._lib, f"{prefix}_program")
        except AttributeError:
            raise RuntimeError(f"{library_path} has no {prefix}_program() descriptor") from None
        get.restype = ctypes.POINTER(_Program)
        get.argtypes = []
        p = get()
        if not p:
            raise RuntimeError(f"{prefix}_program() returned NULL")
        self._desc = p.contents
        d = self._desc
        self.name = d.name.decode()
        self.generator_version = d.generator_version.decode()
        self.workspace_size = int(d.workspace_size)
        self.workspace_alignment = int(d.workspace_alignment)
        self.weights_size = int(d.weights_size)
        self.composite_ops = [d.composite_ops[i].decode() for i in range(d.n_composite_ops)]
        self.external_weights = bool(d.external_weights)
        self._weights_buf = None
        self._weights_ptr = None
        if self.external_weights:
            self._load_weights(prefix, weights)
        elif weights is not None:
            raise ValueError(f"model '{self.name}' has its weights linked in; it takes no weights file")
        self._entries = {}
        for i in range(d.n_entrypoints):
            e = d.entrypoints[i]
            self._entries[e.name.decode()] = e
        # a model with symbols also publishes PREFIX_program_symbols()
        self._symbols = {}
        get_sym = getattr(self._lib, f"{prefix}_program_symbols", None)
        if get_sym is not None:
            get_sym.restype = ctypes.POINTER(_ProgramSymbols)
            get_sym.argtypes = []
            ps = get_sym()
            if not ps or ps.contents.n_entrypoints != d.n_entrypoints:
                raise RuntimeError(f"{prefix}_program_symbols() does not describe the program's entrypoints")
            for i in range(d.n_entrypoints):
                es = ps.contents.entrypoints[i]
                if es.n_symbols > 0:
                    self._symbols[es.name.decode()] = es
        align = max(self.workspace_alignment, 1)
        self._ws_buf = np.zeros(self.workspace_size + align, dtype=np.uint8)
        base = self._ws_buf.ctypes.data
        off = (-base) % align
        self._ws = self._ws_buf[off: off + self.workspace_size]
        self._ws_ptr = ctypes.c_void_p(base + off)
        self._lock = threading.Lock()
        self._initial_states = dict(initial_states or {})
        self._closed = False
        self._functions: dict = {}

    def _load_weights(self, prefix: str, weights) -> None:
        w = self._desc.external_weights.contents
        if weights is None:
            raise ValueError(f"model '{self.name}' was generated with --weights-format external: give its "
                             f"weights blob ({prefix}_weights.bin, {int(w.size)} bytes) as weights=")
        path = str(weights)
        data = np.fromfile(path, dtype=np.uint8)
        align = max(int(w.alignment), 1)
        self._weights_buf = np.zeros(data.size + align, dtype=np.uint8)
        base = self._weights_buf.ctypes.data
        off = (-base) % align
        self._weights_buf[off: off + data.size] = data
        self._weights_ptr = ctypes.c_void_p(base + off)
        check = getattr(self._lib, f"{prefix}_weights_check")
        check.restype = ctypes.c_int
        check.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        status = check(self._weights_ptr, data.size)
        if status != 0:
            why = (f"{data.size} bytes, the model's are {int(w.size)}" if data.size != int(w.size)
                   else "their SHA-256 differs (a damaged or another model's blob)")
            raise ValueError(f"weights {path}: not the weights of model '{self.name}': {why}")

    @property
    def entrypoints(self) -> list:
        return list(self._entries)

    def load_function(self, name: str) -> "AIFunction":
        self._check_open()
        if name not in self._entries:
            raise KeyError(f"the model has no entrypoint '{name}' (entrypoints: {', '.join(self._entries)})")
        if name not in self._functions:
            self._functions[name] = AIFunction(self, name, self._entries[name],
                                               self._initial_states.get(name, {}), self._symbols.get(name))
        return self._functions[name]

    def close(self) -> None:
        self._closed = True

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("the executable was closed (used outside its `async with` block)")

    def __repr__(self) -> str:
        return (f"<AIExecutable {self.name}: entrypoints {self.entrypoints}, workspace {self.workspace_size} B, "
                f"weights {self.weights_size} B>")


class _StateView(Mapping):
    def __init__(self, fn: "AIFunction") -> None:
        self._fn = fn

    def __getitem__(self, name):
        if name not in self._fn._state:
            raise KeyError(f"entrypoint '{self._fn.name}' has no state '{name}' "
                           f"(states: {', '.join(s.name for s in self._fn.states) or 'none'})")
        return NDArray.from_storage(np.array(self._fn._state[name], copy=True), self._fn._spec[name].dtype)

    def __iter__(self):
        return iter(self._fn._state)

    def __len__(self):
        return len(self._fn._state)


class AIFunction:
    """One entrypoint. `await f({"x": NDArray(x)})` returns {name: NDArray}
    for every output, then every updated state. States persist across calls;
    passing a state by name sets it first. `f.state[name]` reads a state,
    `f.reset_state()` restores the initial values."""

    def __init__(self, exe: AIExecutable, name: str, desc: _EntrypointDesc, initial: Mapping,
                 symbols: _EntrypointSymbols | None = None) -> None:
        self._exe = exe
        self.name = name
        self._desc = desc
        self.inputs = _specs(desc.inputs, desc.n_inputs)
        self.states = _specs(desc.states, desc.n_states)
        self.outputs = _specs(desc.outputs, desc.n_outputs)
        # symbolic shapes (model format 2): the specs' shapes are the largest;
        # an extent is constant + sum(coef * symbol), coefs None when fixed
        self._sym = symbols
        self.symbols = []
        self._in_dims = self._out_dims = None
        if symbols is not None:
            n = symbols.n_symbols
            self.symbols = [(symbols.symbols[k].name.decode(), int(symbols.symbols[k].min),
                             int(symbols.symbols[k].max)) for k in range(n)]

            def dims(table, specs):
                return [[(int(table[i][d].constant),
                          [int(table[i][d].coefs[k]) for k in range(n)] if table[i][d].coefs else None)
                         for d in range(len(s.shape))] for i, s in enumerate(specs)]
            self._in_dims = dims(symbols.inputs, self.inputs)
            self._out_dims = dims(symbols.outputs, self.outputs)
        self._spec = {s.name: s for s in self.inputs + self.states + self.outputs}
        self._initial = {}
        for s in self.states:
            if s.name in initial:
                v = np.asarray(initial[s.name])
                if tuple(v.shape) != s.shape:
                    raise ValueError(f"initial value of state '{s.name}' has shape {list(v.shape)}, but the model "
                                     f"expects {s.describe()}")
                self._initial[s.name] = np.array(v, dtype=s.dtype.storage, copy=True)
            elif exe._desc.init_state:
                # the initial value the generated code records (NAME_state_init)
                buf = np.zeros(s.shape, dtype=s.dtype.storage)
                status = exe._desc.init_state(s.name.encode("utf-8"), ctypes.c_void_p(buf.ctypes.data))
                if status != 0:
                    raise RuntimeCallError(f"init_state('{s.name}')", status)
                self._initial[s.name] = buf
            else:
                self._initial[s.name] = np.zeros(s.shape, dtype=s.dtype.storage)
        self._state = {}
        self.reset_state()

    @property
    def state(self) -> Mapping:
        return _StateView(self)

    def reset_state(self) -> None:
        self._state = {k: np.array(v, copy=True) for k, v in self._initial.items()}

    def _convert(self, spec: TensorSpec, value, what: str) -> np.ndarray:
        if not isinstance(value, NDArray):
            if isinstance(value, np.ndarray) or _is_torch_tensor(value):
                value = NDArray(value)
            else:
                raise TypeError(f"{what} '{spec.name}' must be an NDArray (or ndarray / torch.Tensor), "
                                f"got {type(value).__name__}")
        if value.dtype is not spec.dtype:
            got = value.dtype.text if value.dtype is not None else str(value.numpy_dtype)
            raise ValueError(f"{what} '{spec.name}' of '{self.name}' has dtype {got}, but the model expects "
                             f"{spec.describe()}")
        if self._sym is not None and spec in self.inputs:
            if len(value.shape) != len(spec.shape):
                raise ValueError(f"{what} '{spec.name}' of '{self.name}' has shape {list(value.shape)}, but the "
                                 f"model expects rank {len(spec.shape)} (at most {spec.describe()})")
        elif value.shape != spec.shape:
            raise ValueError(f"{what} '{spec.name}' of '{self.name}' has shape {list(value.shape)}, but the model "
                             f"expects {spec.describe()}")
        return np.array(value.numpy_storage(), dtype=spec.dtype.storage, order="C", copy=False)

    def _prepare(self, inputs: Mapping) -> tuple:
        if not isinstance(inputs, Mapping):
            raise TypeError(f"'{self.name}' takes a dict of name -> NDArray, got {type(inputs).__name__}")
        in_names = [s.name for s in self.inputs]
        st_names = [s.name for s in self.states]
        unknown = [k for k in inputs if k not in in_names and k not in st_names]
        if unknown:
            raise ValueError(f"'{self.name}' has no input or state named {', '.join(map(repr, unknown))} "
                             f"(inputs: {in_names or 'none'}; states: {st_names or 'none'})")
        missing = [n for n in in_names if n not in inputs]
        if missing:
            raise ValueError(f"'{self.name}' is missing input(s) {', '.join(map(repr, missing))} "
                             f"(expects {', '.join(s.name + ': ' + s.describe() for s in self.inputs)})")
        ins = [self._convert(s, inputs[s.name], "input") for s in self.inputs]
        new_states = {s.name: self._convert(s, inputs[s.name], "state") for s in self.states if s.name in inputs}
        return ins, new_states

    @staticmethod
    def _extent(dim, values) -> int:
        const, coefs = dim
        return const if coefs is None else const + sum(c * v for c, v in zip(coefs, values))

    def _bind(self, ins: list) -> list:
        """The symbols' values read off the inputs' shapes, checked against
        their ranges and against every input extent."""
        values = [None] * len(self.symbols)
        for spec, arr, dims in zip(self.inputs, ins, self._in_dims):
            for axis, (const, coefs) in enumerate(dims):
                if coefs is None or sum(1 for c in coefs if c) != 1:
                    continue
                k = next(i for i, c in enumerate(coefs) if c)
                if values[k] is not None:
                    continue
                name, lo, hi = self.symbols[k]
                rest = arr.shape[axis] - const
                if rest % coefs[k] != 0:
                    raise ValueError(f"input '{spec.name}' of '{self.name}': axis {axis} has {arr.shape[axis]} "
                                     f"elements, which no value of symbol '{name}' gives")
                v = rest // coefs[k]
                if not lo <= v <= hi:
                    raise ValueError(f"input '{spec.name}' of '{self.name}': axis {axis} has {arr.shape[axis]} "
                                     f"elements, so symbol '{name}' would be {v}, outside its range [{lo}, {hi}]")
                values[k] = v
        for k, v in enumerate(values):
            if v is None:
                raise ValueError(f"'{self.name}': no input extent is symbol '{self.symbols[k][0]}' alone, so its "
                                 f"value cannot be read from the inputs' shapes")
        for spec, arr, dims in zip(self.inputs, ins, self._in_dims):
            want = tuple(self._extent(d, values) for d in dims)
            if tuple(arr.shape) != want:
                raise ValueError(f"input '{spec.name}' of '{self.name}' has shape {list(arr.shape)}, but the "
                                 f"symbols read from the inputs ({self._symbol_text(values)}) make it {list(want)}")
        return values

    def _symbol_text(self, values) -> str:
        return ", ".join(f"{s[0]}={v}" for s, v in zip(self.symbols, values))

    def call(self, inputs: Mapping) -> dict:
        """The synchronous form of `await f(inputs)`."""
        self._exe._check_open()
        ins, new_states = self._prepare(inputs)
        with self._exe._lock:
            states = {k: np.array(new_states.get(k, v), copy=True) for k, v in self._state.items()}
            st_arrays = [states[s.name] for s in self.states]
            values = self._bind(ins) if self._sym is not None else None
            if values is None:
                outs = [np.empty(s.shape, dtype=s.dtype.storage) for s in self.outputs]
            else:  # dense at the actual extents
                outs = [np.empty(tuple(self._extent(d, values) for d in dims), dtype=s.dtype.storage)
                        for s, dims in zip(self.outputs, self._out_dims)]

            def ptrs(arrays):
                if not arrays:
                    return None
                # an empty array may have no storage; the kernels never touch it
                return (ctypes.c_void_p * len(arrays))(*[a.ctypes.data for a in arrays])

            ws, w = self._exe._ws_ptr, self._exe._weights_ptr
            if values is None and self._exe.external_weights:
                status = self._desc.invoke_weights(ws, w, ptrs(ins), ptrs(st_arrays), ptrs(outs))
            elif values is None:
                status = self._desc.invoke(ws, ptrs(ins), ptrs(st_arrays), ptrs(outs))
            else:
                sym = (ctypes.c_int64 * max(len(values), 1))(*values)
                if self._exe.external_weights:
                    status = self._sym.invoke_weights(ws, w, sym, ptrs(ins), ptrs(st_arrays), ptrs(outs))
                else:
                    status = self._sym.invoke(ws, sym, ptrs(ins), ptrs(st_arrays), ptrs(outs))
            if status != 0:
                raise RuntimeCallError(self.name, status)
            self._state = states  # commit only after success
        result = {s.name: NDArray.from_storage(o, s.dtype) for s, o in zip(self.outputs, outs)}
        for s in self.states:
            result[s.name] = NDArray.from_storage(np.array(states[s.name], copy=True), s.dtype)
        return result

    async def __call__(self, inputs: Mapping) -> dict:
        return await asyncio.to_thread(self.call, inputs)

    def __repr__(self) -> str:
        def fmt(specs):
            return ", ".join(f"{s.name}: {s.describe()}" for s in specs)
        return (f"<AIFunction {self.name}({fmt(self.inputs)}) states({fmt(self.states)}) -> "
                f"({fmt(self.outputs)})>")
