"""Word detectors over the 7x7 grid, learned from the training captions alone (no boxes): the weak attention targets
of `train.py --cam-sup`, which trains the attention towards them.

For every content word w of the vocabulary (not a function word, seen in the captions of >= --min-images training
photos), a linear score per grid cell, x_i(w) = W_w . a_i + b_w over the 1280 MobileNetV2 features a_i of cell i,
pooled over the 49 cells by log-sum-exp, s(w) = (1/r) log(mean_i exp(r x_i(w))), is trained to say whether any of
the photo's 5 captions uses w (binary cross entropy; multiple-instance learning as in Fang et al. 2015, "From
Captions to Visual Concepts and Back", whose detectors localise the words they learn). The cell scores x(w) are
then a class activation map (Zhou et al. 2016) of the word: where in the photo the evidence for w is.

  flock /tmp/attnlens-train.lock /usr/bin/python3 models/training/captioning/concepts.py \\
      --out models/training/captioning/runs/concepts.pt [--ground-out cam_dev.jsonl]

Writes {"words", "weight" [K, 1280], "bias" [K], "r", "min_count", "history"} (torch.save). On dev it reports the
mean average precision of the image-level word scores and, with --ground-out, the grounding of the maps
softmax(x(w)) on ../shared/ground/dev.jsonl (its score.py, the gold caption's words; words without a detector get
uniform maps): the ceiling of what attention trained towards these maps can point at. Dev only.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import data  # noqa: E402
import deletion  # noqa: E402  (STOP: the function words the deletion test leaves out)
import mobilenet  # noqa: E402
import text  # noqa: E402

SHARED = os.path.join(HERE, "..", "..", "..", "..", "shared")


def concept_words(tr_caps, itos, min_images):
    """Vocabulary words that are not function words or punctuation, used by >= min_images training photos."""
    count = {}
    for caps in tr_caps:
        for w in {t for c in caps for t in text.tokenize(c)}:
            count[w] = count.get(w, 0) + 1
    vocab = set(itos[4:])
    return sorted(w for w, n in count.items() if n >= min_images and w in vocab and w not in deletion.STOP
                  and any(ch.isalpha() for ch in w))


def labels(caps_list, words):
    idx = {w: k for k, w in enumerate(words)}
    y = np.zeros((len(caps_list), len(words)), np.float32)
    for i, caps in enumerate(caps_list):
        for t in {t for c in caps for t in text.tokenize(c)}:
            if t in idx:
                y[i, idx[t]] = 1
    return y


def lse_pool(x, r):
    """x [B, L, K] -> [B, K]: (1/r) log mean_i exp(r x_i)."""
    return (torch.logsumexp(r * x, dim=1) - np.log(x.shape[1])) / r


def cell_scores(feats, weight, bias, bs=250):
    """feats float16 [N, L, D] -> float32 [N, L, K]."""
    out = []
    for s in range(0, feats.shape[0], bs):
        f = torch.from_numpy(feats[s:s + bs].astype(np.float32))
        out.append((f @ weight.T + bias).numpy())
    return np.concatenate(out)


def average_precision(scores, y):
    aps = []
    for k in range(y.shape[1]):
        pos = y[:, k].sum()
        if pos == 0:
            continue
        order = np.argsort(-scores[:, k], kind="stable")
        hits = y[order, k]
        prec = np.cumsum(hits) / np.arange(1, len(hits) + 1)
        aps.append(float((prec * hits).sum() / pos))
    return float(np.mean(aps))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=mobilenet.DEFAULT_DATA_DIR)
    ap.add_argument("--cache-dir", default=data.CACHE)
    ap.add_argument("--out", required=True)
    ap.add_argument("--min-count", type=int, default=5, help="vocabulary threshold (as train.py)")
    ap.add_argument("--min-images", type=int, default=20)
    ap.add_argument("--r", type=float, default=5.0, help="log-sum-exp pooling sharpness")
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--wd", type=float, default=1e-4)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ground-out", help="write the dev.jsonl CAM maps here (score.py MODEL format) and score them")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    t0 = time.time()
    _, tr_feats, tr_caps = data.load_split("flickr8k", "train", args.data_dir, args.cache_dir)
    dv_names, dv_feats, dv_caps = data.load_split("flickr8k", "dev", args.data_dir, args.cache_dir)
    itos = text.build_vocab([text.tokenize(c) for cs in tr_caps for c in cs], args.min_count)  # as train.py
    words = concept_words(tr_caps, itos, args.min_images)
    y_tr, y_dv = labels(tr_caps, words), labels(dv_caps, words)
    print("%d concept words (>= %d training photos), e.g. %s" % (len(words), args.min_images, words[:12]), flush=True)
    lin = torch.nn.Linear(tr_feats.shape[2], len(words))
    torch.nn.init.zeros_(lin.weight)
    prior = y_tr.mean(0).clip(1e-4, 1 - 1e-4)
    lin.bias.data.copy_(torch.from_numpy(np.log(prior / (1 - prior))))
    opt = torch.optim.Adam(lin.parameters(), lr=args.lr, weight_decay=args.wd)
    rng = np.random.default_rng(args.seed)
    history = []
    for ep in range(args.epochs):
        order = rng.permutation(tr_feats.shape[0])
        tl = 0.0
        for s in range(0, len(order), args.batch):
            b = np.sort(order[s:s + args.batch])
            f = torch.from_numpy(tr_feats[b].astype(np.float32))
            logit = lse_pool(lin(f), args.r)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logit, torch.from_numpy(y_tr[b]))
            opt.zero_grad()
            loss.backward()
            opt.step()
            tl += float(loss) * len(b)
        with torch.no_grad():
            x = cell_scores(dv_feats, lin.weight, lin.bias)
            s_dv = lse_pool(torch.from_numpy(x), args.r).numpy()
        m_ap = average_precision(s_dv, y_dv)
        history.append(dict(epoch=ep + 1, train_bce=tl / len(order), dev_map=m_ap))
        print("epoch %d train bce %.4f dev mAP %.3f (%.1f min)" % (ep + 1, tl / len(order), m_ap,
                                                                  (time.time() - t0) / 60), flush=True)
    torch.save(dict(words=words, weight=lin.weight.detach().clone(), bias=lin.bias.detach().clone(), r=args.r,
                    min_count=args.min_count, history=history, command=" ".join(sys.argv)), args.out)
    print("wrote", args.out, flush=True)
    if args.ground_out:
        gold = [json.loads(ln) for ln in open(os.path.join(SHARED, "ground", "dev.jsonl"))]
        row = {n: i for i, n in enumerate(dv_names)}
        idx = {w: k for k, w in enumerate(words)}
        with torch.no_grad(), open(args.ground_out, "w") as f:
            for g in gold:
                i = row[g["image"]]
                x = cell_scores(dv_feats[i:i + 1], lin.weight, lin.bias)[0]  # [49, K]
                toks = text.tokenize(g["caption"])
                maps = []
                for t in toks:
                    if t in idx:
                        maps.append(torch.softmax(torch.from_numpy(x[:, idx[t]]), 0).tolist())
                    else:
                        maps.append([1.0 / x.shape[0]] * x.shape[0])
                f.write(json.dumps(dict(image=g["image"], tokens=toks,
                                        attention=dict(dims=[len(toks), 7, 7], data=sum(maps, [])))) + "\n")
        print("CAM maps on dev.jsonl (gold caption words; no detector: uniform):", flush=True)
        subprocess.run([sys.executable, os.path.join(SHARED, "ground", "score.py"),
                        os.path.join(SHARED, "ground", "dev.jsonl"), args.ground_out], check=False)


if __name__ == "__main__":
    main()
