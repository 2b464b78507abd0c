"""Alignment Error Rate of a translator's attention on the hand-aligned Multi30k val pairs (../shared/align), by
forced decoding (teacher forcing) of the gold English sentence with the PyTorch model read back from the bundle —
the engine's maps equal these within 1e-4 (golden parity), so the links are the engine's.

  /usr/bin/python3 alignment_eval.py --bundle ../../de-en-general ../../de-en-transformer ...  [--json-out F]

Word level (the rule the engine documents): pieces are merged into words (aligner.words_of_pieces); a target
word's row is the MEAN of its pieces' rows, a source word's column is the SUM of its pieces' columns; the </s>
row and column are dropped. Output position t is the step that predicts target piece t ("output" rows).
Methods (each gives hard links (German word i, English word j)):
  layer<L>-mean       mean over the heads of decoder layer L, argmax over source words for each target word
  layer<L>-gdfa       the same mean matrix; its row argmaxes (target->source) and column argmaxes (source->target)
                      symmetrised with grow-diag-final-and (the aligner's symmetrisation)
  head<L>.<H>         one head, argmax per target word (for the trained alignment head of a guided model)
  head<L>.<H>-gdfa    one head, symmetrised as above
For RNN models there is one attention (layer 0, head 0). Reported: AER, precision, recall (aer.py, micro-averaged).
"""
import json
import os
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from aligner import ALIGN_DIR, gold_pairs, grow_diag_final_and, words_of_pieces  # noqa: E402
from bundle import load_bundle  # noqa: E402
from common import BOS, EOS, alignment_report_args, bpe_encode_ids, find_cli, pad_batch, read_lines  # noqa: E402


def word_matrix(attn, src_word_of, tgt_word_of, n_src_words, n_tgt_words):
    """attn (T_out, S) over pieces (incl. </s>) -> (n_tgt_words, n_src_words): sum over source pieces,
    mean over target pieces; </s> dropped."""
    a = np.asarray(attn, dtype=np.float64)
    cols = np.zeros((a.shape[0], n_src_words))
    for p, w in enumerate(src_word_of):
        if w >= 0:
            cols[:, w] += a[:, p]
    rows = np.zeros((n_tgt_words, n_src_words))
    counts = np.zeros(n_tgt_words)
    for t, w in enumerate(tgt_word_of):
        if w >= 0:
            rows[w] += cols[t]
            counts[w] += 1
    return rows / np.maximum(counts, 1)[:, None]


def links_argmax(m):
    return {(int(np.argmax(m[j])), j) for j in range(m.shape[0])}


def links_gdfa(m):
    rowwise = links_argmax(m)
    colwise = {(i, int(np.argmax(m[:, i]))) for i in range(m.shape[1])}
    return grow_diag_final_and(rowwise, colwise)


def aer_of(links_list):
    with tempfile.NamedTemporaryFile("w", suffix=".talp", delete=False) as f:
        for links in links_list:
            f.write(" ".join(f"{i}-{j}" for i, j in sorted(links)) + "\n")
        path = f.name
    sys.path.insert(0, ALIGN_DIR)
    import aer as aer_mod
    gold = aer_mod.read_lines(os.path.join(ALIGN_DIR, "val.talp"))
    hyp = aer_mod.read_lines(path)
    precision, recall, err, _ = aer_mod.aer(gold, hyp)
    os.unlink(path)
    return {"aer": round(100 * err, 2), "precision": round(100 * precision, 2), "recall": round(100 * recall, 2)}


def evaluate(bundle, cli, data_dir):
    model, cfg = load_bundle(bundle)
    prefix = os.path.join(bundle, "bpe")
    with open(prefix + ".vocab", encoding="utf-8") as f:
        vocab = [line.rstrip("\n") for line in f]
    gold = gold_pairs()
    de_lines = read_lines(data_dir, "val", "de")
    en_lines = read_lines(data_dir, "val", "en")
    src_ids = bpe_encode_ids(cli, prefix, [de_lines[g[0]] for g in gold])
    tgt_ids = bpe_encode_ids(cli, prefix, [en_lines[g[0]] for g in gold])
    per_method = {}
    mismatched = 0
    with torch.no_grad():
        for (line, g_de, g_en), s_ids, t_ids in zip(gold, src_ids, tgt_ids):
            s_of, s_words = words_of_pieces([vocab[i] for i in s_ids] + ["</s>"])
            t_of, t_words = words_of_pieces([vocab[i] for i in t_ids] + ["</s>"])
            if [w.lower() for w in s_words] != [w.lower() for w in g_de] or \
                    [w.lower() for w in t_words] != [w.lower() for w in g_en]:
                mismatched += 1
            _, attns = model(pad_batch([s_ids], suffix=EOS), pad_batch([t_ids], prefix=BOS))
            cross = attns["cross"]
            if isinstance(cross, torch.Tensor):  # RNN: (1, T, S) -> one layer, one head
                cross = [cross[:, None]]
            heads = {}
            for layer, a in enumerate(cross):
                a = a[0].numpy()  # (H, T, S)
                mean = word_matrix(a.mean(0), s_of, t_of, len(s_words), len(t_words))
                heads[f"layer{layer}-mean"] = links_argmax(mean)
                heads[f"layer{layer}-gdfa"] = links_gdfa(mean)
                if a.shape[0] > 1:
                    for h in range(a.shape[0]):
                        m = word_matrix(a[h], s_of, t_of, len(s_words), len(t_words))
                        heads[f"head{layer}.{h}"] = links_argmax(m)
                        heads[f"head{layer}.{h}-gdfa"] = links_gdfa(m)
            for k, v in heads.items():
                per_method.setdefault(k, []).append(v)
    results = {k: aer_of(v) for k, v in per_method.items()}
    return cfg, results, mismatched


def main():
    ap = alignment_report_args(__doc__)
    args = ap.parse_args()
    torch.set_num_threads(1)
    cli = find_cli(args.cli)
    report = {}
    for b in args.bundle:
        cfg, results, mismatched = evaluate(b, cli, args.data_dir)
        name = cfg["name"]
        report[name] = {"methods": results, "token_mismatches": mismatched,
                        "alignment_head": cfg.get("alignment_head")}
        print(f"== {name}: {len(results)} methods, gold pairs whose piece-words differ from the gold tokens: "
              f"{mismatched}")
        for k, v in sorted(results.items(), key=lambda kv: kv[1]["aer"]):
            print(f"  {k:16s} AER {v['aer']:6.2f}  P {v['precision']:6.2f}  R {v['recall']:6.2f}")
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
