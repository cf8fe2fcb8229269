"""Per-op sweep of the composite ops (docs/composite-ops.md).

Every module-class composite (``coreai_torch.composite_ops``, externalized
with ``COMPOSITE_SPECS``) and every ATen-derived one the converter emits is
run over attribute combinations and shapes (odd sizes, batch > 1,
``Tq != Tkv``, GQA/MQA, masks, sinks, windows, RoPE modes, partial dims, ...).
Cases of one family are batched into one program (one entrypoint, inputs
``c<i>_<name>``, outputs ``c<i>_o<j>``), which is converted once, then
generated and compiled twice: with the composite kernels and with
``--no-composite-kernels`` (``composite_kernels=False``).  For each case:

* the kernel path equals PyTorch eager within 1e-5 (f32);
* the body path (``--no-composite-kernels``) equals eager and the kernel
  path within 1e-5;
* the generated C implements the case's composite graph as one direct
  call of the expected kernel (``return coreai_<op>_f32(&...``), and the
  body build calls none.
"""
from __future__ import annotations

import collections
import math
import re
import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import coreai_torch
from coreai_torch import TorchConverter, get_decomp_table
from coreai_torch.composite_ops import (COMPOSITE_SPECS, SDPA, GatedDeltaUpdate, GatherMM, RMSNorm, RMSNormImpl,
                                        RoPE, SwiGLU, SwiGLUImpl)
from coreai_torch.testing import max_abs_diff

ATOL = 1e-5

KERNELS = {
    "rms_norm": "coreai_rms_norm_f32",
    "layer_norm": "coreai_layer_norm_f32",
    "batch_norm": "coreai_batch_norm_f32",
    "group_norm": "coreai_group_norm_f32",
    "instance_norm": "coreai_instance_norm_f32",
    "rope": "coreai_rope_f32",
    "scaled_dot_product_attention": "coreai_sdpa_f32",
    "gather_mm": "coreai_gather_mm_f32",
    "gated_delta_update": "coreai_gated_delta_update_f32",
    "pixel_shuffle": "coreai_pixel_shuffle_f32",
    "log_softmax": "coreai_log_softmax_f32",
    "hard_sigmoid": "coreai_hard_sigmoid_f32",
    "linalg_vector_norm": "coreai_linalg_vector_norm_f32",
    "swiglu": "coreai_swiglu_f32",
}


class Fn(nn.Module):
    """A functional ATen op as a module (so its nodes get a module path)."""

    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, input):
        return self.f(input)


class Case:
    """``op``: the composite op the case must hit (``n_calls`` graphs of it).

    ``empty_rows``: SDPA with query rows that see no key.  The reference
    adds -1e4 to every logit of such a row, which f32 rounds to a multiple
    of 2**-10, so f32 eager is off the exact value (the plain softmax) by
    ~1e-4; the kernel computes the exact value.  There the kernel is
    compared with eager evaluated in float64, the body (which repeats the
    reference's f32 arithmetic) with f32 eager, and body vs kernel within
    the reference's own rounding (2e-3)."""

    def __init__(self, cid, module, inputs, op, n_calls=1, empty_rows=False):
        self.id = cid
        self.module = module.eval()
        self.inputs = collections.OrderedDict(inputs)
        self.op = op
        self.n_calls = n_calls
        self.empty_rows = empty_rows

    def eager(self, f64=False):
        feed = {n: (t.double() if f64 and t.is_floating_point() else t).clone() for n, t in self.inputs.items()}
        module = self.module.double() if f64 else self.module
        try:
            with torch.no_grad():
                r = module(**feed)
        finally:
            if f64:
                self.module.float()
        r = list(r) if isinstance(r, (tuple, list)) else [r]
        return [t.float() if t.is_floating_point() else t for t in r]


class Bundle(nn.Module):
    """All cases of a family side by side: ``forward(**{c<i>_<name>: tensor})``."""

    def __init__(self, cases):
        super().__init__()
        self.cases = nn.ModuleList([c.module for c in cases])
        self.names = [list(c.inputs) for c in cases]

    def forward(self, **kw):
        outs = []
        for i, (m, names) in enumerate(zip(self.cases, self.names)):
            r = m(**{n: kw[f"c{i}_{n}"] for n in names})
            outs.extend(r if isinstance(r, (tuple, list)) else [r])
        return tuple(outs)


def _g(*shape, scale=1.0):
    return torch.randn(*shape) * scale


# ---------------------------------------------------------------------------
# the cases
# ---------------------------------------------------------------------------


def _rms_norm_cases():
    heads = RMSNorm(6, eps=1e-6, n_heads=3)
    with torch.no_grad():
        heads.weight.copy_(torch.rand(3, 1, 6) + 0.5)
    return [
        Case("scale_last", RMSNormImpl(eps=1e-5), {"input": _g(3, 7), "scale": _g(7)}, "rms_norm"),
        Case("noscale_odd", RMSNormImpl(eps=1e-6), {"input": _g(2, 5, 9, scale=3)}, "rms_norm"),
        Case("two_axes", RMSNormImpl(axes=[-2, -1], eps=1e-4), {"input": _g(2, 3, 4, 5), "scale": _g(4, 5)},
             "rms_norm"),
        Case("middle_axis", RMSNormImpl(axes=1), {"input": _g(2, 6, 3), "scale": _g(6, 1)}, "rms_norm"),
        Case("per_head_scale", heads, {"x": _g(2, 3, 5, 6)}, "rms_norm"),
        Case("single_row", RMSNormImpl(), {"input": _g(1, 1, 13) + 5, "scale": _g(13)}, "rms_norm"),
    ]


def _rope_cases():
    pos = torch.randint(0, 40, (2, 5))
    return [
        Case("half_default_pos", RoPE(), {"input": _g(2, 3, 5, 8)}, "rope"),
        Case("interleaved_scale_base", RoPE(scale=0.5, base=500.0, interleaved=True), {"input": _g(1, 2, 7, 6)},
             "rope"),
        Case("cos_sin_shared", RoPE(), {"input": _g(2, 3, 5, 8), "cos": torch.rand(5, 4), "sin": torch.rand(5, 4)},
             "rope"),
        Case("cos_sin_batched_interleaved", RoPE(interleaved=True),
             {"input": _g(2, 3, 5, 8), "cos": torch.rand(2, 1, 5, 4), "sin": torch.rand(2, 1, 5, 4)}, "rope"),
        Case("cos_sin_partial", RoPE(dims=4), {"input": _g(2, 2, 3, 10), "cos": torch.rand(3, 2),
                                               "sin": torch.rand(3, 2)}, "rope"),
        Case("position_ids_i64", RoPE(), {"input": _g(2, 3, 5, 8), "position_ids": pos}, "rope"),
        Case("position_ids_i32_freqs_partial", RoPE(dims=6, scale=2.0),
             {"input": _g(2, 3, 5, 10), "position_ids": pos.to(torch.int32), "freqs": torch.rand(3)}, "rope"),
        Case("position_ids_f32_interleaved_partial", RoPE(dims=4, interleaved=True),
             {"input": _g(2, 1, 5, 7), "position_ids": pos.float()}, "rope"),
        Case("freqs_only", RoPE(interleaved=True), {"input": _g(3, 2, 4, 6), "freqs": torch.rand(3)}, "rope"),
        Case("offset_batch", RoPE(base=1000.0), {"input": _g(2, 3, 5, 8), "offset": torch.tensor([3, 17])}, "rope"),
        Case("offset_scalar_i32_partial", RoPE(dims=2, interleaved=True),
             {"input": _g(1, 2, 3, 4), "offset": torch.tensor(11, dtype=torch.int32)}, "rope"),
        Case("dims_beyond_d", RoPE(dims=12), {"input": _g(2, 2, 3, 8)}, "rope"),
        Case("rank3_default", RoPE(), {"input": _g(3, 5, 8)}, "rope"),
    ]


def _sdpa_cases():
    mask = torch.rand(4, 6) > 0.4
    mask[1] = False  # a row with no visible key: the reference's plain softmax
    bmask = torch.rand(2, 1, 3, 7) > 0.3
    fmask = (torch.rand(2, 4, 3, 5) > 0.3).float()
    return [
        Case("mha_plain", SDPA(), {"query": _g(2, 3, 5, 8), "key": _g(2, 3, 5, 8), "value": _g(2, 3, 5, 8)},
             "scaled_dot_product_attention"),
        Case("gqa_causal_tq_lt_tkv_dv", SDPA(is_causal=True),
             {"query": _g(2, 4, 3, 8), "key": _g(2, 2, 7, 8), "value": _g(2, 2, 7, 6)},
             "scaled_dot_product_attention"),
        Case("mqa_causal_decode", SDPA(is_causal=True),
             {"query": _g(1, 4, 1, 16), "key": _g(1, 1, 9, 16), "value": _g(1, 1, 9, 16)},
             "scaled_dot_product_attention"),
        Case("window2", SDPA(window_size=2), {"query": _g(1, 2, 5, 4), "key": _g(1, 2, 8, 4), "value": _g(1, 2, 8, 4)},
             "scaled_dot_product_attention"),
        Case("window3_causal_gqa", SDPA(is_causal=True, window_size=3),
             {"query": _g(2, 6, 6, 4), "key": _g(2, 3, 6, 4), "value": _g(2, 3, 6, 4)},
             "scaled_dot_product_attention"),
        Case("window1_causal", SDPA(is_causal=True, window_size=1),
             {"query": _g(1, 2, 4, 8), "key": _g(1, 2, 9, 8), "value": _g(1, 2, 9, 8)},
             "scaled_dot_product_attention"),
        Case("window2_tq_gt_tkv", SDPA(window_size=2),
             {"query": _g(1, 1, 5, 4), "key": _g(1, 1, 3, 4), "value": _g(1, 1, 3, 4)},
             "scaled_dot_product_attention", empty_rows=True),
        Case("bool_mask_2d_empty_row", SDPA(),
             {"query": _g(1, 2, 4, 8), "key": _g(1, 2, 6, 8), "value": _g(1, 2, 6, 8), "attn_mask": mask},
             "scaled_dot_product_attention", empty_rows=True),
        Case("bool_mask_4d_sinks_gqa", SDPA(is_causal=True),  # the mask decides, is_causal is ignored
             {"query": _g(2, 4, 3, 8), "key": _g(2, 2, 7, 8), "value": _g(2, 2, 7, 8), "attn_mask": bmask,
              "sinks": _g(4)}, "scaled_dot_product_attention"),
        Case("float_mask_mqa", SDPA(),
             {"query": _g(2, 4, 3, 8), "key": _g(2, 1, 5, 8), "value": _g(2, 1, 5, 8), "attn_mask": fmask},
             "scaled_dot_product_attention"),
        Case("sinks_causal_gqa", SDPA(is_causal=True),
             {"query": _g(2, 4, 3, 8), "key": _g(2, 2, 5, 8), "value": _g(2, 2, 5, 8), "sinks": _g(4, scale=2)},
             "scaled_dot_product_attention"),
        Case("scale_given_kv_batch1", SDPA(scale=0.3),
             {"query": _g(3, 2, 4, 8), "key": _g(1, 2, 6, 8), "value": _g(1, 2, 6, 5)},
             "scaled_dot_product_attention"),
        Case("sinks_window_odd", SDPA(window_size=2, scale=0.5),
             {"query": _g(1, 3, 5, 7), "key": _g(1, 3, 5, 7), "value": _g(1, 3, 5, 3), "sinks": _g(3)},
             "scaled_dot_product_attention"),
    ]


def _gather_mm_cases():
    return [
        Case("moe_rhs_indices", GatherMM(),
             {"lhs": _g(2, 3, 1, 1, 8), "rhs": _g(5, 8, 6), "rhs_indices": torch.randint(0, 5, (2, 3, 2))},
             "gather_mm"),
        Case("fused_batch_axis", GatherMM(num_batch_axes=1),
             {"lhs": _g(2, 3, 1, 1, 8), "rhs": _g(2, 5, 8, 6),
              "rhs_indices": torch.randint(0, 5, (2, 3, 2), dtype=torch.int32)}, "gather_mm"),
        Case("lhs_indices_only", GatherMM(),
             {"lhs": _g(6, 4, 8), "rhs": _g(8, 5), "lhs_indices": torch.randint(0, 6, (3,), dtype=torch.int32)},
             "gather_mm"),
        Case("both_indices", GatherMM(),
             {"lhs": _g(5, 2, 8), "rhs": _g(4, 8, 3), "lhs_indices": torch.randint(0, 5, (2, 3)),
              "rhs_indices": torch.randint(0, 4, (2, 3), dtype=torch.int32)}, "gather_mm"),
        Case("plain_matmul", GatherMM(), {"lhs": _g(2, 3, 4), "rhs": _g(4, 5)}, "gather_mm"),
    ]


def _gdu_inputs(b, hk, hv, t, dk, dv, qk_scale=1.0):
    return {"query": _g(b, hk, t, dk, scale=qk_scale), "key": _g(b, hk, t, dk, scale=qk_scale),
            "value": _g(b, hv, t, dv), "g": F.logsigmoid(_g(b, hv, t)), "beta": torch.sigmoid(_g(b, hv, t)),
            "initial_state": _g(b, hv, dk, dv, scale=0.5)}


def _gated_delta_cases():
    return [
        Case("mha_l2", GatedDeltaUpdate(), _gdu_inputs(1, 2, 2, 3, 8, 8), "gated_delta_update"),
        Case("gqa_l2_odd", GatedDeltaUpdate(True), _gdu_inputs(2, 2, 4, 5, 6, 5), "gated_delta_update"),
        Case("no_l2_heads3", GatedDeltaUpdate(use_qk_l2_norm=False), _gdu_inputs(2, 1, 3, 4, 4, 7, qk_scale=0.4),
             "gated_delta_update"),
        Case("single_step", GatedDeltaUpdate(), _gdu_inputs(3, 1, 1, 1, 5, 3), "gated_delta_update"),
    ]


def _swiglu_cases():
    return [
        Case("rows", SwiGLUImpl(), {"gate": _g(3, 10), "value": _g(3, 10)}, "swiglu"),
        Case("rank3_odd", SwiGLUImpl(), {"gate": _g(2, 3, 7, scale=3), "value": _g(2, 3, 7)}, "swiglu"),
    ]


def _swiglu_ffn_cases():
    return [Case("ffn_block", SwiGLU(6, hidden_features=10), {"x": _g(2, 4, 6)}, "swiglu"),
            Case("ffn_block_bias_default_hidden", SwiGLU(3, out_features=5, bias=True), {"x": _g(3, 3)}, "swiglu")]


def _bn(c, affine=True, dims=2):
    m = (nn.BatchNorm2d if dims == 2 else nn.BatchNorm1d)(c, affine=affine)
    with torch.no_grad():
        m.running_mean.copy_(torch.randn(c))
        m.running_var.copy_(torch.rand(c) + 0.5)
        if affine:
            m.weight.copy_(torch.randn(c))
            m.bias.copy_(torch.randn(c))
    return m


def _affine(m):
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn_like(p))
    return m


def _norm_cases():
    return [
        Case("batch_norm_2d", _bn(6), {"input": _g(2, 6, 5, 7)}, "batch_norm"),
        Case("batch_norm_1d_rank2_noaffine", _bn(5, affine=False, dims=1), {"input": _g(3, 5)}, "batch_norm"),
        Case("batch_norm_1d_rank3", _bn(4, dims=1), {"input": _g(2, 4, 9)}, "batch_norm"),
        Case("group_norm", _affine(nn.GroupNorm(3, 6)), {"input": _g(2, 6, 5, 7)}, "group_norm"),
        Case("group_norm_noaffine_rank3", nn.GroupNorm(2, 4, affine=False, eps=1e-3), {"input": _g(3, 4, 9)},
             "group_norm"),
        Case("group_norm_one_group", _affine(nn.GroupNorm(1, 5)), {"input": _g(1, 5, 3, 3) + 4}, "group_norm"),
        Case("instance_norm_2d_affine", _affine(nn.InstanceNorm2d(6, affine=True)), {"input": _g(2, 6, 5, 7)},
             "instance_norm"),
        Case("instance_norm_1d", nn.InstanceNorm1d(4, eps=1e-3), {"input": _g(3, 4, 11)}, "instance_norm"),
        Case("instance_norm_batch1", _affine(nn.InstanceNorm2d(3, affine=True)), {"input": _g(1, 3, 4, 2) * 3 + 1},
             "instance_norm"),
        Case("layer_norm_last", _affine(nn.LayerNorm(7)), {"input": _g(2, 5, 7)}, "layer_norm"),
        Case("layer_norm_two_axes", _affine(nn.LayerNorm([5, 7], eps=1e-6)), {"input": _g(2, 5, 7)}, "layer_norm"),
        Case("layer_norm_noaffine", nn.LayerNorm(9, elementwise_affine=False), {"input": _g(4, 9) + 10},
             "layer_norm"),
    ]


def _small_cases():
    z = _g(2, 3, 4)
    z[z.abs() < 0.5] = 0.0
    return [
        Case("pixel_shuffle_2", nn.PixelShuffle(2), {"input": _g(2, 8, 3, 5)}, "pixel_shuffle"),
        Case("pixel_shuffle_3_rank5", nn.PixelShuffle(3), {"input": _g(2, 1, 9, 2, 2)}, "pixel_shuffle"),
        Case("log_softmax_last", Fn(lambda x: F.log_softmax(x, -1)), {"input": _g(3, 7, scale=4)}, "log_softmax"),
        Case("log_softmax_mid", Fn(lambda x: F.log_softmax(x, dim=1)), {"input": _g(2, 5, 4)}, "log_softmax"),
        Case("hard_sigmoid", nn.Hardsigmoid(), {"input": _g(4, 9, scale=4)}, "hard_sigmoid"),
        Case("vector_norm_2_last", Fn(lambda x: torch.linalg.vector_norm(x, dim=-1)), {"input": _g(3, 7)},
             "linalg_vector_norm"),
        Case("vector_norm_1_keepdim", Fn(lambda x: torch.linalg.vector_norm(x, 1, dim=(1, 2), keepdim=True)),
             {"input": _g(2, 3, 4)}, "linalg_vector_norm"),
        Case("vector_norm_inf", Fn(lambda x: torch.linalg.vector_norm(x, float("inf"), dim=0)),
             {"input": _g(5, 3)}, "linalg_vector_norm"),
        Case("vector_norm_neg_inf", Fn(lambda x: torch.linalg.vector_norm(x, float("-inf"), dim=1)),
             {"input": _g(5, 3)}, "linalg_vector_norm"),
        Case("vector_norm_0", Fn(lambda x: torch.linalg.vector_norm(x, 0, dim=-1)), {"input": z},
             "linalg_vector_norm"),
        Case("vector_norm_3_all", Fn(lambda x: torch.linalg.vector_norm(x, 3)), {"input": _g(2, 3, 5)},
             "linalg_vector_norm"),
        Case("tensor_norm_keepdim", Fn(lambda x: x.norm(dim=1, keepdim=True)), {"input": _g(4, 6, 2)},
             "linalg_vector_norm"),
    ]


FAMILIES = {
    "rms_norm": _rms_norm_cases,
    "rope": _rope_cases,
    "sdpa": _sdpa_cases,
    "gather_mm": _gather_mm_cases,
    "gated_delta_update": _gated_delta_cases,
    "swiglu": _swiglu_cases,
    "swiglu_ffn": _swiglu_ffn_cases,
    "norms": _norm_cases,
    "small": _small_cases,
}


def _cases(family):
    torch.manual_seed(1234 + sorted(FAMILIES).index(family))
    return FAMILIES[family]()


# case ids are fixed at collection time (the tensors are rebuilt, seeded, per family)
CASE_IDS = [(f, c.id) for f in FAMILIES for c in _cases(f)]


# ---------------------------------------------------------------------------
# build, run, inspect
# ---------------------------------------------------------------------------


def _functions(c_source):
    """{graph name: (composite op or None, the C function's text)} of a generated NAME.c."""
    out = {}
    for m in re.finditer(r"^/\* @(\S+?)(?:: composite \"([^\"]+)\"[^\n]*)?\n(.*?)^}\n", c_source, re.M | re.S):
        out[m.group(1)] = (m.group(2), m.group(3))
    return out


class FamilyRun:
    def __init__(self, family):
        from coreai import _toolchain
        from coreai.runtime import AIExecutable, NDArray

        self.cases = _cases(family)
        bundle = Bundle(self.cases).eval()
        feed = {f"c{i}_{n}": t for i, c in enumerate(self.cases) for n, t in c.inputs.items()}
        with torch.no_grad():
            ref = bundle(**{k: v.clone() for k, v in feed.items()})
        self.out_slices = []
        self.ref64 = {}
        pos = 0
        for i, c in enumerate(self.cases):
            n = len(c.eager())
            self.out_slices.append(list(range(pos, pos + n)))
            if c.empty_rows:
                self.ref64.update(zip(self.out_slices[-1], c.eager(f64=True)))
            pos += n
        self.ref = [r.detach() for r in ref]
        out_names = [f"c{i}_o{j}" for i, sl in enumerate(self.out_slices) for j in range(len(sl))]
        program = TorchConverter().add_pytorch_module(
            bundle, export_fn=lambda m: torch.export.export(m, args=(), kwargs=feed).run_decompositions(
                get_decomp_table()),
            externalize_modules=list(COMPOSITE_SPECS.values()), output_names=out_names).to_coreai()
        program.optimize()
        self.program = program
        graphs = {g.name: g for g in program.module.graphs}
        # composite graphs each case invokes (from the op locations "cases.<i>/...")
        self.case_graphs = collections.defaultdict(list)
        seen = set()

        def walk(graph, owner):
            for op in graph.operations:
                if op.kind != "coreai.invoke":
                    continue
                callee = graphs[op.callee]
                i = owner
                if i is None:
                    m = re.match(r"cases\.(\d+)[./]", (op.location.text or "") + "/")
                    if m is None:
                        m = re.match(r"cases\.(\d+)\.", callee.name)
                    i = int(m.group(1)) if m else None
                if callee.composite is not None and (i, callee.name) not in seen:
                    seen.add((i, callee.name))
                    self.case_graphs[i].append(callee)
                walk(callee, i)

        walk(graphs["main"], None)
        self.outputs = {}
        self.c_source = {}
        with tempfile.TemporaryDirectory() as tmp:
            asset = program.save_asset(Path(tmp) / f"{family}.aimodel")
            prefix = _toolchain.c_prefix(asset.model_path)
            for kernels in (True, False):
                lib = _toolchain.build_library(asset.model_path, prefix, kernels)
                self.c_source[kernels] = (lib.parent / f"{prefix}.c").read_text()
                exe = AIExecutable(lib, prefix, asset.initial_states.get("main", {}))
                fn = exe.load_function("main")
                res = fn.call({k: NDArray(v.contiguous()) for k, v in feed.items()})
                self.outputs[kernels] = [np.asarray(res[n].numpy()) for n in out_names]
                exe.close()

    def case(self, cid):
        for i, c in enumerate(self.cases):
            if c.id == cid:
                return i, c
        raise KeyError(cid)


_RUNS = {}


@pytest.fixture
def family_run(coreai_gen, c_compiler):
    def get(family):
        if family not in _RUNS:
            _RUNS[family] = FamilyRun(family)
        return _RUNS[family]
    return get


# ---------------------------------------------------------------------------
# the tests
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("family,cid", CASE_IDS, ids=[f"{f}-{c}" for f, c in CASE_IDS])
def test_kernel_path_matches_eager(family_run, family, cid):
    run = family_run(family)
    i, case = run.case(cid)
    for k in run.out_slices[i]:
        err = max_abs_diff(run.ref64.get(k, run.ref[k]), run.outputs[True][k])
        assert err <= ATOL, f"{family}/{cid} output {k}: kernel vs eager {err:.3g}"


@pytest.mark.parametrize("family,cid", CASE_IDS, ids=[f"{f}-{c}" for f, c in CASE_IDS])
def test_body_path_matches_eager_and_kernel(family_run, family, cid):
    run = family_run(family)
    i, case = run.case(cid)
    for k in run.out_slices[i]:
        err = max_abs_diff(run.ref[k], run.outputs[False][k])
        assert err <= ATOL, f"{family}/{cid} output {k}: body vs eager {err:.3g}"
        err = max_abs_diff(run.outputs[True][k], run.outputs[False][k])
        assert err <= (2e-3 if case.empty_rows else ATOL), f"{family}/{cid} output {k}: body vs kernel {err:.3g}"


@pytest.mark.parametrize("family,cid", CASE_IDS, ids=[f"{f}-{c}" for f, c in CASE_IDS])
def test_generated_c_calls_kernel(family_run, family, cid):
    run = family_run(family)
    i, case = run.case(cid)
    mine = [g for g in run.case_graphs[i] if g.composite.op_name == case.op]
    assert len(mine) == case.n_calls, \
        f"{family}/{cid}: expected {case.n_calls} '{case.op}' composite(s), got {[g.name for g in run.case_graphs[i]]}"
    kernel = KERNELS[case.op]
    with_k, without_k = _functions(run.c_source[True]), _functions(run.c_source[False])
    for g in mine:
        op, body = with_k[g.name]
        assert op == case.op
        assert re.search(rf"^    return {kernel}\(&\w+_p, ", body, re.M), \
            f"{g.name} is not one direct call of {kernel}:\n{body}"
        _, body = without_k[g.name]
        assert "coreai_" + case.op not in body and kernel + "(" not in body


def test_every_composite_graph_uses_its_kernel(family_run):
    """Across all families: no composite graph fell back to its body."""
    for family in FAMILIES:
        run = family_run(family)
        fns = _functions(run.c_source[True])
        composites = [g for g in run.program.module.graphs if g.composite is not None]
        assert composites
        for g in composites:
            op, body = fns[g.name]
            assert f"return {KERNELS[g.composite.op_name]}(&" in body, f"{family}: {g.name} uses its body"
        for kernel in KERNELS.values():
            assert f"{kernel}(" not in run.c_source[False], f"{family}: --no-composite-kernels still calls {kernel}"
