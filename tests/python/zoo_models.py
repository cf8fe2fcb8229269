"""The model zoo's models: Hugging Face ``transformers`` architectures built
from tiny configs with random weights (no downloads), each wrapped in a small
``nn.Module`` that returns one tensor (logits or last hidden state).

``ZOO`` maps a model id to a ``ZooModel``; ``build()`` returns
``(module, example kwargs)`` with the module in eval mode and a fixed seed.
Used by tests/python/test_model_zoo.py and tests/python/zoo_table.py.
"""
from __future__ import annotations

import dataclasses
import os
import re
from typing import Callable, Dict, Tuple

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

VOCAB = 128
SEQ = 12
HIDDEN = 64
LAYERS = 2
HEADS = 4
KV_HEADS = 2
FFN = 128


class Logits(nn.Module):
    """``model(**inputs, use_cache=False).logits`` (decoder LMs)."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask=None):
        kw = {} if attention_mask is None else {"attention_mask": attention_mask}
        return self.model(input_ids=input_ids, use_cache=False, **kw).logits


class LastHidden(nn.Module):
    """``model(**inputs).last_hidden_state`` (encoders)."""

    def __init__(self, model: nn.Module, key: str = "input_ids"):
        super().__init__()
        self.model = model
        self.key = key

    def forward(self, x, attention_mask=None):
        kw = {self.key: x}
        if attention_mask is not None:
            kw["attention_mask"] = attention_mask
        return self.model(**kw, return_dict=True).last_hidden_state


@dataclasses.dataclass
class ZooModel:
    name: str            # shown in the table
    config: str          # the config, in words
    make: Callable[[str], Tuple[nn.Module, Dict[str, torch.Tensor]]]
    attn: str = "sdpa"   # HF attn_implementation


def _ids(batch: int = 1, seq: int = SEQ) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, seq), generator=torch.Generator().manual_seed(1))


def _decoder(config_cls, model_cls, mask: bool = False, **extra):
    def make(attn):
        torch.manual_seed(0)
        cfg = config_cls(vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=FFN, num_hidden_layers=LAYERS,
                         num_attention_heads=HEADS, num_key_value_heads=KV_HEADS, max_position_embeddings=64,
                         attn_implementation=attn, **extra)
        model = Logits(model_cls(cfg)).eval()
        inputs = {"input_ids": _ids()}
        if mask:
            m = torch.ones(1, SEQ, dtype=torch.int64)
            m[0, :3] = 0  # left padding
            inputs["attention_mask"] = m
        return model, inputs
    return make


def _llama(mask=False):
    from transformers import LlamaConfig, LlamaForCausalLM
    return _decoder(LlamaConfig, LlamaForCausalLM, mask)


def _qwen2():
    from transformers import Qwen2Config, Qwen2ForCausalLM
    return _decoder(Qwen2Config, Qwen2ForCausalLM)


def _qwen3():
    from transformers import Qwen3Config, Qwen3ForCausalLM
    return _decoder(Qwen3Config, Qwen3ForCausalLM, head_dim=16)


def _mistral():
    from transformers import MistralConfig, MistralForCausalLM
    return _decoder(MistralConfig, MistralForCausalLM, sliding_window=8)


def _phi3():
    from transformers import Phi3Config, Phi3ForCausalLM
    return _decoder(Phi3Config, Phi3ForCausalLM, pad_token_id=0, bos_token_id=1, eos_token_id=2)


def _gpt2(attn):
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=VOCAB, n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS, n_positions=64,
                     bos_token_id=0, eos_token_id=0, attn_implementation=attn)
    return Logits(GPT2LMHeadModel(cfg)).eval(), {"input_ids": _ids()}


def _bert(attn):
    from transformers import BertConfig, BertModel
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                     intermediate_size=FFN, max_position_embeddings=64, attn_implementation=attn)
    m = torch.ones(1, SEQ, dtype=torch.int64)
    m[0, -4:] = 0  # right padding
    return LastHidden(BertModel(cfg, add_pooling_layer=False)).eval(), {"x": _ids(), "attention_mask": m}


def _distilbert(attn):
    from transformers import DistilBertConfig, DistilBertModel
    torch.manual_seed(0)
    cfg = DistilBertConfig(vocab_size=VOCAB, dim=HIDDEN, n_layers=LAYERS, n_heads=HEADS, hidden_dim=FFN,
                           max_position_embeddings=64, attn_implementation=attn)
    m = torch.ones(1, SEQ, dtype=torch.int64)
    m[0, -4:] = 0
    return LastHidden(DistilBertModel(cfg)).eval(), {"x": _ids(), "attention_mask": m}


def _vit(attn):
    from transformers import ViTConfig, ViTModel
    torch.manual_seed(0)
    cfg = ViTConfig(hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS, intermediate_size=FFN,
                    image_size=32, patch_size=8, num_channels=3, attn_implementation=attn)
    x = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    return LastHidden(ViTModel(cfg, add_pooling_layer=False), "pixel_values").eval(), {"x": x}


def _whisper_encoder(attn):
    from transformers import WhisperConfig
    from transformers.models.whisper.modeling_whisper import WhisperEncoder
    torch.manual_seed(0)
    cfg = WhisperConfig(vocab_size=VOCAB, num_mel_bins=16, d_model=HIDDEN, encoder_layers=LAYERS,
                        encoder_attention_heads=HEADS, encoder_ffn_dim=FFN, decoder_layers=1,
                        decoder_attention_heads=HEADS, decoder_ffn_dim=FFN, max_source_positions=16,
                        pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1,
                        attn_implementation=attn)
    x = torch.randn(1, 16, 32, generator=torch.Generator().manual_seed(1))  # [B, mel bins, 2 * positions]
    return LastHidden(WhisperEncoder(cfg), "input_features").eval(), {"x": x}


def _t5_encoder(attn):
    from transformers import T5Config, T5EncoderModel
    torch.manual_seed(0)
    cfg = T5Config(vocab_size=VOCAB, d_model=HIDDEN, d_kv=16, d_ff=FFN, num_layers=LAYERS, num_heads=HEADS,
                   relative_attention_num_buckets=8, relative_attention_max_distance=16,
                   attn_implementation=attn)
    return LastHidden(T5EncoderModel(cfg)).eval(), {"x": _ids()}


def _lazy(factory, *fargs):
    return lambda attn: factory(*fargs)(attn)


_DEC = f"hidden {HIDDEN}, {LAYERS} layers, {HEADS} heads / {KV_HEADS} kv, ffn {FFN}, vocab {VOCAB}, seq {SEQ}"
_ENC = f"hidden {HIDDEN}, {LAYERS} layers, {HEADS} heads, ffn {FFN}"

ZOO: Dict[str, ZooModel] = {m.name: m for m in [
    ZooModel("llama", _DEC, _lazy(_llama)),
    ZooModel("llama-eager", _DEC, _lazy(_llama), attn="eager"),
    ZooModel("llama-padded", _DEC + ", attention_mask (3 left pads)", _lazy(_llama, True)),
    ZooModel("qwen2", _DEC + ", qkv bias", _lazy(_qwen2)),
    ZooModel("qwen3", _DEC + ", head_dim 16, q/k norm", _lazy(_qwen3)),
    ZooModel("mistral", _DEC + ", sliding window 8", _lazy(_mistral)),
    ZooModel("phi3", _DEC + ", fused qkv / gate_up", _lazy(_phi3)),
    ZooModel("gpt2", f"n_embd {HIDDEN}, {LAYERS} layers, {HEADS} heads, vocab {VOCAB}, seq {SEQ}", _gpt2),
    ZooModel("bert", _ENC + f", vocab {VOCAB}, seq {SEQ}, attention_mask (4 right pads)", _bert),
    ZooModel("distilbert", _ENC + f", vocab {VOCAB}, seq {SEQ}, attention_mask (4 right pads)", _distilbert),
    ZooModel("vit", _ENC + ", image 32x32, patch 8", _vit),
    ZooModel("whisper-encoder", _ENC + ", 16 mel bins x 32 frames", _whisper_encoder),
    ZooModel("t5-encoder", _ENC + f", d_kv 16, 8 relative buckets, vocab {VOCAB}, seq {SEQ}", _t5_encoder),
]}


def build(model_id: str):
    """(wrapped module in eval mode, example inputs as a dict of keyword arguments)."""
    z = ZOO[model_id]
    return z.make(z.attn)


# ---------------------------------------------------------------------------
# convert -> coreai-gen -> compile -> run, with the numbers the table shows
# ---------------------------------------------------------------------------

#: Relative tolerance: max|out - ref| <= TOL_REL * max(1, max|ref|).
TOL_REL = 1e-5

_COMPOSITE_NAMES = ("scaled_dot_product_attention", "rms_norm", "layer_norm", "rope", "group_norm", "batch_norm",
                    "swiglu", "log_softmax", "linalg_vector_norm")


def tolerance(ref) -> float:
    """The allowed max abs error for a reference output (see docs/model-zoo.md)."""
    import numpy as np
    return TOL_REL * max(1.0, float(np.max(np.abs(np.asarray(ref, dtype=np.float64)))))


@dataclasses.dataclass
class ZooResult:
    model: str
    aten_ops: int = 0
    coreai_ops: int = 0
    composites: Dict[str, int] = dataclasses.field(default_factory=dict)  # composite op -> call sites
    kernels: Tuple[str, ...] = ()       # composite ops the generated C calls a kernel for
    max_err: float = float("nan")
    max_ref: float = float("nan")
    tol: float = float("nan")
    export_s: float = 0.0
    convert_s: float = 0.0
    generate_s: float = 0.0
    compile_s: float = 0.0
    run_s: float = 0.0
    error: str = ""


def export_and_convert(model_id: str, res: ZooResult = None, make=None):
    """(program, exported program, inputs, eager reference).  ``make``: a
    ``() -> (module, inputs)`` builder instead of ``ZOO[model_id]``."""
    import time

    import coreai_torch
    from coreai_torch import TorchConverter

    res = res if res is not None else ZooResult(model_id)
    model, inputs = make() if make is not None else build(model_id)
    with torch.no_grad():
        ref = model(**inputs)
        t0 = time.perf_counter()
        ep = torch.export.export(model, args=(), kwargs=inputs)
        ep = ep.run_decompositions(coreai_torch.get_decomp_table())
        t1 = time.perf_counter()
        conv = TorchConverter()  # HF's written-out RMSNorm reaches rms_norm by default
        conv.add_exported_program(ep)
        program = conv.to_coreai().optimize()
        t2 = time.perf_counter()
    res.export_s, res.convert_s = t1 - t0, t2 - t1
    res.aten_ops = sum(1 for n in ep.graph.nodes if n.op == "call_function")
    count_ops(program, res)
    return program, ep, inputs, ref


def count_ops(program, res: ZooResult) -> None:
    """Core AI ops (every op of every graph left after optimize(), constants
    excluded) and the composite graphs invoked, with their call sites."""
    graphs = {g.name: g for g in program.module.graphs}
    total = 0
    calls: Dict[str, int] = {}
    for g in program.module.graphs:
        for op in g.operations:
            if op.kind == "coreai.constant":
                continue
            total += 1
            if op.kind == "coreai.invoke":
                callee = graphs.get(op.callee.name if hasattr(op.callee, "name") else op.callee)
                if callee is not None and callee.composite is not None:
                    name = callee.composite.op_name
                    calls[name] = calls.get(name, 0) + 1
    res.coreai_ops = total
    res.composites = dict(sorted(calls.items()))


def run_zoo_model(model_id: str, composite_kernels: bool = True, make=None, weights_format: str = None) -> ZooResult:
    """Export, convert, generate, compile and run ``model_id``; compare with
    eager PyTorch.  Generates and compiles in a fresh directory (no cache),
    timing each step, and reads from the generated C which composite
    kernels it calls.  ``composite_kernels=False``: the composites'
    op-by-op bodies instead of their kernels.  ``weights_format``: coreai-gen's
    ``--weights-format`` (``None``: its default)."""
    import tempfile
    import time
    from pathlib import Path

    import numpy as np

    from coreai.runtime import NDArray

    res = ZooResult(model_id)
    program, _ep, inputs, ref = export_and_convert(model_id, res, make)
    feed = {k: NDArray(v.contiguous()) for k, v in inputs.items()}
    with tempfile.TemporaryDirectory() as tmp:
        asset = program.save_asset(Path(tmp) / "zoo.aimodel")
        exe = _timed_build(asset.model_path, Path(tmp), res, composite_kernels, weights_format)
        try:
            fn = exe.load_function("main")
            t0 = time.perf_counter()
            out = fn.call(feed)
            res.run_s = time.perf_counter() - t0
        finally:
            exe.close()
    if len(out) != 1:
        raise AssertionError(f"{model_id}: expected one output, got {list(out)}")
    got = np.asarray(next(iter(out.values())).numpy(), dtype=np.float64)
    want = ref.detach().numpy().astype(np.float64)
    if got.shape != want.shape:
        raise AssertionError(f"{model_id}: output shape {got.shape}, PyTorch {want.shape}")
    res.max_err = float(np.max(np.abs(got - want)))
    res.max_ref = float(np.max(np.abs(want)))
    res.tol = tolerance(want)
    return res


#: kernel function (coreai_<name>_f32) -> composite op
_KERNEL_OPS = {"sdpa": "scaled_dot_product_attention"}
_KERNEL_CALL = re.compile(r"\bcoreai_([a-z0-9_]+)_f32\(&")


def _timed_build(model_path, tmp, res: ZooResult, composite_kernels: bool = True, weights_format: str = None):
    """What coreai._toolchain.build_library does, uncached, timing coreai-gen
    and the C compile of the generated model separately (the runtime's own
    objects are compiled once and cached, as the runtime does).  The
    assembler looks for an incbin blob in the output directory (``-Wa,-I``),
    whichever format coreai-gen writes by default."""
    import time

    from coreai import _toolchain
    from coreai.runtime import AIExecutable

    gen = _toolchain.find_coreai_gen()
    rt = _toolchain.runtime_dir()
    cc = _toolchain.c_compiler()
    flags = _toolchain.compile_flags(rt)
    objs = _toolchain._runtime_objects(rt, cc, flags)
    out = tmp / "c"
    out.mkdir()
    prefix = "zoo"
    t0 = time.perf_counter()
    cmd = [gen, "generate", str(model_path), "-o", str(out), "--prefix", prefix]
    if not composite_kernels:
        cmd.append("--no-composite-kernels")
    if weights_format is not None:
        cmd += ["--weights-format", weights_format]
    _toolchain._run(cmd, "coreai-gen generate")
    t1 = time.perf_counter()
    lib = out / f"lib{prefix}.so"
    sources = [str(out / f"{prefix}.c"), str(out / f"{prefix}_weights.c")]
    _toolchain._run(cc + flags + [f"-Wa,-I,{out}", "-shared"] + sources + [str(o) for o in objs]
                    + ["-o", str(lib), "-lm"], "compiling the generated model")
    t2 = time.perf_counter()
    res.generate_s, res.compile_s = t1 - t0, t2 - t1
    called = {_KERNEL_OPS.get(k, k) for k in _KERNEL_CALL.findall((out / f"{prefix}.c").read_text())}
    res.kernels = tuple(sorted(called & set(res.composites)))  # other runtime calls (GEMM...) aside
    return AIExecutable(lib, prefix)
