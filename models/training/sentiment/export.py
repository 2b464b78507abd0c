"""Export a trained SST-2 checkpoint as an attnlens bundle, verify it, and write the parity goldens.

  /usr/bin/python3 models/training/sentiment/export.py --checkpoint models/training/sentiment/runs/<run>/best.pt \
      --out models/sst2-selfattn

Writes <out>/config.json, weights.safetensors (embedding in F16 unless --emb-dtype f32, everything else F32),
vocab.txt, golden.json, golden.safetensors, and prints/writes export_report.json with:
  * dev accuracy of the checkpoint (F32) and of the bundle as read back (F16 embedding) over the full dev set;
  * the max |Δlogit| between the bundle read back and the checkpoint with its embedding rounded the same way
    (must be 0: the bundle holds exactly those weights);
  * the max |Δ| between the model's batched forward and an explicit one-sentence forward written step by step
    from the documented maths (the C++ port follows that one), on every golden sentence.
"""

import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

# Golden sentences: the first 6 dev sentences (short and long, both labels), a one-word input, and a sentence
# with out-of-vocabulary words (they must map to <unk>).
EXTRA_GOLDEN = ["terrific", "the plot is zorblaxian and the acting is n't quxotic at all ."]


def explicit_selfattn(model, ids):
    """One sentence, no padding, written from SelfAttnClassifier's documented maths (loops, no nn.LSTM)."""
    sd = {k: v.double() for k, v in model.state_dict().items()}
    x = sd["embedding.weight"][ids]                                   # (T, E)
    T = x.shape[0]
    u = sd["lstm.weight_hh_l0"].shape[1]

    def run(direction, order):
        w_ih, w_hh = sd[f"lstm.weight_ih_l0{direction}"], sd[f"lstm.weight_hh_l0{direction}"]
        b = sd[f"lstm.bias_ih_l0{direction}"] + sd[f"lstm.bias_hh_l0{direction}"]
        h = torch.zeros(u, dtype=torch.float64)
        c = torch.zeros(u, dtype=torch.float64)
        out = torch.zeros(T, u, dtype=torch.float64)
        for t in order:
            z = w_ih @ x[t] + w_hh @ h + b
            i, f, g, o = torch.sigmoid(z[:u]), torch.sigmoid(z[u:2 * u]), torch.tanh(z[2 * u:3 * u]), \
                torch.sigmoid(z[3 * u:])
            c = f * c + i * g
            h = o * torch.tanh(c)
            out[t] = h
        return out

    H = torch.cat([run("", range(T)), run("_reverse", range(T - 1, -1, -1))], dim=1)   # (T, 2u)
    A = torch.softmax(sd["ws2.weight"] @ torch.tanh(sd["ws1.weight"] @ H.t()), dim=1)  # (r, T)
    m = (A @ H).reshape(-1)
    z = torch.relu(sd["fc.weight"] @ m + sd["fc.bias"])
    logits = sd["out.weight"] @ z + sd["out.bias"]
    return logits, A, {"hidden": H, "sentence_embedding": m}


def explicit_relation(model, ids):
    """One sentence, no padding, written from RelationClassifier's documented maths (explicit pair loop)."""
    sd = {k: v.double() for k, v in model.state_dict().items()}
    x = sd["embedding.weight"][ids]
    T = x.shape[0]
    h = sd["g_fc2.weight"].shape[0]
    s = torch.zeros(T, T, dtype=torch.float64)
    g = torch.zeros(T, T, h, dtype=torch.float64)
    for i in range(T):
        for j in range(T):
            p = torch.cat([x[i], x[j]])
            g1 = torch.relu(sd["g_fc1.weight"] @ p + sd["g_fc1.bias"])
            g[i, j] = torch.relu(sd["g_fc2.weight"] @ g1 + sd["g_fc2.bias"])
            s[i, j] = sd["att_fc2.weight"][0] @ torch.tanh(sd["att_fc1.weight"] @ p + sd["att_fc1.bias"]) \
                + sd["att_fc2.bias"][0]
    alpha = torch.softmax(torch.sigmoid(s), dim=1)                    # (T, T), rows sum to 1
    r = (alpha[:, :, None] * g).sum(dim=1)                            # (T, h)
    sent = r.mean(dim=0)
    z = torch.relu(sd["fc.weight"] @ sent + sd["fc.bias"])
    logits = sd["out.weight"] @ z + sd["out.bias"]
    return logits, alpha, {"sentence_embedding": sent}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--data-dir", default=common.DEFAULT_DATA_DIR)
    ap.add_argument("--emb-dtype", choices=["f16", "f32"], default="f16")
    ap.add_argument("--report-dir", default=os.path.dirname(os.path.abspath(__file__)))
    args = ap.parse_args()
    torch.set_num_threads(1)  # see README.md: one thread is far cheaper on this oversubscribed machine

    ck = torch.load(args.checkpoint)
    meta = ck["meta"]
    cfg, vocab = meta["cfg"], meta["vocab"]
    stoi = {w: i for i, w in enumerate(vocab)}
    model = common.build_model(cfg)
    model.load_state_dict(ck["model"])
    model.eval()
    dev = common.read_sst2(os.path.join(args.data_dir, "sst2", "dev.tsv"))
    dev_enc = [(common.encode(t, stoi), y) for t, y in dev]
    acc_f32 = common.accuracy(model, dev_enc)

    # ---- write the bundle
    os.makedirs(args.out, exist_ok=True)
    tensors = {}
    for name, t in model.state_dict().items():
        arr = t.numpy().astype(np.float32)
        if name == "embedding.weight" and args.emb_dtype == "f16":
            arr = arr.astype(np.float16)
        tensors[name] = arr
    save_name = "weights.safetensors"
    common.write_safetensors(os.path.join(args.out, save_name), tensors)
    with open(os.path.join(args.out, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(vocab) + "\n")
    config = {
        "format": "attnlens-bundle",
        "version": 1,
        "architecture": cfg["architecture"],
        "task": "sentiment-analysis",
        "labels": common.LABELS,
        "vocab_size": cfg["vocab_size"],
        "emb_dim": cfg["emb_dim"],
    }
    if cfg["architecture"] == "selfattn-classifier":
        config.update({"lstm_hidden": cfg["lstm_hidden"], "lstm_layers": 1, "bidirectional": True,
                       "lstm_gate_order": "i,f,g,o (PyTorch nn.LSTM)", "att_hidden": cfg["att_hidden"],
                       "hops": cfg["hops"], "mlp_hidden": cfg["mlp_hidden"], "mlp_activation": "relu",
                       "attention": "A = softmax_T(ws2 tanh(ws1 H^T)), no biases; M = A H flattened hop-major"})
    else:
        config.update({"rel_hidden": cfg["rel_hidden"], "att_hidden": cfg["att_hidden"],
                       "mlp_hidden": cfg["mlp_hidden"], "mlp_activation": "relu",
                       "pair_input": "concat(x_i, x_j): first half of g_fc1/att_fc1 columns multiplies x_i",
                       "attention": "alpha[i,j] = softmax_j(sigmoid(att_fc2 tanh(att_fc1 [x_i;x_j]))); "
                                    "sentence = mean_i sum_j alpha[i,j] relu(g_fc2 relu(g_fc1 [x_i;x_j]))"})
    config["tokenizer"] = {
        "type": "whitespace-vocab",
        "vocab": "vocab.txt",
        "lowercase": True,
        "pretokenization": "SST-2/PTB style: lowercase; punctuation split off; clitics split "
                           "(\"don't\" -> \"do n't\", \"it's\" -> \"it 's\"); tokens joined by single spaces",
        "pad_token": common.PAD, "pad_id": common.PAD_ID,
        "unk_token": common.UNK, "unk_id": common.UNK_ID,
    }
    config["weights"] = save_name
    with open(os.path.join(args.out, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2, ensure_ascii=False)
        f.write("\n")

    # ---- read it back and verify
    cfg2, vocab2, loaded = common.load_bundle(args.out)
    assert vocab2 == vocab
    rounded = common.build_model(cfg)
    sd = {k: v.clone() for k, v in ck["model"].items()}
    if args.emb_dtype == "f16":
        sd["embedding.weight"] = sd["embedding.weight"].half().float()
    rounded.load_state_dict(sd)
    rounded.eval()
    max_bundle_diff = 0.0
    with torch.no_grad():
        for batch in common.make_batches(dev_enc, 256, shuffle=False):
            ids, lengths, _ = common.collate(dev_enc, batch)
            a, _ = loaded(ids, lengths)
            b, _ = rounded(ids, lengths)
            max_bundle_diff = max(max_bundle_diff, float((a - b).abs().max()))
    if max_bundle_diff != 0.0:
        raise SystemExit(f"bundle does not reproduce the checkpoint: max |Δlogit| = {max_bundle_diff}")
    acc_bundle = common.accuracy(loaded, dev_enc)

    # ---- goldens, from the bundle as read back
    texts = [" ".join(t) for t, _ in dev[:6]] + EXTRA_GOLDEN
    explicit = explicit_selfattn if cfg["architecture"] == "selfattn-classifier" else explicit_relation
    cases, gold = [], {}
    max_explicit_diff = 0.0
    with torch.no_grad():
        for ci, text in enumerate(texts):
            tokens = text.split(" ")
            ids = common.encode(tokens, stoi)
            logits, att = loaded(torch.tensor([ids]), torch.tensor([len(ids)]))
            logits, att = logits[0], att[0]
            e_logits, e_att, extras = explicit(loaded, torch.tensor(ids))
            max_explicit_diff = max(max_explicit_diff, float((logits.double() - e_logits).abs().max()),
                                    float((att.double() - e_att).abs().max()))
            probs = torch.softmax(logits, dim=0)
            label = int(probs.argmax())
            cases.append({"text": text, "tokens": [vocab[i] for i in ids], "ids": ids,
                          "label": label, "label_name": common.LABELS[label], "score": float(probs[label]),
                          "attention_name": "self-attention" if cfg["architecture"] == "selfattn-classifier"
                          else "pair-attention",
                          "attention_dims": list(att.shape)})
            gold[f"case{ci}/logits"] = logits.numpy().astype(np.float32)
            gold[f"case{ci}/probabilities"] = probs.numpy().astype(np.float32)
            gold[f"case{ci}/attention"] = att.numpy().astype(np.float32)
            for k, v in extras.items():
                gold[f"case{ci}/{k}"] = v.float().numpy()
    if max_explicit_diff > 1e-5:
        raise SystemExit(f"explicit forward disagrees with the model: {max_explicit_diff}")
    common.write_safetensors(os.path.join(args.out, "golden.safetensors"), gold)
    golden = {
        "model": os.path.basename(os.path.normpath(args.out)),
        "generator": "models/training/sentiment/export.py",
        "torch": torch.__version__,
        "tolerance": {"abs": 1e-4},
        "notes": "attention: selfattn (hops, T) rows sum to 1 over T; relation (T, T) row i = softmax over j. "
                 "case<i>/hidden = BiLSTM outputs (T, 2u) [fwd | bwd]; case<i>/sentence_embedding = flattened "
                 "M (selfattn) or the mean pair representation (relation).",
        "cases": cases,
    }
    with open(os.path.join(args.out, "golden.json"), "w", encoding="utf-8") as f:
        json.dump(golden, f, indent=1, ensure_ascii=False)
        f.write("\n")

    report = {
        "checkpoint": args.checkpoint, "n_params": meta["n_params"], "train_command": meta["command"],
        "best_step": ck["state"]["best_step"], "train_minutes": ck["state"]["train_seconds"] / 60,
        "dev_accuracy_checkpoint_f32": acc_f32, "dev_accuracy_bundle": acc_bundle, "emb_dtype": args.emb_dtype,
        "max_abs_logit_diff_bundle_vs_checkpoint": max_bundle_diff,
        "max_abs_diff_explicit_forward": max_explicit_diff,
        "bundle_bytes": {f: os.path.getsize(os.path.join(args.out, f)) for f in sorted(os.listdir(args.out))},
    }
    print(json.dumps(report, indent=1))
    with open(os.path.join(args.report_dir, f"export_report_{golden['model']}.json"), "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
