"""`coreai-gen generate --int8-activations` writes a layer's weight integers
and scales in coreai_linear_q8a_f32's panels at generation time
(runtime-stubs/include/coreai/kernels/linear_q.h, the comment above
COREAI_LINEAR_Q8A_NR; docs/compression.md). The bytes of every weights form
(C initializers, the incbin blob, the external blob) are checked against the
layout built here from that comment's words alone, for 20 outputs (a last
panel of 4 and 12 padding outputs), 64 inputs, blocks of 32, i8 / i4 / u4
data; the zero point stays as stored, and the forms as stored are emitted
only while something else reads them.

Without that option a layer reads the same panels through
coreai_linear_qp_f32 (f32 activations) where its last panel pads at most an
eighth of its outputs, else its constants as stored.

Nothing here runs the kernels: the layers' numbers against eager PyTorch are
test_compression_int8_activations.py's and test_compression_models.py's.
"""
import hashlib
import re
import struct
import subprocess

import numpy as np
import pytest
from weights_dump import SIZES, external_bytes, linked_arrays, linked_bytes

OUT, IN, BLOCK, NR = 20, 64, 32, 16
BLOCKS = IN // BLOCK
SNAN, QNAN = 0x7F800001, 0x7FC00000


def oracle_weight(q, bits, n_out=OUT):
    """The panels, byte after byte, as linear_q.h words them: outputs in
    panels of 16, a panel's integers in groups of 64 bytes, one dword per
    output holding 4 consecutive inputs (8-bit: byte k of output o's dword
    in group g is q[o][4g + k]) or 8 (4-bit: the low nibble of byte k is
    q[o][8g + k], the high one q[o][8g + 4 + k]); padding outputs zero."""
    per = 4 if bits == 8 else 8
    out = bytearray()
    for panel in range((n_out + NR - 1) // NR):
        for g in range(IN // per):
            for lane in range(NR):
                o = panel * NR + lane
                for k in range(4):
                    if o >= n_out:
                        out.append(0)
                    elif bits == 8:
                        out.append(int(q[o][4 * g + k]) & 0xFF)
                    else:
                        out.append((int(q[o][8 * g + k]) & 15) | (int(q[o][8 * g + 4 + k]) & 15) << 4)
    return bytes(out)


def oracle_scale(bits32, n_out=OUT):
    """f32 [panel][block][16] (the bits), padding outputs 0.0f, every NaN
    the quiet one the generated weights hold."""
    out = []
    for panel in range((n_out + NR - 1) // NR):
        for b in range(BLOCKS):
            for lane in range(NR):
                o = panel * NR + lane
                v = int(bits32[o][b]) if o < n_out else 0
                if (v & 0x7F800000) == 0x7F800000 and v & 0x7FFFFF:
                    v = QNAN
                out.append(v)
    return struct.pack(f"<{len(out)}I", *out)


def stored(values, dtype):
    """The model's bytes of integers (model-format.md, "Packed integers")."""
    flat = [int(v) for v in np.asarray(values).reshape(-1)]
    if dtype in ("i8", "u8"):
        return bytes(v & 0xFF for v in flat)
    return bytes((flat[i] & 15) | (flat[i + 1] & 15) << 4 for i in range(0, len(flat), 2))


def make_model(tmp_path, dtype, zero, shared, n_out=OUT):
    """x [3, 64] -> coreai.linear on blockwise_shift_scale(q, s[, z]) (+ bias);
    with `shared`, q and s are read as stored too: s is a graph output and q
    a second dequantization's (a fallback whose result is an output)."""
    rng = np.random.default_rng({"i8": 1, "i4": 2, "u4": 3}[dtype] + 10 * shared)
    lo, hi = {"i8": (-128, 127), "i4": (-8, 7), "u4": (0, 15)}[dtype]
    q = rng.integers(lo, hi + 1, size=(n_out, IN))
    s = (rng.integers(1, 1024, size=(n_out, BLOCKS)) / 4096.0).astype(np.float32)
    s_bits = s.view(np.uint32).copy()
    s_bits[n_out - 1][1] = SNAN  # a signalling NaN: the generated weights hold the quiet one
    z = rng.integers(lo, hi + 1, size=(n_out, BLOCKS))
    blob = bytearray()

    def const(cid, dt, shape, data):
        nonlocal blob
        while len(blob) % 64:
            blob.append(0)
        at = len(blob)
        blob += data
        return f'    <const id="{cid}" dtype="{dt}" shape="{shape}" offset="{at}" length="{len(data)}"/>\n'

    consts = const("q", dtype, f"{n_out} {IN}", stored(q, dtype))
    consts += const("s", "f32", f"{n_out} {BLOCKS}", s_bits.astype("<u4").tobytes())
    if zero:
        consts += const("z", dtype, f"{n_out} {BLOCKS}", stored(z, dtype))
    consts += const("b", "f32", f"{n_out}", np.linspace(-1, 1, n_out, dtype="<f4").tobytes())
    zop = '<operand ref="z"/>' if zero else ""
    extra = ""
    outs = '<value ref="y"/>'
    names = '<output name="y"/>'
    if shared:
        extra = f"""    <op kind="coreai.blockwise_shift_scale">
      <operand ref="q"/><operand ref="s"/>
      <result id="w2" dtype="f32" shape="{n_out} {IN}"/>
    </op>
"""
        outs += '<value ref="s"/><value ref="w2"/>'
        names += '<output name="s"/><output name="w2"/>'
    (tmp_path / "m.weights").write_bytes(bytes(blob))
    xml = f"""<?xml version="1.0" encoding="UTF-8"?>
<coreai-model format="1">
  <weights href="m.weights" size="{len(blob)}" sha256="{hashlib.sha256(bytes(blob)).hexdigest()}"/>
  <graph name="main">
    <arg id="x" dtype="f32" shape="3 {IN}" name="x"/>
{consts}    <op kind="coreai.blockwise_shift_scale">
      <operand ref="q"/><operand ref="s"/>{zop}
      <result id="w" dtype="f32" shape="{n_out} {IN}"/>
    </op>
    <op kind="coreai.linear">
      <operand ref="x"/><operand ref="w"/><operand ref="b"/>
      <result id="y" dtype="f32" shape="3 {n_out}"/>
    </op>
{extra}    <output>{outs}</output>
  </graph>
  <entrypoint name="main" graph="main"><input name="x"/>{names}</entrypoint>
</coreai-model>
"""
    path = tmp_path / "m.xml"
    path.write_text(xml)
    return path, q, s_bits, z


def generate(coreai_gen, model, out, fmt, a8=True):
    cmd = [coreai_gen, "generate", str(model), "-o", str(out), "--prefix", "m", "--weights-format", fmt, "--stats"]
    r = subprocess.run(cmd + (["--int8-activations"] if a8 else []), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("dtype,zero,shared", [("i4", False, False), ("i8", False, False), ("u4", True, False),
                                               ("i4", True, True)])
def test_int8_activation_panels(dtype, zero, shared, coreai_gen, c_compiler, tmp_path):
    model, q, s_bits, z = make_model(tmp_path, dtype, zero, shared)
    bits = 8 if dtype == "i8" else 4
    want_w, want_s = oracle_weight(q, bits), oracle_scale(s_bits)
    assert len(want_w) == 2 * NR * IN * bits // 8 and len(want_s) == 2 * NR * BLOCKS * 4
    for fmt in ("c", "incbin", "external"):
        out = tmp_path / fmt
        stats = generate(coreai_gen, model, out, fmt)
        src = (out / "m.c").read_text()
        # the layer reads its data and scale in the panels, the zero point as stored
        call = re.search(r"coreai_linear_q8a_f32\(&\w+, a0, (\w+), (\w+), ([^,]+), (\w+),", src)
        assert call, src
        # constants in model order: q, s, z
        plain_w, plain_s, plain_z = "m_g0_c0", "m_g0_c1", "m_g0_c2"
        sym_w, sym_s = plain_w + "_q8a", plain_s + "_q8a_scale"
        assert call.groups()[:3] == (sym_w, sym_s, "(const uint8_t *)" + plain_z if zero else "NULL"), call[0]
        if fmt == "external":
            got = external_bytes(out, src)
            assert got[sym_w][:len(want_w)] == want_w and got[sym_s][:len(want_s)] == want_s
        else:
            arrays = linked_arrays(src)
            assert arrays[sym_w] == ("uint8_t", len(want_w)) and arrays[sym_s] == ("float", len(want_s) // 4)
            got = linked_bytes(c_compiler, out, arrays, fmt)
            assert got[sym_w] == want_w and got[sym_s] == want_s
            # weight_bytes: the arrays emitted, nothing more
            total = sum(SIZES[t] * c for t, c in arrays.values())
            assert f"weight_bytes {total}\n" in stats, stats
        # the forms as stored only while something else reads them
        assert (plain_w in got) == shared and (plain_s in got) == shared, sorted(got)
        if shared:
            quiet = np.where(s_bits == SNAN, QNAN, s_bits).astype("<u4").tobytes()
            assert got[plain_w][:len(stored(q, dtype))] == stored(q, dtype)
            assert got[plain_s][:len(quiet)] == quiet
        if zero:
            assert got[plain_z][:len(stored(z, dtype))] == stored(z, dtype)
        lines = [ln.split() for ln in stats.splitlines() if ln.startswith("compressed_weight ") and "%w " in ln]
        assert len(lines) == 1 and lines[0][-1] == "fused_int8_activations", stats
        assert int(lines[0][6]) == len(want_w), lines  # packed_bytes: the panels the layer reads


@pytest.mark.parametrize("n_out", [32, 120])
def test_default_reads_panels(n_out, coreai_gen, c_compiler, tmp_path):
    """Without --int8-activations a layer whose last panel pads at most an
    eighth of its outputs (none of 32; 8 of 120) reads the same panels
    through coreai_linear_qp_f32 (f32 activations): the bytes against the
    oracle, the stored forms gone."""
    model, q, s_bits, _ = make_model(tmp_path, "i4", True, False, n_out)
    want_w, want_s = oracle_weight(q, 4, n_out), oracle_scale(s_bits, n_out)
    out = tmp_path / "c"
    stats = generate(coreai_gen, model, out, "c", a8=False)
    src = (out / "m.c").read_text()
    call = re.search(r"coreai_linear_qp_f32\(&\w+, a0, (\w+), (\w+), ([^,]+), (\w+),", src)
    assert call and "coreai_linear_q_f32(" not in src and "coreai_linear_q8a_f32(" not in src, src
    assert call.groups()[:3] == ("m_g0_c0_q8a", "m_g0_c1_q8a_scale", "(const uint8_t *)m_g0_c2"), call[0]
    arrays = linked_arrays(src)
    got = linked_bytes(c_compiler, out, arrays, "c")
    assert got["m_g0_c0_q8a"] == want_w and got["m_g0_c1_q8a_scale"] == want_s
    assert "m_g0_c0" not in got and "m_g0_c1" not in got
    lines = [ln.split() for ln in stats.splitlines() if ln.startswith("compressed_weight ") and "%w " in ln]
    assert len(lines) == 1 and lines[0][-1] == "fused" and int(lines[0][6]) == len(want_w), stats


def test_default_keeps_small_layers_as_stored(coreai_gen, c_compiler, tmp_path):
    """Without --int8-activations a layer of 20 outputs (12 of padding in
    its second panel: more than an eighth) reads its constants as stored
    and no panels are emitted."""
    model, q, _, _ = make_model(tmp_path, "i4", True, False)
    out = tmp_path / "c"
    stats = generate(coreai_gen, model, out, "c", a8=False)
    src = (out / "m.c").read_text()
    assert "coreai_linear_q_f32(" in src and "coreai_linear_qp_f32(" not in src and "_q8a" not in src
    arrays = linked_arrays(src)
    got = linked_bytes(c_compiler, out, arrays, "c")
    assert got["m_g0_c0"] == stored(q, "i4")
    assert f"packed_bytes {OUT * IN // 2} " in stats, stats
