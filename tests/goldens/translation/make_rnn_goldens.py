"""Tiny RNN translator bundles + goldens for engine parity (the shipped RNN bundles are exported later; these pin
the forward pass, the incremental decoder and the search on both RNN families with no dataset).

  /usr/bin/python3 tests/goldens/translation/make_rnn_goldens.py

Writes tests/goldens/translation/<name>/{config.json, weights.safetensors, bpe.vocab, bpe.merges, golden.json,
golden.safetensors} for name = rnn-additive (RnnAdditive) and rnn-general (RnnGeneral): randomly initialised
(fixed seeds) with tiny sizes, through the recipe's own bundle writer (models/training/translation/bundle.py),
and read back with its loader, so the reference is exactly what the engine loads. The golden format is the one of
models/training/translation/make_goldens.py (full logits for every case here: the vocabulary is 32 pieces).
The tokenizer has characters only (no merges): "▁" + the letters of each word. Case 0 also carries a "text" whose
ids the engine's BPE must reproduce, so the C++ test can run the whole api::Translator on it.
"""
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "models", "training", "translation"))
from bundle import load_bundle, write_bundle  # noqa: E402
from common import BOS, EOS, write_safetensors  # noqa: E402
from decoding import beam_search, greedy_batch  # noqa: E402
from make_goldens import TOP_K, add_logit_goldens  # noqa: E402
from models import RnnAdditive, RnnGeneral  # noqa: E402

MARK = "\u2581"
PIECES = ["<pad>", "<unk>", "<s>", "</s>", MARK] + [chr(c) for c in range(ord("a"), ord("z") + 1)] + ["."]
TEXT = "ein hund am see"


def text_ids(text):
    ids = []
    for word in text.split():
        ids.append(PIECES.index(MARK))
        ids.extend(PIECES.index(ch) for ch in word)
    return ids


def build(name, seed):
    torch.manual_seed(seed)
    vocab = len(PIECES)
    if name == "rnn-additive":
        model = RnnAdditive(vocab, emb=8, hidden=6, dec_hidden=10, attn=7, dropout=0.0)
        decoding = {"num_beams": 3, "alpha": 0.6, "coverage_penalty_beta": 1.5, "max_len_a": 2, "max_len_b": 4}
    else:
        model = RnnGeneral(vocab, emb=8, hidden=6, dec_layers=2, dropout=0.0)
        decoding = {"num_beams": 4, "alpha": 1.0, "coverage_penalty_beta": 0.0, "max_len_a": 1, "max_len_b": 5}
    with torch.no_grad():
        # Larger weights than the default init, so that distributions are peaked and searches take real decisions.
        model.embed.weight.normal_(0.0, 1.5)
        model.out_bias.uniform_(-1.0, 1.0)
        for n, p in model.named_parameters():
            if n not in ("embed.weight", "out_bias"):
                p.mul_(2.0)
    model.eval()
    return model, decoding


def main():
    torch.set_num_threads(1)
    for seed, name in enumerate(["rnn-additive", "rnn-general"], start=11):
        model, decoding = build(name, seed)
        out_dir = os.path.join(HERE, name)
        os.makedirs(out_dir, exist_ok=True)
        prefix = os.path.join(out_dir, "tiny")
        with open(prefix + ".vocab", "w", encoding="utf-8") as f:
            f.write("\n".join(PIECES) + "\n")
        with open(prefix + ".merges", "w", encoding="utf-8") as f:
            f.write("")
        decoding["algorithm"] = "models/training/translation/decoding.py"
        write_bundle(model, out_dir, "tiny-" + name, prefix, "F32", decoding,
                     {"generator": "tests/goldens/translation/make_rnn_goldens.py"})
        for ext in ("vocab", "merges"):
            os.remove(prefix + "." + ext)
        loaded, cfg = load_bundle(out_dir)

        rng = np.random.RandomState(seed)
        sources = [text_ids(TEXT)] + [list(rng.randint(1, len(PIECES), size=n)) for n in (1, 3, 7, 12, 5)]
        tensors, cases = {}, []
        for c, src in enumerate(sources):
            src_ids = [int(i) for i in src] + [EOS]
            tgt = [int(i) for i in rng.randint(4, len(PIECES), size=1 + c * 2)]
            tgt_in = [BOS] + tgt
            key = f"case{c}"
            s = torch.tensor([src_ids])
            with torch.no_grad():
                logits, attn = loaded(s, torch.tensor([tgt_in]))
            add_logit_goldens(tensors, key, logits[0], True)
            tensors[f"{key}/cross"] = attn["cross"][0].float().numpy()
            greedy = greedy_batch(loaded, s, max_len_a=decoding["max_len_a"], max_len_b=decoding["max_len_b"])[0]
            beam, details = beam_search(loaded, src_ids, beam=decoding["num_beams"], alpha=decoding["alpha"],
                                        beta=decoding["coverage_penalty_beta"], max_len_a=decoding["max_len_a"],
                                        max_len_b=decoding["max_len_b"], return_details=True)
            case = {"name": key, "source_ids": src_ids, "target_in_ids": tgt_in, "target_out_ids": tgt + [EOS],
                    "full_logits": True,
                    "attentions": [{"name": "cross", "layer": -1, "key": f"{key}/cross",
                                    "dims": list(attn["cross"][0].shape), "axes": ["step", "source"]}],
                    "greedy": {"ids": greedy},
                    f"beam{decoding['num_beams']}": {"ids": beam, "score": details["score"],
                                                      "normalised": details["normalised"],
                                                      "finished": details["finished"]}}
            if c == 0:
                case["text"] = TEXT
            cases.append(case)
        golden = {"model": cfg["name"], "architecture": cfg["architecture"],
                  "generator": "tests/goldens/translation/make_rnn_goldens.py", "torch": torch.__version__,
                  "tolerance": {"abs": 1e-4, "rel": 1e-3}, "top_k": TOP_K,
                  "decoding": {"greedy": {k: decoding[k] for k in ("max_len_a", "max_len_b")},
                               "beam": {k: decoding[k] for k in ("num_beams", "alpha", "coverage_penalty_beta",
                                                                 "max_len_a", "max_len_b")}},
                  "cases": cases}
        with open(os.path.join(out_dir, "golden.json"), "w") as f:
            json.dump(golden, f, indent=1)
            f.write("\n")
        write_safetensors(os.path.join(out_dir, "golden.safetensors"), tensors,
                          metadata={"generator": "tests/goldens/translation/make_rnn_goldens.py"})
        size = sum(os.path.getsize(os.path.join(out_dir, f)) for f in os.listdir(out_dir))
        print(f"{out_dir}: {len(cases)} cases, {size / 1e3:.1f} KB")
        beam_key = f"beam{decoding['num_beams']}"
        for c in cases:
            print(f"  {c['name']}: greedy {c['greedy']['ids']}  {beam_key} {c[beam_key]['ids']}")


if __name__ == "__main__":
    main()
