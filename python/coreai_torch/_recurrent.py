"""nn.RNN / nn.GRU / nn.LSTM as ``rnn`` / ``gru`` / ``lstm`` composite ops.

The recurrent modules decompose into unrolled per-step ATen ops (they do in
a program given to ``add_exported_program``).  ``add_pytorch_module`` therefore patches, while
``export_fn`` runs, the ``forward`` of every ``nn.RNN``/``nn.GRU``/``nn.LSTM``
instance (root included) with a functional equivalent that calls one
per-layer module (``RNNLayer``/``GRULayer``/``LSTMLayer``, added as children
``_coreai_layer<l>``) per layer.  Those are externalized composite ops (see
externalize.py) whose ``forward()`` parameter names and attributes are
exactly the declaration of docs/composite-ops.md:

* rnn: ``x, initial_h, weight_ih, weight_hh, bias[, *_back]``; ``direction``,
  ``output_sequence``, ``activation``;
* gru: ``x, initial_h, weight_ih, weight_hh, bias_ih, bias_hh[, *_back]``;
  ``direction``, ``output_sequence``, ``recurrent_activation``,
  ``activation``, ``reset_after``;
* lstm: ``x, initial_h, initial_c, weight_ih, weight_hh, bias[, *_back]``
  (weight rows reordered to ``i, f, o, g``); ``direction``,
  ``output_sequence``, ``recurrent_activation``, ``cell_activation``,
  ``activation``;

results ``output, h_n[, c_n]``.  The summed biases (rnn, lstm), the gate
reordering (lstm), ``batch_first`` transposes, the packing of the
``[L*D, B, H]`` states into ``[B, D*H]`` per layer and the zero initial
states are computed in the caller.  Stacked layers are a chain of
composites.  The composite body is the op-by-op unrolled recurrence, so
``--no-composite-kernels`` works as well.

Not handled (the module is converted unrolled, as before): ``PackedSequence``
inputs, LSTM ``proj_size > 0``, and training-mode inter-layer dropout.
"""

from __future__ import annotations

from typing import List, Optional

import torch
import torch.nn as nn

from .externalize import ExternalizeSpec

__all__ = ["RNNLayer", "GRULayer", "LSTMLayer", "RECURRENT_SPECS", "patch_recurrent"]


class _LayerBase(nn.Module):
    output_sequence = True

    def __init__(self, bidirectional: bool):
        super().__init__()
        self.direction = "bidirectional" if bidirectional else "forward"


def _steps(n: int, reverse: bool):
    return range(n - 1, -1, -1) if reverse else range(n)


def _proj(x, w, b):
    # x [..., K] @ w.T [K, N] (+ b)
    y = torch.matmul(x, w.t())
    return y if b is None else y + b


class RNNLayer(_LayerBase):
    _coreai_output_names = ["output", "h_n"]

    def __init__(self, bidirectional: bool, activation: str):
        super().__init__(bidirectional)
        self.activation = activation

    def forward(self, x, initial_h, weight_ih, weight_hh, bias=None,
                weight_ih_back=None, weight_hh_back=None, bias_back=None):
        H = weight_hh.shape[1]
        act = torch.tanh if self.activation == "tanh" else torch.relu

        def run(w_ih, w_hh, b, h, reverse):
            xs = _proj(x, w_ih, b)
            outs: List[Optional[torch.Tensor]] = [None] * x.shape[0]
            for t in _steps(x.shape[0], reverse):
                h = act(xs[t] + torch.matmul(h, w_hh.t()))
                outs[t] = h
            return torch.stack(outs, 0), h

        if self.direction == "bidirectional":
            of, hf = run(weight_ih, weight_hh, bias, initial_h[:, :H], False)
            ob, hb = run(weight_ih_back, weight_hh_back, bias_back, initial_h[:, H:], True)
            return torch.cat([of, ob], 2), torch.cat([hf, hb], 1)
        return run(weight_ih, weight_hh, bias, initial_h, False)


class GRULayer(_LayerBase):
    _coreai_output_names = ["output", "h_n"]

    def __init__(self, bidirectional: bool):
        super().__init__(bidirectional)
        self.recurrent_activation = "sigmoid"
        self.activation = "tanh"
        self.reset_after = True

    def forward(self, x, initial_h, weight_ih, weight_hh, bias_ih=None, bias_hh=None,
                weight_ih_back=None, weight_hh_back=None, bias_ih_back=None, bias_hh_back=None):
        H = weight_hh.shape[1]

        def run(w_ih, w_hh, b_ih, b_hh, h, reverse):
            xs = _proj(x, w_ih, b_ih)
            outs: List[Optional[torch.Tensor]] = [None] * x.shape[0]
            for t in _steps(x.shape[0], reverse):
                gi = xs[t]
                gh = _proj(h, w_hh, b_hh)
                r = torch.sigmoid(gi[:, :H] + gh[:, :H])
                z = torch.sigmoid(gi[:, H:2 * H] + gh[:, H:2 * H])
                n = torch.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])
                h = (1 - z) * n + z * h
                outs[t] = h
            return torch.stack(outs, 0), h

        if self.direction == "bidirectional":
            of, hf = run(weight_ih, weight_hh, bias_ih, bias_hh, initial_h[:, :H], False)
            ob, hb = run(weight_ih_back, weight_hh_back, bias_ih_back, bias_hh_back, initial_h[:, H:], True)
            return torch.cat([of, ob], 2), torch.cat([hf, hb], 1)
        return run(weight_ih, weight_hh, bias_ih, bias_hh, initial_h, False)


class LSTMLayer(_LayerBase):
    _coreai_output_names = ["output", "h_n", "c_n"]

    def __init__(self, bidirectional: bool):
        super().__init__(bidirectional)
        self.recurrent_activation = "sigmoid"
        self.cell_activation = "tanh"
        self.activation = "tanh"

    def forward(self, x, initial_h, initial_c, weight_ih, weight_hh, bias=None,
                weight_ih_back=None, weight_hh_back=None, bias_back=None):
        H = weight_hh.shape[1]

        def run(w_ih, w_hh, b, h, c, reverse):
            xs = _proj(x, w_ih, b)
            outs: List[Optional[torch.Tensor]] = [None] * x.shape[0]
            for t in _steps(x.shape[0], reverse):
                g = xs[t] + torch.matmul(h, w_hh.t())
                i = torch.sigmoid(g[:, :H])
                f = torch.sigmoid(g[:, H:2 * H])
                o = torch.sigmoid(g[:, 2 * H:3 * H])
                gg = torch.tanh(g[:, 3 * H:])
                c = f * c + i * gg
                h = o * torch.tanh(c)
                outs[t] = h
            return torch.stack(outs, 0), h, c

        if self.direction == "bidirectional":
            of, hf, cf = run(weight_ih, weight_hh, bias, initial_h[:, :H], initial_c[:, :H], False)
            ob, hb, cb = run(weight_ih_back, weight_hh_back, bias_back, initial_h[:, H:], initial_c[:, H:], True)
            return torch.cat([of, ob], 2), torch.cat([hf, hb], 1), torch.cat([cf, cb], 1)
        return run(weight_ih, weight_hh, bias, initial_h, initial_c, False)


RECURRENT_SPECS = {
    RNNLayer: ExternalizeSpec(RNNLayer, "rnn", ["direction", "output_sequence", "activation"]),
    GRULayer: ExternalizeSpec(GRULayer, "gru", ["direction", "output_sequence", "recurrent_activation",
                                                "activation", "reset_after"]),
    LSTMLayer: ExternalizeSpec(LSTMLayer, "lstm", ["direction", "output_sequence", "recurrent_activation",
                                                   "cell_activation", "activation"]),
}


def _supported(mod: nn.RNNBase) -> bool:
    if type(mod) not in (nn.RNN, nn.GRU, nn.LSTM):
        return False
    if getattr(mod, "proj_size", 0):
        return False
    if mod.mode not in ("RNN_TANH", "RNN_RELU", "GRU", "LSTM"):
        return False
    return True


def _make_layer(mod: nn.RNNBase) -> nn.Module:
    if mod.mode == "LSTM":
        return LSTMLayer(mod.bidirectional)
    if mod.mode == "GRU":
        return GRULayer(mod.bidirectional)
    return RNNLayer(mod.bidirectional, "tanh" if mod.mode == "RNN_TANH" else "relu")


def _layer_weights(mod: nn.RNNBase, layer: int) -> dict:
    """The composite's weight inputs of one layer (by declaration name)."""
    out = {}
    for d, sfx in enumerate(["", "_back"][: 2 if mod.bidirectional else 1]):
        tag = f"l{layer}" + ("_reverse" if d else "")
        w_ih = getattr(mod, f"weight_ih_{tag}")
        w_hh = getattr(mod, f"weight_hh_{tag}")
        b_ih = getattr(mod, f"bias_ih_{tag}") if mod.bias else None
        b_hh = getattr(mod, f"bias_hh_{tag}") if mod.bias else None
        if mod.mode == "LSTM":
            def reorder(w):
                i, f, g, o = w.chunk(4, 0)
                return torch.cat([i, f, o, g], 0)
            w_ih, w_hh = reorder(w_ih), reorder(w_hh)
            if b_ih is not None:
                b_ih, b_hh = reorder(b_ih), reorder(b_hh)
        out["weight_ih" + sfx] = w_ih
        out["weight_hh" + sfx] = w_hh
        if mod.mode == "GRU":
            out["bias_ih" + sfx] = b_ih
            out["bias_hh" + sfx] = b_hh
        else:
            out["bias" + sfx] = None if b_ih is None else b_ih + b_hh
    return out


def _pack_state(s: torch.Tensor, layer: int, D: int) -> torch.Tensor:
    # [L*D, B, H] -> this layer's [B, D*H]
    part = s[layer * D:(layer + 1) * D]
    return part.permute(1, 0, 2).reshape(part.shape[1], D * part.shape[2])


def _unpack_state(s: torch.Tensor, D: int) -> torch.Tensor:
    # [B, D*H] -> [D, B, H]
    B = s.shape[0]
    return s.reshape(B, D, s.shape[1] // D).permute(1, 0, 2)


def _recurrent_forward(mod: nn.RNNBase, original):
    def forward(input, hx=None):
        if not isinstance(input, torch.Tensor) or input.dim() not in (2, 3) or \
                (mod.training and mod.dropout > 0 and mod.num_layers > 1):
            return original(input, hx)
        lstm = mod.mode == "LSTM"
        D = 2 if mod.bidirectional else 1
        L, H = mod.num_layers, mod.hidden_size
        unbatched = input.dim() == 2
        x = input.unsqueeze(1) if unbatched else (input.transpose(0, 1) if mod.batch_first else input)
        B = x.shape[1]
        if hx is None:
            h0 = torch.zeros(L * D, B, H, dtype=x.dtype, device=x.device)
            c0 = h0 if lstm else None
        elif lstm:
            h0, c0 = hx
            if unbatched:
                h0, c0 = h0.unsqueeze(1), c0.unsqueeze(1)
        else:
            h0, c0 = hx, None
            if unbatched:
                h0 = h0.unsqueeze(1)
        hs, cs = [], []
        for layer in range(L):
            kwargs = dict(x=x, initial_h=_pack_state(h0, layer, D))
            if lstm:
                kwargs["initial_c"] = _pack_state(c0, layer, D)
            kwargs.update(_layer_weights(mod, layer))
            res = getattr(mod, f"_coreai_layer{layer}")(**kwargs)
            x = res[0]
            hs.append(_unpack_state(res[1], D))
            if lstm:
                cs.append(_unpack_state(res[2], D))
        h_n = torch.cat(hs, 0) if L > 1 else hs[0]
        c_n = (torch.cat(cs, 0) if L > 1 else cs[0]) if lstm else None
        if unbatched:
            out, h_n = x.squeeze(1), h_n.squeeze(1)
            c_n = c_n.squeeze(1) if lstm else None
        else:
            out = x.transpose(0, 1) if mod.batch_first else x
        return (out, (h_n, c_n)) if lstm else (out, h_n)

    return forward


def patch_recurrent(root: nn.Module):
    """Patch every supported recurrent instance of ``root``; returns
    (the ``ExternalizeSpec``s to add, an undo callable)."""
    undo = []
    used = set()
    for _, mod in list(root.named_modules()):
        if not isinstance(mod, nn.RNNBase) or not _supported(mod):
            continue
        had = "forward" in mod.__dict__
        original = mod.forward
        for layer in range(mod.num_layers):
            lm = _make_layer(mod)
            mod._modules[f"_coreai_layer{layer}"] = lm
            used.add(type(lm))
        mod.forward = _recurrent_forward(mod, original)

        def restore(mod=mod, had=had, original=original):
            for layer in range(mod.num_layers):
                mod._modules.pop(f"_coreai_layer{layer}", None)
            if had:
                mod.forward = original
            else:
                mod.__dict__.pop("forward", None)

        undo.append(restore)

    def undo_all():
        for u in reversed(undo):
            u()

    return [RECURRENT_SPECS[c] for c in (RNNLayer, GRULayer, LSTMLayer) if c in used], undo_all
