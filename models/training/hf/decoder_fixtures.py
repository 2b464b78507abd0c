"""Fixtures and goldens for the two generating architectures (GPT-2, MarianMT): seeded random-weight models of
several sizes, saved as Hugging Face folders (config.json + model.safetensors + tokenizer files), and the PyTorch
goldens the engine is checked against (tests/goldens/hf/<arch>-<size>.{json,safetensors}).

  /usr/bin/python3 models/training/hf/decoder_fixtures.py [--only gpt2|marian]
  then, per fixture, the converted bundle the engine tests read (wasm/convert):
  node wasm/cli.js convert tests/fixtures/hf/<f>/hf tests/fixtures/hf/<f>/bundle --name <f>

Layouts on purpose differ between sizes, as real checkpoints do: the "tiny" folders carry what an older
pytorch_model.bin state_dict holds (GPT-2 without the `transformer.` prefix and with its attn.bias / attn.masked_bias
buffers; Marian with the tied embed_tokens / lm_head copies), the "small" ones what save_pretrained writes
(prefixed names, tied copies left out). Both keep Marian's embed_positions tables.

Goldens (safetensors keys "case<i>/<what>", float32 row-major):
  GPT-2   logits [T, V]; attention.<l> [H, T, T]; hidden_states.<l> [T, d] (l = 0..n_layer, the last after ln_f).
  Marian  logits [T, V] (final_logits_bias added); encoder_attention.<l> [H, S, S]; decoder_attention.<l> [H, T, T];
          cross_attention.<l> [H, T, S]; encoder_hidden_states.<l> [S, d]; decoder_hidden_states.<l> [T, d].
The JSON holds the cases' ids and the greedy generations (new ids; per-step margin between the chosen logit and the
runner-up, all ≥ MIN_MARGIN so that float rounding cannot flip a choice).
"""
import argparse
import json
import os
import shutil
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))

import gpt2  # noqa: E402
import marian  # noqa: E402
from safetensors_io import write_safetensors  # noqa: E402

TOKENIZERS = os.path.join(ROOT, "tests", "fixtures", "tokenizers")
MIN_MARGIN = 1e-3
STD = 0.2  # weight scale: large enough that logits spread and greedy choices are clear-cut

GPT2_SIZES = {
    "tiny": {"seed": 11, "layout": "legacy",
             "config": {"n_embd": 24, "n_layer": 2, "n_head": 4, "n_positions": 32}},
    "small": {"seed": 12, "layout": "save_pretrained",
              "config": {"n_embd": 32, "n_layer": 3, "n_head": 4, "n_positions": 48, "n_inner": 80,
                         "layer_norm_epsilon": 1e-6, "scale_attn_by_inverse_layer_idx": True}},
}
MARIAN_SIZES = {
    "tiny": {"seed": 21, "layout": "legacy",
             "config": {"d_model": 16, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 4,
                        "decoder_attention_heads": 4, "encoder_ffn_dim": 32, "decoder_ffn_dim": 32,
                        "activation_function": "swish", "max_position_embeddings": 64}},
    "small": {"seed": 24, "layout": "save_pretrained",
              "config": {"d_model": 32, "encoder_layers": 3, "decoder_layers": 2, "encoder_attention_heads": 4,
                         "decoder_attention_heads": 2, "encoder_ffn_dim": 48, "decoder_ffn_dim": 40,
                         "activation_function": "gelu", "max_position_embeddings": 48}},
}


def gpt2_config(size):
    vocab = json.load(open(os.path.join(TOKENIZERS, "bytelevel-bpe", "tokenizer.json")))
    eos = next(t["id"] for t in vocab["added_tokens"] if t["content"] == "<|endoftext|>")
    cfg = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": len(vocab["model"]["vocab"]),
           "activation_function": "gelu_new", "bos_token_id": eos, "eos_token_id": eos, "n_ctx": None,
           "resid_pdrop": 0.1, "embd_pdrop": 0.1, "attn_pdrop": 0.1, "initializer_range": 0.02,
           "task_specific_params": {"text-generation": {"do_sample": True, "max_length": 50}}}
    cfg.update(GPT2_SIZES[size]["config"])
    cfg["n_ctx"] = cfg["n_positions"]
    return cfg


def marian_config(size):
    vocab = json.load(open(os.path.join(TOKENIZERS, "unigram", "vocab.json")))
    pad = vocab["<pad>"]
    cfg = {"architectures": ["MarianMTModel"], "model_type": "marian", "vocab_size": len(vocab),
           "decoder_vocab_size": len(vocab), "pad_token_id": pad, "eos_token_id": vocab["</s>"],
           "decoder_start_token_id": pad, "forced_eos_token_id": vocab["</s>"], "bad_words_ids": [[pad]],
           "scale_embedding": True, "normalize_before": False, "normalize_embedding": False,
           "static_position_embeddings": True, "add_bias_logits": False, "share_encoder_decoder_embeddings": True,
           "num_beams": 4, "max_length": 64, "dropout": 0.1, "init_std": 0.02}
    cfg.update(MARIAN_SIZES[size]["config"])
    return cfg


def np_state(model):
    return {k: v.detach().numpy().astype(np.float32) for k, v in model.state_dict().items()}


def gpt2_checkpoint(model, cfg, layout):
    state = np_state(model)
    state.pop("lm_head.weight")  # tied to transformer.wte.weight: a checkpoint stores it once
    if layout == "save_pretrained":
        return state
    n = cfg["n_positions"]
    out = {}
    for k, v in state.items():
        name = k[len("transformer."):]
        out[name] = v
        if name.endswith("attn.c_attn.weight"):
            layer = name[: -len("c_attn.weight")]
            out[layer + "bias"] = np.tril(np.ones((n, n), np.float32)).reshape(1, 1, n, n)
            out[layer + "masked_bias"] = np.array(-1e4, np.float32)
    return out


def marian_checkpoint(model, layout):
    state = np_state(model)
    if layout == "save_pretrained":
        for k in ("model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight", "lm_head.weight"):
            state.pop(k)
    return state


def write_hf_folder(folder, cfg, tensors, tokenizer_files):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    write_safetensors(os.path.join(folder, "model.safetensors"), tensors, {"format": "pt"})
    for src in tokenizer_files:
        shutil.copyfile(os.path.join(TOKENIZERS, src), os.path.join(folder, os.path.basename(src)))


def check_margins(name, margins):
    if min(margins) < MIN_MARGIN:
        raise SystemExit(f"{name}: a greedy step's margin {min(margins):.2e} < {MIN_MARGIN}: pick another seed")


def check_full_forward(name, logits, out):
    """The cached generation's choices are the argmax of a full teacher-forced forward (the cache is exact)."""
    full = torch.argmax(logits, dim=-1).tolist()
    if full != out:
        raise SystemExit(f"{name}: cached greedy {out} differs from the full forward's argmax {full}")


def write_goldens(name, meta, tensors):
    out = os.path.join(ROOT, "tests", "goldens", "hf")
    os.makedirs(out, exist_ok=True)
    meta = {"fixture": name, "generator": "models/training/hf/decoder_fixtures.py", "torch": torch.__version__,
            "tolerance": {"abs": 1e-4}, **meta}
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    write_safetensors(os.path.join(out, name + ".safetensors"),
                      {k: np.ascontiguousarray(v.detach().numpy().astype(np.float32)) for k, v in tensors.items()})


def make_gpt2(size):
    name = f"gpt2-{size}"
    spec = GPT2_SIZES[size]
    cfg = gpt2_config(size)
    model = gpt2.random_state(gpt2.GPT2LMHeadModel(cfg), spec["seed"], STD)
    write_hf_folder(os.path.join(ROOT, "tests", "fixtures", "hf", name, "hf"), cfg,
                    gpt2_checkpoint(model, cfg, spec["layout"]), ["bytelevel-bpe/tokenizer.json"])
    g = torch.Generator().manual_seed(spec["seed"] + 1000)
    vocab, eos = cfg["vocab_size"], cfg["eos_token_id"]
    cases, tensors = [], {}
    for i, length in enumerate([1, 7, min(20, cfg["n_positions"])]):
        ids = torch.randint(0, vocab, (1, length), generator=g)
        with torch.no_grad():
            logits, _, attentions, hidden = model(ids)
        cases.append({"input_ids": ids[0].tolist()})
        tensors[f"case{i}/logits"] = logits[0]
        for l, w in enumerate(attentions):
            tensors[f"case{i}/attention.{l}"] = w[0]
        for l, h in enumerate(hidden):
            tensors[f"case{i}/hidden_states.{l}"] = h[0]
    generations = []
    for length in [1, 4, 9]:
        prompt = torch.randint(0, vocab - 1, (length,), generator=g).tolist()
        out, margins = model.greedy(prompt, 12, eos)
        check_margins(name, margins)
        with torch.no_grad():
            logits = model(torch.tensor([prompt + out[:-1]]))[0][0, len(prompt) - 1:]
        check_full_forward(name, logits, out)
        generations.append({"prompt_ids": prompt, "max_new_tokens": 12, "output_ids": out,
                            "min_margin": min(margins)})
    write_goldens(name, {"architecture": "hf-gpt2", "cases": cases, "generations": generations}, tensors)


def make_marian(size):
    name = f"marian-{size}"
    spec = MARIAN_SIZES[size]
    cfg = marian_config(size)
    model = marian.random_state(marian.MarianMTModel(cfg), spec["seed"], STD)
    write_hf_folder(os.path.join(ROOT, "tests", "fixtures", "hf", name, "hf"), cfg,
                    marian_checkpoint(model, spec["layout"]),
                    ["unigram/vocab.json", "unigram/source.spm", "unigram/target.spm",
                     "unigram/tokenizer_config.json"])
    g = torch.Generator().manual_seed(spec["seed"] + 1000)
    pad, eos = cfg["pad_token_id"], cfg["eos_token_id"]

    def source(length):  # pieces in [1, pad), then </s>
        return torch.randint(1, pad, (length - 1,), generator=g).tolist() + [eos]

    cases, tensors = [], {}
    for i, (s_len, t_len) in enumerate([(1, 1), (6, 4), (15, 11)]):
        src = source(s_len)
        tgt_in = [pad] + torch.randint(1, pad, (t_len - 1,), generator=g).tolist()
        with torch.no_grad():
            logits, enc_w, self_w, cross_w, enc_h, dec_h = model(torch.tensor([src]), torch.tensor([tgt_in]))
        cases.append({"src_ids": src, "tgt_in": tgt_in})
        tensors[f"case{i}/logits"] = logits[0]
        for what, maps in (("encoder_attention", enc_w), ("decoder_attention", self_w), ("cross_attention", cross_w),
                           ("encoder_hidden_states", enc_h), ("decoder_hidden_states", dec_h)):
            for l, m in enumerate(maps):
                tensors[f"case{i}/{what}.{l}"] = m[0]
    generations = []
    for length in [2, 5, 10]:
        src = source(length)
        out, margins = model.greedy(src, 12)
        check_margins(name, margins)
        with torch.no_grad():
            logits = model(torch.tensor([src]), torch.tensor([[pad] + out[:-1]]))[0][0]
        logits[:, pad] = float("-inf")
        check_full_forward(name, logits, out)
        generations.append({"src_ids": src, "max_new_tokens": 12, "output_ids": out, "min_margin": min(margins)})
    write_goldens(name, {"architecture": "hf-marian", "decoder_start_token_id": pad, "cases": cases,
                         "generations": generations}, tensors)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=["gpt2", "marian"])
    args = ap.parse_args()
    torch.set_num_threads(2)
    for arch, make, sizes in (("gpt2", make_gpt2, GPT2_SIZES), ("marian", make_marian, MARIAN_SIZES)):
        if args.only in (None, arch):
            for size in sizes:
                make(size)
                print("wrote", f"{arch}-{size}")


if __name__ == "__main__":
    main()
