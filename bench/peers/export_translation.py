"""ONNX export of the de->en translators for the peer benchmark (bench/peers/README.md), float32.

Transformer bundles (de-en-general, de-en-transformer), each graph in two variants, `maps` (every attention map as a
graph output) and `nomaps`:
  <name>.encoder.<variant>.onnx   src_ids int64 [1,S] -> cross_k_l, cross_v_l [1,H,S,dh] for every decoder layer
                                  (the cross-attention K/V, computed once per sentence from the encoder output)
                                  [+ encoder_self [L,1,H,S,S]]
  <name>.decoder.<variant>[.logprobs].onnx   one decoding step with an explicit KV cache: token int64 [N,1], pos int64 [1],
                                  past_k_l / past_v_l [N,H,t,dh], cross_k_l / cross_v_l [N,H,S,dh]
                                  -> logits [N,V] (or logprobs = log_softmax, for beam search), present_k_l / present_v_l [N,H,t+1,dh]
                                  [+ decoder_self [L,N,H,t+1], cross [L,N,H,S]]
RNN bundles (de-en-rnn-general, de-en-rnn-additive): <name>.encoder.onnx (src_ids [1,S] -> memory, attention keys,
the decoder's initial state) and <name>.decoder.{maps,nomaps}.onnx (one step: token [N], memory, keys, state ->
logits, next state [+ cross [N,S], the attention over the source]).
Weights come from the bundle (models/<name>/weights.safetensors, F16 -> float32, exactly what the engine computes
from) through the recipe's own loader (models/training/translation/bundle.py) and its modules (models.py), so the
graphs compute the recipe's maths.

  /usr/bin/python3 bench/peers/export_translation.py --bundle models/de-en-general --out bench/peers/out
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_common import OPSET, Graph, export, finish, kv_cache_io, parse_args, recipe, write_tatoeba_dev  # noqa: E402  (exits without PyTorch)

recipe("translation")
import torch  # noqa: E402

from bundle import load_bundle  # noqa: E402
from models import RnnAdditive  # noqa: E402


class Encoder(Graph):
    """Batch 1, no padding (one sentence), so no mask: the engine's encoder over one sentence."""

    def forward(self, src_ids):
        m = self.m
        x = m.embed(src_ids) * math.sqrt(m.d_model) + m.pe[:src_ids.shape[1]]
        attns = []
        for layer in m.encoder_layers:
            x, a = layer(x, None)
            attns.append(a)
        mem = m.encoder_norm(x)
        out = []
        for layer in m.decoder_layers:
            ca = layer.cross_attn
            out += [ca.split_heads(ca.k_proj(mem)), ca.split_heads(ca.v_proj(mem))]
        if self.maps:
            out.append(torch.stack(attns, 0))
        return tuple(out)


class DecoderStep(Graph):
    """models.TransformerSeq2Seq.step with the cache as explicit inputs/outputs (no source padding: batch rows
    are hypotheses of one sentence)."""

    def __init__(self, model, maps, logprobs=False):
        super().__init__(model, maps)
        self.logprobs = logprobs

    def forward(self, token, pos, *cache):
        m = self.m
        n_layers = len(m.decoder_layers)
        past = cache[:2 * n_layers]
        cross = cache[2 * n_layers:]
        y = m.embed(token) * math.sqrt(m.d_model) + torch.index_select(m.pe, 0, pos)  # (N,1,d)
        present, self_maps, cross_maps = [], [], []
        for i, layer in enumerate(m.decoder_layers):
            sa, ca = layer.self_attn, layer.cross_attn
            h = layer.norm1(y)
            k = torch.cat([past[2 * i], sa.split_heads(sa.k_proj(h))], dim=2)
            v = torch.cat([past[2 * i + 1], sa.split_heads(sa.v_proj(h))], dim=2)
            present += [k, v]
            a, sattn = sa.attend(sa.split_heads(sa.q_proj(h)), k, v, None)
            y = y + a
            a, cattn = ca.attend(ca.split_heads(ca.q_proj(layer.norm2(y))), cross[2 * i], cross[2 * i + 1], None)
            y = y + a
            y = y + layer.ffn(layer.norm3(y))
            self_maps.append(sattn[:, :, 0])
            cross_maps.append(cattn[:, :, 0])
        logits = torch.matmul(m.decoder_norm(y[:, 0]), m.embed.weight.t())
        if self.logprobs:
            logits = torch.log_softmax(logits, dim=-1)
        out = [logits] + present
        if self.maps:
            out += [torch.stack(self_maps, 0), torch.stack(cross_maps, 0)]
        return tuple(out)


def export_transformer(model, cfg, name, out_dir):
    L, H, d = cfg["decoder_layers"], cfg["heads"], cfg["d_model"]
    dh = d // H
    written = []
    for maps in (False, True):
        variant = "maps" if maps else "nomaps"
        src = torch.tensor([[5, 6, 7, 8, 9, 3]], dtype=torch.long)
        enc_out, enc_axes, in_names, out_names, axes = kv_cache_io(L, maps)
        path = os.path.join(out_dir, f"{name}.encoder.{variant}.onnx")
        export(Encoder(model, maps), (src,), path, input_names=["src_ids"], output_names=enc_out,
               dynamic_axes=enc_axes)
        written.append(path)

        n, t, s = 2, 3, 6
        token = torch.tensor([[4], [5]], dtype=torch.long)
        pos = torch.tensor([t], dtype=torch.long)
        past = [torch.randn(n, H, t, dh) for _ in range(2 * L)]
        cross = [torch.randn(n, H, s, dh) for _ in range(2 * L)]
        for lp in (False, True):  # logits (greedy) / log-probabilities (beam search)
            path = os.path.join(out_dir, f"{name}.decoder.{variant}{'.logprobs' if lp else ''}.onnx")
            names = ["logprobs" if lp else "logits"] + out_names[1:]
            ax = dict(axes)
            ax[names[0]] = ax.pop("logits")
            export(DecoderStep(model, maps, lp), (token, pos, *past, *cross), path, input_names=in_names,
                   output_names=names, dynamic_axes=ax)
            written.append(path)
    return written


class RnnEncoder(Graph):
    """Batch 1, no padding: the packed bidirectional RNN of models.run_birnn is the plain RNN over the sentence."""

    def forward(self, src_ids):
        m = self.m
        if isinstance(m, RnnAdditive):
            out, final = m.encoder(m.embed(src_ids))
            return out, m.attn_key(out), torch.tanh(m.init_proj(final[1]))
        out, (h, c) = m.encoder(m.embed(src_ids))
        h0, c0 = torch.cat([h[0], h[1]], dim=-1), torch.cat([c[0], c[1]], dim=-1)
        states = []
        for _ in m.decoder:
            states += [h0, c0]
        return (out, m.attn_w(out), *states, h0.new_zeros(1, m.emb))


class RnnStep(Graph):
    """models.Rnn*.step with the state as explicit inputs/outputs; every source position is kept (no padding)."""

    def forward(self, token, memory, keys, *state):
        m = self.m
        enc = {"memory": memory, "keys": keys, "src_keep": torch.ones_like(keys[..., 0], dtype=torch.bool)}
        if isinstance(m, RnnAdditive):
            logits, s, alpha = m.step(enc, state[0], token)
            out = [logits, s]
        else:
            n = len(m.decoder)
            st = {"layers": [(state[2 * i], state[2 * i + 1]) for i in range(n)], "feed": state[2 * n]}
            logits, new, alpha = m.step(enc, st, token)
            out = [logits] + [x for hc in new["layers"] for x in hc] + [new["feed"]]
        return tuple(out + ([alpha] if self.maps else []))


def export_rnn(model, cfg, name, out_dir):
    """<name>.encoder.onnx: src_ids [1,S] -> memory [1,S,2H], keys [1,S,A], state_*;
    <name>.decoder.<variant>.onnx: token [N], memory, keys, state_* -> logits [N,V], next_state_* [+ cross [N,S]]."""
    if isinstance(model, RnnAdditive):
        state_names = ["state_s"]
    else:
        state_names = [f"state_{x}_{i}" for i in range(len(model.decoder)) for x in ("h", "c")] + ["state_feed"]
    src = torch.tensor([[5, 6, 7, 8, 9, 3]], dtype=torch.long)
    enc = RnnEncoder(model)
    path = os.path.join(out_dir, f"{name}.encoder.onnx")
    export(enc, (src,), path, input_names=["src_ids"], output_names=["memory", "keys"] + state_names,
           dynamic_axes={"src_ids": {1: "S"}, "memory": {1: "S"}, "keys": {1: "S"}})
    written = [path]
    memory, keys, *state = enc(src)
    n = 2
    memory, keys = memory.expand(n, -1, -1).contiguous(), keys.expand(n, -1, -1).contiguous()
    state = [x.expand(n, -1).contiguous() for x in state]
    token = torch.tensor([4, 5], dtype=torch.long)
    for maps in (False, True):
        outs = ["logits"] + ["next_" + x for x in state_names] + (["cross"] if maps else [])
        axes = {"token": {0: "N"}, "memory": {0: "N", 1: "S"}, "keys": {0: "N", 1: "S"}}
        for x in state_names + outs:
            axes.setdefault(x, {0: "N"})
        if maps:
            axes["cross"] = {0: "N", 1: "S"}
        path = os.path.join(out_dir, f"{name}.decoder.{'maps' if maps else 'nomaps'}.onnx")
        export(RnnStep(model, maps), (token, memory, keys, *state), path,
               input_names=["token", "memory", "keys"] + state_names, output_names=outs, dynamic_axes=axes)
        written.append(path)
    return written, state_names


def main():
    args = parse_args(__doc__)
    model, cfg = load_bundle(args.bundle)
    name = cfg["name"]
    meta = {"name": name, "architecture": cfg["architecture"], "vocab_size": cfg["vocab_size"],
            "torch": torch.__version__, "opset": OPSET}
    with torch.no_grad():
        if cfg["architecture"] == "transformer-seq2seq":
            written = export_transformer(model, cfg, name, args.out)
            meta.update({k: cfg[k] for k in ("decoder_layers", "encoder_layers", "heads", "d_model")})
        else:
            written, meta["state"] = export_rnn(model, cfg, name, args.out)
    tatoeba = write_tatoeba_dev(args.out)  # a second, shorter-sentence timing set
    if tatoeba:
        written.append(tatoeba)
    finish(args.out, name, meta, written, indent=2)


if __name__ == "__main__":
    main()
