"""The compression ops (torch.ops.coreai.constexpr_blockwise_shift_scale,
lut_to_dense, quantize, dequantize): eager PyTorch against the independent
oracle (compression_oracle.py), then the converted program, run by the
NumPy interpreter and as generated C, against eager PyTorch, bit for bit.
Every combination is one output of one model, so the C is compiled once per
op family."""
import itertools

import numpy as np
import pytest
import torch

import compression_oracle as oracle
import coreai_torch  # noqa: F401  (registers torch.ops.coreai.*)
from coreai._compiler import dtypes as cdt
from coreai_torch import TorchConverter, UnsupportedOpError, get_decomp_table
from coreai_torch.testing import run_program

TORCH_FLOAT = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
QTYPES = {  # name: (container, input_dtype, bits, signed)
    "int8": (torch.int8, torch.int8, 8, True),
    "uint8": (torch.uint8, torch.uint8, 8, False),
    "int4": (torch.int8, torch.int4, 4, True),
    "uint4": (torch.uint8, torch.uint4, 4, False),
}
# data shape, scale shape: per tensor, per output channel, blocks of 8 / 4 along
# the input, 2-D blocks, a rank-3 weight, a rank-1 vector
BLOCKS = [((8, 16), (1, 1)), ((8, 16), (8, 1)), ((8, 16), (8, 2)), ((8, 16), (4, 4)),
          ((4, 6, 8), (2, 3, 2)), ((32,), (4,))]


def _same_bits(got, want, what=""):
    """Equal values, NaN where NaN, and the same sign of zero."""
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    bad = ~((got == want) & (np.signbit(got) == np.signbit(want)) | (np.isnan(got) & np.isnan(want)))
    assert not bad.any(), f"{what}: {bad.sum()} of {bad.size} differ, first at {np.argwhere(bad)[0]}: " \
                          f"{got[bad][0]!r} vs {want[bad][0]!r}"


def _f64(t):
    return t.detach().to(torch.float64).numpy() if isinstance(t, torch.Tensor) else np.asarray(t, np.float64)


def _scale(shape, dtype, g):
    # both signs (a negative scale gives -0.0 for q == zp) and a spread of magnitudes
    s = (torch.rand(shape, generator=g) * 0.9 + 0.1) * torch.where(torch.rand(shape, generator=g) < 0.3, -1.0, 1.0)
    return (s * 10.0 ** torch.randint(-3, 2, shape, generator=g).float()).to(TORCH_FLOAT[dtype])


# ---------------------------------------------------------------------------
# constexpr_blockwise_shift_scale
# ---------------------------------------------------------------------------

def _blockwise_cases():
    g = torch.Generator().manual_seed(17)
    cases = []
    for (qname, (container, logical, bits, signed)), mode, sdt, (dshape, sshape) in itertools.product(
            QTYPES.items(), ("none", "zero_point", "minval"), ("f32", "f16", "bf16"), BLOCKS):
        lo, hi = oracle.int_range(bits, signed)
        data = torch.randint(lo, hi + 1, dshape, generator=g).to(container)
        kw = {"input_dtype": logical} if bits == 4 or mode == "minval" else {}
        if mode == "zero_point":
            kw["zero_point"] = torch.randint(lo, hi + 1, sshape, generator=g).to(container)
        elif mode == "minval":
            kw["minval"] = (torch.randn(sshape, generator=g) * 4).to(TORCH_FLOAT[sdt])
        cases.append((f"{qname}-{mode}-{sdt}-{'x'.join(map(str, sshape))}", data,
                      _scale(sshape, sdt, g), kw, bits, signed, sdt))
    return cases


BLOCKWISE = _blockwise_cases()


def _blockwise_oracle(data, scale, kw, bits, signed, sdt):
    zp = kw.get("zero_point")
    mv = kw.get("minval")
    return oracle.blockwise(data.numpy(), _f64(scale), sdt, None if zp is None else zp.numpy(),
                            None if mv is None else _f64(mv), oracle.int_range(bits, signed)[0])


@pytest.mark.parametrize("case", BLOCKWISE, ids=[c[0] for c in BLOCKWISE])
def test_blockwise_eager_matches_oracle(case):
    name, data, scale, kw, bits, signed, sdt = case
    got = torch.ops.coreai.constexpr_blockwise_shift_scale(data, scale, **kw)
    assert got.dtype == scale.dtype and got.shape == data.shape
    _same_bits(_f64(got), _blockwise_oracle(data, scale, kw, bits, signed, sdt), name)


class _Outputs(torch.nn.Module):
    """forward(x) returns x + 0 and every case's op result (buffers as operands)."""

    def __init__(self, cases, call):
        super().__init__()
        self.cases = []  # per case: {argument: buffer name}, {argument: plain value}
        for i, case in enumerate(cases):
            buffers, plain = {}, {}
            for k, v in case.items():
                if isinstance(v, torch.Tensor):
                    self.register_buffer(f"c{i}_{k}", v)
                    buffers[k] = f"c{i}_{k}"
                else:
                    plain[k] = v
            self.cases.append((buffers, plain))
        self.call = call

    def forward(self, x):
        outs = [x + 0]
        for buffers, plain in self.cases:
            args = dict(plain, **{k: getattr(self, v) for k, v in buffers.items()})
            outs.append(self.call(x, **args))
        return tuple(outs)


def _convert_and_run(model, x, tmp_path):
    ep = torch.export.export(model, (x,)).run_decompositions(get_decomp_table())
    program = TorchConverter().add_exported_program(ep).to_coreai()
    program.optimize()
    interp = program.interpret("main", {"x": x.numpy()})
    c = run_program(program, [{"x": x}], workdir=str(tmp_path))[0]
    return program, interp, c


def _run_and_check(g, outs, want, tmp_path):
    """g's outputs through the interpreter and the generated C, each against
    want (eager PyTorch)."""
    from coreai import AIProgram
    from coreai._compiler import ir

    g.set_outputs(outs)
    m = ir.Module()
    m.add_graph(g)
    m.add_entrypoint("main", "main", inputs=["x"], outputs=[f"o{i}" for i in range(len(outs))])
    program = AIProgram(m)
    interp = program.interpret("main", {"x": np.zeros(1, np.float32)})
    c = run_program(program, [{"x": torch.zeros(1)}], workdir=str(tmp_path))[0]
    _check_outputs(program, interp, c, want)


def _check_outputs(program, interp, c, want):
    names = program.module.entrypoints[0].outputs
    assert len(names) == len(want) + 1
    for name, (label, w) in zip(names[1:], want):
        _same_bits(c[name], w, f"C {label}")
        iv = interp[name]
        if iv.dtype == np.uint16:  # bf16 bit patterns
            iv = cdt.small_float_to_f64(iv, cdt.DType.bf16)
        _same_bits(iv, w, f"interpreter {label}")


def test_blockwise_converted_program_matches_eager(coreai_gen, c_compiler, tmp_path):
    """Through torch.export and the converter: every data dtype x offset mode x
    scale dtype, the block shapes taking turns (torch.export costs ~40 ms an op;
    every block shape of every combination runs in the test below)."""
    picked = [i for i in range(len(BLOCKWISE)) if i % len(BLOCKS) == (i // len(BLOCKS)) % len(BLOCKS)]
    assert len(picked) == len(BLOCKWISE) // len(BLOCKS)
    cases = [dict(data=BLOCKWISE[i][1], scale=BLOCKWISE[i][2], **BLOCKWISE[i][3]) for i in picked]

    def call(x, data, scale, **kw):
        return torch.ops.coreai.constexpr_blockwise_shift_scale(data, scale, **kw)

    model = _Outputs(cases, call)
    x = torch.zeros(1)
    eager = model(x)[1:]
    program, interp, c = _convert_and_run(model, x, tmp_path)
    text = str(program)
    # 4-bit data stay 4-bit in the model; nothing was folded into a dense constant
    assert text.count("coreai.blockwise_shift_scale") == len(cases)
    assert "xi4>" in text and "xu4>" in text and "xi8>" in text and "xu8>" in text
    _check_outputs(program, interp, c, [(BLOCKWISE[i][0], _f64(e)) for i, e in zip(picked, eager)])


_IR_QUANT = {"int8": "i8", "uint8": "u8", "int4": "i4", "uint4": "u4"}


def test_blockwise_every_case_in_c(coreai_gen, c_compiler, tmp_path):
    """Every case as the converter lowers it (i8 / u8 / i4 / u4 constants; the
    minval form's offset is q_min), built with the IR builders, as generated C
    and in the interpreter, against eager PyTorch."""
    from coreai._compiler import ir
    from coreai._compiler.dialects import coreai

    g = ir.Graph("main")
    x = g.add_argument(ir.TensorType((1,), ir.f32), "x")
    outs, want = [coreai_ident(g, x)], []
    with ir.InsertionPoint(g):
        for name, data, scale, kw, bits, signed, sdt in BLOCKWISE:
            qdt = _IR_QUANT[name.split("-")[0]]
            d = coreai.constant(data.numpy().astype(np.int64), qdt)
            s = coreai.constant(scale if sdt != "bf16" else scale, sdt)
            extra = []
            if "zero_point" in kw:
                extra = [coreai.constant(kw["zero_point"].numpy().astype(np.int64), qdt)]
            elif "minval" in kw:
                extra = [coreai.constant(np.full(scale.shape, oracle.int_range(bits, signed)[0]), qdt),
                         coreai.constant(kw["minval"], sdt)]
            outs.append(coreai.blockwise_shift_scale(d, s, *extra))
            want.append((name, _f64(torch.ops.coreai.constexpr_blockwise_shift_scale(data, scale, **kw))))
    _run_and_check(g, outs, want, tmp_path)


def coreai_ident(g, x):
    from coreai._compiler import ir
    from coreai._compiler.dialects import coreai
    with ir.InsertionPoint(g):
        return coreai.add(x, coreai.constant(np.zeros(1, np.float32)))


def test_blockwise_infers_4_bits_without_input_dtype():
    """Without input_dtype constant data that fit 4 bits are stored as i4 / u4."""
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("a", torch.tensor([[-8, 7, 0, 1]], dtype=torch.int8))
            self.register_buffer("b", torch.tensor([[0, 15, 16, 1]], dtype=torch.uint8))
            self.register_buffer("s", torch.ones(1, 1))

        def forward(self, x):
            return (x + torch.ops.coreai.constexpr_blockwise_shift_scale(self.a, self.s)
                    + torch.ops.coreai.constexpr_blockwise_shift_scale(self.b, self.s))

    ep = torch.export.export(M(), (torch.zeros(1, 4),)).run_decompositions(get_decomp_table())
    text = str(TorchConverter().add_exported_program(ep).to_coreai())
    assert "tensor<1x4xi4>" in text and "tensor<1x4xu8>" in text


# ---------------------------------------------------------------------------
# lut_to_dense
# ---------------------------------------------------------------------------

def _lut_cases():
    g = torch.Generator().manual_seed(5)
    cases = []
    shape = (6, 8)
    for nbits, (vs, axis), groups, ldt in itertools.product(
            (1, 2, 4, 6, 8), ((1, 0), (2, 0), (2, 1), (3, -1)), ((1, 1), (3, 1), (2, 4)), ("f32", "f16")):
        idx = torch.randint(0, 1 << nbits, shape, generator=g).to(torch.uint8)
        lut = torch.randn(groups + (1 << nbits, vs), generator=g).to(TORCH_FLOAT[ldt])
        cases.append((f"u{nbits}-vs{vs}-axis{axis}-g{groups[0]}x{groups[1]}-{ldt}", idx, lut, axis))
    return cases


LUT = _lut_cases()


@pytest.mark.parametrize("case", LUT, ids=[c[0] for c in LUT])
def test_lut_eager_matches_oracle(case):
    name, idx, lut, axis = case
    got = torch.ops.coreai.lut_to_dense(idx, lut, axis)
    assert got.dtype == lut.dtype
    _same_bits(_f64(got), oracle.lut_to_dense(idx.numpy(), _f64(lut), axis), name)


def test_lut_converted_program_matches_eager(coreai_gen, c_compiler, tmp_path):
    """Through torch.export and the converter: every index width and vector
    layout, the group shapes and table dtypes taking turns (all of them run
    in the test below)."""
    picked = LUT[::5]
    cases = [dict(indices=i, lut=l, axis=a) for _, i, l, a in picked]
    model = _Outputs(cases, lambda x, indices, lut, axis: torch.ops.coreai.lut_to_dense(indices, lut, axis))
    x = torch.zeros(1)
    eager = model(x)[1:]
    program, interp, c = _convert_and_run(model, x, tmp_path)
    text = str(program)
    for nbits in (1, 2, 4, 6, 8):
        assert f"x8xu{nbits}>" in text
    _check_outputs(program, interp, c, [(case[0], _f64(e)) for case, e in zip(picked, eager)])


def test_lut_every_case_in_c(coreai_gen, c_compiler, tmp_path):
    from coreai._compiler import ir
    from coreai._compiler.dialects import coreai

    g = ir.Graph("main")
    x = g.add_argument(ir.TensorType((1,), ir.f32), "x")
    outs, want = [coreai_ident(g, x)], []
    with ir.InsertionPoint(g):
        for name, idx, lut, axis in LUT:
            i = coreai.constant(idx.numpy().astype(np.int64), name.split("-")[0])
            outs.append(coreai.lut_to_dense(i, coreai.constant(lut, name.split("-")[-1]), axis))
            want.append((name, _f64(torch.ops.coreai.lut_to_dense(idx, lut, axis))))
    _run_and_check(g, outs, want, tmp_path)


def test_scaled_palettization_int8_lut(coreai_gen, c_compiler, tmp_path):
    """An int8 lookup table dequantized blockwise (lut_to_dense, then
    constexpr_blockwise_shift_scale of its int8 result)."""
    g = torch.Generator().manual_seed(3)
    idx = torch.randint(0, 16, (4, 8), generator=g).to(torch.uint8)
    lut = torch.randint(-128, 128, (2, 1, 16, 1), generator=g).to(torch.int8)
    scale = _scale((4, 2), "f32", g)
    zp = torch.randint(-5, 5, (4, 2), generator=g).to(torch.int8)

    def call(x, indices, lut, scale, zero_point):
        dense = torch.ops.coreai.lut_to_dense(indices, lut, 0)
        return torch.ops.coreai.constexpr_blockwise_shift_scale(dense, scale, zero_point=zero_point)

    model = _Outputs([dict(indices=idx, lut=lut, scale=scale, zero_point=zp)], call)
    x = torch.zeros(1)
    eager = model(x)[1]
    want = oracle.blockwise(oracle.lut_to_dense(idx.numpy(), lut.numpy(), 0).astype(np.int64), _f64(scale), "f32",
                            zp.numpy())
    _same_bits(_f64(eager), want, "eager")
    program, interp, c = _convert_and_run(model, x, tmp_path)
    assert "tensor<4x8xi8>" in str(program)
    _check_outputs(program, interp, c, [("scaled lut", want)])


# ---------------------------------------------------------------------------
# quantize / dequantize (activations)
# ---------------------------------------------------------------------------

SHAPE = (3, 4, 6)
# per tensor as 0-D, as [1]; per axis 0, 1, -1 as 1-D; per axis 1 as a rank-3 [1, 4, 1] scale
GRANULARITY = [("t0", (), 0), ("t1", (1,), 0), ("a0", (3,), 0), ("a1", (4,), 1), ("a-1", (6,), -1),
               ("a1r3", (1, 4, 1), 1)]


def _quant_cases():
    g = torch.Generator().manual_seed(11)
    cases = []
    for qdt, (gname, sshape, axis), mode, xdt in itertools.product(
            (torch.int8, torch.uint8), GRANULARITY, ("none", "zero_point", "minval"), ("f32", "f16")):
        signed = qdt == torch.int8
        lo, hi = oracle.int_range(8, signed)
        scale = ((torch.rand(sshape, generator=g) * 0.2 + 0.02)).to(TORCH_FLOAT[xdt])
        kw = {"axis": axis}
        if mode == "zero_point":
            kw["zero_point"] = torch.randint(lo // 2, hi // 2 + 1, sshape, generator=g).to(qdt)
        elif mode == "minval":
            kw["minval"] = (torch.randn(sshape, generator=g)).to(TORCH_FLOAT[xdt])
        cases.append((f"{_name(qdt)}-{gname}-{mode}-{xdt}", qdt, scale, kw, xdt))
    return cases


def _name(dt):
    return str(dt).replace("torch.", "")


QUANT = _quant_cases()


def _activation(xdt):
    """Values over and beyond the quantized range, and exact halves of the
    scale (ties round to even)."""
    g = torch.Generator().manual_seed(23)
    x = torch.randn(SHAPE, generator=g) * 20
    x.view(-1)[:6] = torch.tensor([0.0, -0.0, 1e9, -1e9, 12.5, -12.5])
    return x.to(TORCH_FLOAT[xdt])


def _quant_oracle(x, qdt, scale, kw, xdt):
    zp, mv = kw.get("zero_point"), kw.get("minval")
    return oracle.quantize(_f64(x), _f64(scale), xdt, 8, qdt == torch.int8, kw["axis"],
                           None if zp is None else zp.numpy(), None if mv is None else _f64(mv))


@pytest.mark.parametrize("case", QUANT, ids=[c[0] for c in QUANT])
def test_quantize_dequantize_eager_match_oracle(case):
    name, qdt, scale, kw, xdt = case
    x = _activation(xdt)
    q = torch.ops.coreai.quantize(x, scale, qdt, **kw)
    assert q.dtype == qdt
    want_q = _quant_oracle(x, qdt, scale, kw, xdt)
    assert np.array_equal(q.numpy().astype(np.int64), want_q), name
    dkw = dict(kw)
    if "minval" in dkw:
        dkw["input_dtype"] = qdt
    y = torch.ops.coreai.dequantize(q, scale, **dkw)
    zp, mv = kw.get("zero_point"), kw.get("minval")
    want_y = oracle.dequantize(want_q, _f64(scale), xdt, kw["axis"], None if zp is None else zp.numpy(),
                               None if mv is None else _f64(mv), oracle.int_range(8, qdt == torch.int8)[0])
    _same_bits(_f64(y), want_y, name)


@pytest.mark.parametrize("xdt", ["f32", "f16"])
def test_quantize_dequantize_converted_program_matches_eager(xdt, coreai_gen, c_compiler, tmp_path):
    cases = [c for c in QUANT if c[4] == xdt]

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.specs = []
            for i, (_, qdt, scale, kw, _) in enumerate(cases):
                self.register_buffer(f"s{i}", scale)
                for k in ("zero_point", "minval"):
                    if k in kw:
                        self.register_buffer(f"{k}{i}", kw[k])
                self.specs.append((qdt, kw["axis"], "zero_point" in kw, "minval" in kw))

        def forward(self, x):
            outs = []
            for i, (qdt, axis, has_zp, has_mv) in enumerate(self.specs):
                s = getattr(self, f"s{i}")
                extra = {}
                if has_zp:
                    extra["zero_point"] = getattr(self, f"zero_point{i}")
                if has_mv:
                    extra["minval"] = getattr(self, f"minval{i}")
                q = torch.ops.coreai.quantize(x, s, qdt, axis=axis, **extra)
                if has_mv:
                    extra["input_dtype"] = qdt
                outs += [q, torch.ops.coreai.dequantize(q, s, axis=axis, **extra)]
            return tuple(outs)

    model = M()
    x = _activation(xdt)
    eager = model(x)
    ep = torch.export.export(model, (x,)).run_decompositions(get_decomp_table())
    program = TorchConverter().add_exported_program(ep).to_coreai()
    text = str(program)
    assert text.count("coreai.quantize") == len(cases) and text.count("coreai.dequantize") == len(cases)
    program.optimize()
    interp = program.interpret("main", {"x": x.numpy() if xdt != "bf16" else x})
    c = run_program(program, [{"x": x}], workdir=str(tmp_path))[0]
    names = program.module.entrypoints[0].outputs
    for i, case in enumerate(cases):
        for j, e in enumerate(eager[2 * i: 2 * i + 2]):
            name = names[2 * i + j]
            label = f"{case[0]} {'quantize' if j == 0 else 'dequantize'}"
            if j == 0:
                assert c[name].dtype == e.numpy().dtype, label
                assert np.array_equal(c[name], e.numpy()), label
                assert np.array_equal(interp[name], e.numpy()), label
            else:
                _same_bits(c[name], _f64(e), label)
                _same_bits(interp[name], _f64(e), label)


def test_dequantize_constant_weight_per_axis_int4(coreai_gen, c_compiler, tmp_path):
    """coreai::dequantize of an int4 weight with a per-output-channel scale."""
    g = torch.Generator().manual_seed(2)
    w = torch.randint(-8, 8, (6, 16), generator=g).to(torch.int8)
    s = _scale((6,), "f32", g)

    def call(x, w, s):
        return torch.ops.coreai.dequantize(w, s, axis=0, input_dtype=torch.int4)

    model = _Outputs([dict(w=w, s=s)], call)
    x = torch.zeros(1)
    want = oracle.dequantize(w.numpy(), _f64(s), "f32", 0)
    _same_bits(_f64(model(x)[1]), want, "eager")
    program, interp, c = _convert_and_run(model, x, tmp_path)
    assert "tensor<6x16xi4>" in str(program)
    _check_outputs(program, interp, c, [("dequantize int4", want)])


# ---------------------------------------------------------------------------
# the packed layout
# ---------------------------------------------------------------------------

# (dtype, values, bytes worked out by hand: element i in bits [i*b, i*b+b), LSB first)
PACKED = [
    ("u4", [1, 2, 3, 4, 15], [0x21, 0x43, 0x0F]),
    ("i4", [-1, 7, -8], [0x7F, 0x08]),
    ("u2", [1, 2, 3, 0, 3], [0x39, 0x03]),
    ("u1", [1, 1, 0, 1, 0, 0, 0, 1, 1], [0x8B, 0x01]),
    ("u6", [63, 1, 2, 3], [0x7F, 0x20, 0x0C]),
    ("u6", [0, 63, 0], [0xC0, 0x0F, 0x00]),
]


@pytest.mark.parametrize("dtype,values,expected", PACKED)
def test_packed_layout(dtype, values, expected):
    dt = cdt.DType.from_any(dtype)
    assert list(oracle.pack(values, dt.bits)) == expected
    assert list(cdt.pack_bits(values, dt)) == expected
    assert cdt.unpack_bits(bytes(expected), dt, len(values)).tolist() == values


@pytest.mark.parametrize("dtype,values,expected", PACKED)
def test_packed_constant_in_the_weights_file(dtype, values, expected, tmp_path, gen_print):
    """Serialized: the weights file holds the packed bytes; inline text packs to
    the same bytes in coreai-gen (print shows the values back)."""
    from coreai._compiler import ir
    from coreai._compiler.dialects import coreai
    from coreai import AIProgram

    n = len(values)
    lut = np.zeros((1 << cdt.DType.from_any(dtype).bits, 1), dtype=np.float32)
    g = ir.Graph("main")
    x = g.add_argument(ir.TensorType((n,), ir.f32), "x")
    with ir.InsertionPoint(g):
        if dtype.startswith("i"):
            c = coreai.constant(np.array(values), dtype=dtype)
            d = coreai.blockwise_shift_scale(c, coreai.constant(np.ones(1, np.float32)))
        else:
            c = coreai.constant(np.array(values), dtype=dtype)
            d = coreai.lut_to_dense(c, coreai.constant(lut[None]), 0)
        y = coreai.add(x, d)
    g.set_outputs([y])
    m = ir.Module()
    m.add_graph(g)
    m.add_entrypoint("main", "main", inputs=["x"], outputs=["y"])
    program = AIProgram(m)
    from coreai._compiler import serialize
    const_op = c.op
    assert serialize.constant_bytes(const_op) == bytes(expected)
    path = program.save(tmp_path / "m")
    printed = gen_print(path)
    assert f"dense<[{', '.join(map(str, values))}]> : tensor<{n}x{dtype}>" in printed


# ---------------------------------------------------------------------------
# refusals
# ---------------------------------------------------------------------------

def test_scale_that_does_not_divide_is_refused_eager_and_at_export():
    data = torch.zeros(4, 16, dtype=torch.int8)
    with pytest.raises(ValueError, match=r"scale shape \[3, 2\] does not divide input shape \[4, 16\] "
                                         r"\(axis 0: 4 is not a multiple of 3\)"):
        torch.ops.coreai.constexpr_blockwise_shift_scale(data, torch.ones(3, 2))

    class M(torch.nn.Module):
        def forward(self, x):
            return x + torch.ops.coreai.constexpr_blockwise_shift_scale(data, torch.ones(4, 5))

    with pytest.raises(ValueError, match=r"axis 1: 16 is not a multiple of 5"):
        torch.export.export(M(), (torch.zeros(4, 16),))


@pytest.mark.parametrize("call,message", [
    (lambda: torch.ops.coreai.constexpr_blockwise_shift_scale(torch.zeros(4, 4, dtype=torch.int8), torch.ones(4)),
     "scale has rank 1 but input has rank 2"),
    (lambda: torch.ops.coreai.constexpr_blockwise_shift_scale(torch.zeros(4, dtype=torch.int8), torch.ones(2),
                                                             minval=torch.ones(2)),
     "minval needs input_dtype"),
    (lambda: torch.ops.coreai.constexpr_blockwise_shift_scale(torch.zeros(4, dtype=torch.int8), torch.ones(2),
                                                             zero_point=torch.zeros(2, dtype=torch.uint8)),
     "zero_point is uint8 but must be int8"),
    (lambda: torch.ops.coreai.constexpr_blockwise_shift_scale(torch.zeros(4, dtype=torch.int8), torch.ones(2),
                                                             zero_point=torch.zeros(2, dtype=torch.int8),
                                                             minval=torch.ones(2)),
     "exclude each other"),
    (lambda: torch.ops.coreai.constexpr_blockwise_shift_scale(torch.full((4,), 9, dtype=torch.int8), torch.ones(2),
                                                             input_dtype=torch.int4),
     r"values in \[9, 9\], outside the int4 range \[-8, 7\]"),
    (lambda: torch.ops.coreai.constexpr_blockwise_shift_scale(torch.zeros(4, dtype=torch.uint8), torch.ones(2),
                                                             input_dtype=torch.int4),
     "int4 values are held in int8 tensors, but input is uint8"),
    (lambda: torch.ops.coreai.constexpr_blockwise_shift_scale(torch.zeros(4, dtype=torch.int8), torch.ones(2),
                                                             output_dtype=torch.float16),
     "output_dtype float16 differs from the scale's float32"),
    (lambda: torch.ops.coreai.lut_to_dense(torch.zeros(4, dtype=torch.uint8), torch.ones(1, 8, 1), 0),
     "3-bit indices"),
    (lambda: torch.ops.coreai.lut_to_dense(torch.zeros(4, dtype=torch.uint8), torch.ones(3, 4, 1), 0),
     r"lut shape \[3, 4, 1\] does not divide indices shape \[4\]"),
    (lambda: torch.ops.coreai.lut_to_dense(torch.full((4,), 4, dtype=torch.uint8), torch.ones(1, 4, 1), 0),
     r"outside \[0, 4\)"),
    (lambda: torch.ops.coreai.quantize(torch.ones(4), torch.ones(()), torch.int4),
     "output_dtype int4 is not supported"),
    (lambda: torch.ops.coreai.quantize(torch.ones(2, 4), torch.ones(4, 1), torch.int8, axis=1),
     r"scale shape \[4, 1\] does not lie along axis 1"),
    (lambda: torch.ops.coreai.quantize(torch.ones(2, 4), torch.ones(3), torch.int8, axis=1),
     "scale has 3 elements"),
    (lambda: torch.ops.coreai.dequantize(torch.zeros(4, dtype=torch.int8), torch.ones(4), axis=2),
     "axis 2 is out of range"),
])
def test_bad_arguments_are_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_converter_refuses_data_outside_the_input_dtype():
    """torch.export runs the fake kernel (no values); the converter checks them."""
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("q", torch.tensor([[9, 1]], dtype=torch.int8))
            self.register_buffer("s", torch.ones(1, 1))

        def forward(self, x):
            return x + torch.ops.coreai.constexpr_blockwise_shift_scale(self.q, self.s, input_dtype=torch.int4)

    ep = torch.export.export(M(), (torch.zeros(1, 2),)).run_decompositions(get_decomp_table())
    with pytest.raises(UnsupportedOpError, match=r"test_compression_ops\.py:\d+: .*input \('b_q'\) holds values in "
                                                 r"\[1, 9\], outside the i4 range \[-8, 7\]"):
        TorchConverter().add_exported_program(ep).to_coreai()


_MODEL = """<?xml version="1.0" encoding="UTF-8"?>
<coreai-model format="1">
  <graph name="main">
    <arg id="x" dtype="f32" shape="4 16"/>
{body}
    <output><value ref="{out}"/></output>
  </graph>
  <entrypoint name="main" graph="main"><input name="x"/><output name="y"/></entrypoint>
</coreai-model>
"""

_BW = """    <const id="q" dtype="{qdt}" shape="4 16" offset="0" length="{length}"/>
    <const id="s" dtype="f32" shape="{sshape}">{svals}</const>
    <op kind="coreai.blockwise_shift_scale">
      <operand ref="q"/><operand ref="s"/>
      <result id="w" dtype="f32" shape="4 16"/>
    </op>
    <op kind="coreai.add"><operand ref="x"/><operand ref="w"/><result id="y" dtype="f32" shape="4 16"/></op>"""


def _write(tmp_path, body, out="y", weights=b""):
    text = _MODEL.format(body=body, out=out)
    if weights:
        import hashlib
        (tmp_path / "m.weights").write_bytes(weights)
        text = text.replace('<coreai-model format="1">', f'<coreai-model format="1">\n  <weights href="m.weights" '
                            f'size="{len(weights)}" sha256="{hashlib.sha256(weights).hexdigest()}"/>')
    path = tmp_path / "m.xml"
    path.write_text(text)
    return path


def _line_of(path, needle):
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


@pytest.mark.parametrize("sshape,message", [
    ("3 2", r"the scale tensor<3x2xf32> does not divide the data tensor<4x16xi4> \(axis 0: 4 is not a "
            r"multiple of 3\)"),
    ("4 5", r"\(axis 1: 16 is not a multiple of 5\)"),
    ("4", r"the scale tensor<4xf32> must have the rank of the data tensor<4x16xi4>"),
])
def test_generator_refuses_a_scale_that_does_not_divide(sshape, message, tmp_path, gen_check):
    n = int(np.prod([int(d) for d in sshape.split()]))
    path = _write(tmp_path, _BW.format(qdt="i4", length=32, sshape=sshape, svals=" ".join(["1"] * n)),
                  weights=bytes(32))
    r = gen_check(path)
    assert r.returncode == 1
    line = _line_of(path, 'kind="coreai.blockwise_shift_scale"')
    assert r.stderr.startswith(f"{path}:{line}: error: coreai.blockwise_shift_scale: ")
    import re
    assert re.search(message, r.stderr), r.stderr


@pytest.mark.parametrize("body,out,needle,message", [
    # a packed constant's length is ceil(numel * bits / 8)
    (_BW.format(qdt="u4", length=64, sshape="1 1", svals="1"), "y", '<const id="q"',
     r"constant 'q' has length 64, but tensor<4x16xu4> needs 32 bytes"),
    # inline values are checked against the packed range
    ('    <const id="q" dtype="i4" shape="2">-8 8</const>', "q", '<const id="q"',
     r"constant 'q': value 2 \('8'\) is out of range for i4"),
    # packed dtypes are constants that a decompressing op reads, nothing else
    ('    <const id="q" dtype="u2" shape="2">1 3</const>', "q", "<output>",
     r"@main returns 'q' of dtype u2: sub-byte dtypes are only allowed for constants"),
    ('    <const id="q" dtype="u4" shape="4 16" offset="0" length="32"/>\n'
     '    <op kind="coreai.reshape"><operand ref="q"/><result id="r" dtype="u4" shape="64"/></op>',
     "x", 'kind="coreai.reshape"', r"coreai.reshape: the operand is tensor<4x16xu4>; the op supports f32, f16, bf16, i32, i64, bool, i8, u8$"),
    ('    <const id="i" dtype="u4" shape="4 16" offset="0" length="32"/>\n'
     '    <const id="l" dtype="f32" shape="1 1 8 1" offset="0" length="32"/>\n'
     '    <op kind="coreai.lut_to_dense"><operand ref="i"/><operand ref="l"/>\n'
     '      <attr name="axis" type="si64">0</attr><result id="d" dtype="f32" shape="4 16"/></op>',
     "x", 'kind="coreai.lut_to_dense"', r"the lookup table tensor<1x1x8x1xf32> has 8 palettes but u4 indices need 16"),
])
def test_generator_refuses_bad_packed_models(body, out, needle, message, tmp_path, gen_check):
    path = _write(tmp_path, body, out=out, weights=bytes(64))
    r = gen_check(path)
    assert r.returncode == 1
    import re
    line = _line_of(path, needle)
    assert r.stderr.startswith(f"{path}:{line}: error: "), r.stderr
    assert re.search(message, r.stderr), r.stderr
