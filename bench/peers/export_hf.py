"""Converted-model peers (bench/peers/README.md): a DistilBERT-size classifier and a Marian-size translator with
seeded random weights, written as Hugging Face folders (what `attnlens convert` reads) and exported to ONNX from the
same PyTorch modules with the same weights (models/training/hf/distilbert.py, marian.py: HF's modules re-written).

  distilbert-hf  distilbert-base: 6 layers, dim 768, 12 heads, hidden 3072, vocabulary 30522, 512 positions, 2 labels
  marian-hf      opus-mt-de-en: d_model 512, 6 + 6 layers, 8 heads, ffn 2048, vocabulary 58101 (shared embeddings,
                 tied output), 512 positions, swish

Tokenizers: the test fixtures' (tests/fixtures/tokenizers/wordpiece, 1000 pieces; unigram, 836 ids in vocab.json,
which is grown here to 58101 entries with "<extra_i>" pieces: the translator requires tokenizer and model to agree),
whose ids all lie below the big vocabularies, so the models compute at full size (embedding table, output
projection over 58101 ids) from real-looking token ids.

Written into --out (bench/peers/out):
  <name>.hf/                         the HF folder (config.json, model.safetensors, tokenizer files)
  distilbert-hf.{maps,nomaps}.onnx   ids int64 [1,T] -> logits [1,2] [+ attentions [L,1,H,T,T]]
  marian-hf.encoder.{maps,nomaps}.onnx   src_ids int64 [1,S] -> cross_k_l, cross_v_l [1,H,S,dh] [+ encoder_self
                                     [L,1,H,S,S]]
  marian-hf.decoder.{maps,nomaps}.onnx   one step with an explicit KV cache: token int64 [N,1], pos int64 [1],
                                     past_k_l / past_v_l [N,H,t,dh], cross_k_l / cross_v_l -> logits [N,V] (with
                                     final_logits_bias; <pad> is suppressed by the caller, as the engine does),
                                     present_k_l / present_v_l [+ decoder_self [L,N,H,t+1], cross [L,N,H,S]]
  <name>.json                        the manifest (sizes, special ids), tatoeba_dev.de (export_translation.py's)

  /usr/bin/python3 bench/peers/export_hf.py [--out bench/peers/out] [--only distilbert-hf|marian-hf]
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_common import OPSET, Graph, export, finish, kv_cache_io, parse_args, recipe, write_tatoeba_dev  # noqa: E402

recipe("hf")
import torch  # noqa: E402

import bert  # noqa: E402
import distilbert  # noqa: E402
import marian  # noqa: E402
from decoder_fixtures import marian_checkpoint, marian_config, write_hf_folder  # noqa: E402
from encoder_fixtures import checkpoint, hf_config  # noqa: E402

STD = 0.05  # weight scale: attention neither uniform nor one-hot at these widths (q·k / √dh of spread ≈ 2)
DISTILBERT = {"arch": "distilbert", "cls": "DistilBertForSequenceClassification", "seed": 60, "layout": "save_pretrained",
              "tokenizer": "wordpiece",
              "config": {"vocab_size": 30522, "dim": 768, "n_layers": 6, "n_heads": 12, "hidden_dim": 3072,
                         "max_position_embeddings": 512, "activation": "gelu",
                         "id2label": {"0": "NEGATIVE", "1": "POSITIVE"}}}
MARIAN_SEED = 61
MARIAN = {"vocab_size": 58101, "decoder_vocab_size": 58101, "d_model": 512, "encoder_layers": 6, "decoder_layers": 6,
          "encoder_attention_heads": 8, "decoder_attention_heads": 8, "encoder_ffn_dim": 2048, "decoder_ffn_dim": 2048,
          "activation_function": "swish", "max_position_embeddings": 512}
UNIGRAM = ["unigram/vocab.json", "unigram/source.spm", "unigram/target.spm", "unigram/tokenizer_config.json"]


class Classifier(Graph):
    def forward(self, ids):
        logits, _, attentions, _ = self.m(ids[0])
        out = [logits.unsqueeze(0)]
        if self.maps:
            out.append(torch.stack(attentions, 0).unsqueeze(1))
        return tuple(out)


def export_distilbert(out):
    cfg = hf_config(DISTILBERT)
    model = bert.random_state(distilbert.build(cfg, True), DISTILBERT["seed"], STD)
    write_hf_folder(os.path.join(out, "distilbert-hf.hf"), cfg, checkpoint(model, DISTILBERT, cfg),
                    [DISTILBERT["tokenizer"] + "/tokenizer.json"])
    written = []
    ids = torch.tensor([[2, 50, 60, 70, 3]], dtype=torch.long)
    for maps in (False, True):
        path = os.path.join(out, f"distilbert-hf.{'maps' if maps else 'nomaps'}.onnx")
        names = ["logits"] + (["attentions"] if maps else [])
        axes = {"ids": {1: "T"}, **({"attentions": {3: "T", 4: "T"}} if maps else {})}
        export(Classifier(model, maps), (ids,), path, input_names=["ids"], output_names=names, dynamic_axes=axes)
        written.append(path)
    meta = {"name": "distilbert-hf", "layers": cfg["n_layers"], "heads": cfg["n_heads"], "dim": cfg["dim"],
            "vocab_size": cfg["vocab_size"], "max_positions": cfg["max_position_embeddings"]}
    return meta, written


def pad_vocab(path, size):
    """vocab.json grown to the model's vocabulary (the translator requires the two to agree), as opus-mt's has
    58101 entries: the fixture's pieces keep their ids, ids above them are "<extra_i>" pieces source.spm never
    produces (the model can still write them; they decode as their piece text)."""
    with open(path, encoding="utf-8") as f:
        vocab = json.load(f)
    taken = set(vocab.values())
    vocab.update({f"<extra_{i}>": i for i in range(size) if i not in taken})
    with open(path, "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)


class MarianEncoder(Graph):
    """Batch 1, one sentence (no padding): the encoder, then every decoder layer's cross-attention K/V."""

    def forward(self, src_ids):
        m = self.m.model
        mem, attentions, _ = m.encoder(src_ids)
        out = []
        for layer in m.decoder.layers:
            ca = layer.encoder_attn
            out += [ca.shape(ca.k_proj(mem)), ca.shape(ca.v_proj(mem))]
        if self.maps:
            out.append(torch.stack(attentions, 0))
        return tuple(out)


class MarianStep(Graph):
    """marian.MarianDecoder over one new token per row with the cache as explicit inputs/outputs; a single query
    attends to every cached position, so the causal mask is the identity here."""

    def forward(self, token, pos, *cache):
        dec = self.m.model.decoder
        n = len(dec.layers)
        past, cross = cache[:2 * n], cache[2 * n:]
        y = dec.embed_tokens(token) * dec.embed_scale + torch.index_select(dec.embed_positions.weight, 0, pos)
        present, self_maps, cross_maps = [], [], []
        for i, layer in enumerate(dec.layers):
            a, (k, v), ws = layer.self_attn(y, past=(past[2 * i], past[2 * i + 1]))
            y = layer.self_attn_layer_norm(y + a)
            ck, cv = cross[2 * i], cross[2 * i + 1]
            c, _, wc = layer.encoder_attn(y, kv_input=ck, past=(ck, cv))
            y = layer.encoder_attn_layer_norm(y + c)
            y = layer.final_layer_norm(y + layer.fc2(layer.act(layer.fc1(y))))
            present += [k, v]
            self_maps.append(ws[:, :, 0])
            cross_maps.append(wc[:, :, 0])
        logits = self.m.lm_head(y[:, 0]) + self.m.final_logits_bias
        out = [logits] + present
        if self.maps:
            out += [torch.stack(self_maps, 0), torch.stack(cross_maps, 0)]
        return tuple(out)


def export_marian(out):
    cfg = marian_config("tiny")  # the fixtures' MarianMT fields and unigram special ids, at opus-mt-de-en's sizes
    cfg.update(MARIAN)
    model = marian.random_state(marian.MarianMTModel(cfg), MARIAN_SEED, STD)
    folder = os.path.join(out, "marian-hf.hf")
    write_hf_folder(folder, cfg, marian_checkpoint(model, "save_pretrained"), UNIGRAM)
    pad_vocab(os.path.join(folder, "vocab.json"), cfg["vocab_size"])
    L, H, d = cfg["decoder_layers"], cfg["decoder_attention_heads"], cfg["d_model"]
    dh = d // H
    written = []
    for maps in (False, True):
        variant = "maps" if maps else "nomaps"
        enc_out, enc_axes, in_names, out_names, axes = kv_cache_io(L, maps)
        path = os.path.join(out, f"marian-hf.encoder.{variant}.onnx")
        export(MarianEncoder(model, maps), (torch.tensor([[5, 6, 7, 8, 0]]),), path, input_names=["src_ids"],
               output_names=enc_out, dynamic_axes=enc_axes)
        written.append(path)
        n, t, s = 2, 3, 5
        past = [torch.randn(n, H, t, dh) for _ in range(2 * L)]
        cross = [torch.randn(n, H, s, dh) for _ in range(2 * L)]
        path = os.path.join(out, f"marian-hf.decoder.{variant}.onnx")
        export(MarianStep(model, maps), (torch.tensor([[4], [5]]), torch.tensor([t]), *past, *cross), path,
               input_names=in_names, output_names=out_names, dynamic_axes=axes)
        written.append(path)
    meta = {"name": "marian-hf", "architecture": "hf-marian", "vocab_size": cfg["vocab_size"], "d_model": d,
            "encoder_layers": cfg["encoder_layers"], "decoder_layers": L, "heads": H,
            "max_positions": cfg["max_position_embeddings"], "bos": cfg["decoder_start_token_id"],
            "eos": cfg["eos_token_id"], "suppress": cfg["pad_token_id"]}
    return meta, written


def main():
    args = parse_args(__doc__, lambda p: p.add_argument("--only", choices=["distilbert-hf", "marian-hf"]), bundle="")
    for name, make in (("distilbert-hf", export_distilbert), ("marian-hf", export_marian)):
        if args.only in (None, name):
            with torch.no_grad():
                meta, written = make(args.out)
            meta.update({"torch": torch.__version__, "opset": OPSET, "std": STD})
            finish(args.out, name, meta, written, indent=2)
    written = write_tatoeba_dev(args.out)
    if written:
        print(f"wrote {os.path.relpath(written)}")


if __name__ == "__main__":
    main()
