"""How well can any map built from the encoder's features point at the named objects? An evaluation tool.

Before training a decoder towards some weak attention target, this scores candidate targets themselves on
../shared/ground/dev.jsonl (its score.py: pointing and mass, the gold caption's object words), with no decoder:

  saliency      sum of the cell's 1280 MobileNetV2 features (a class-agnostic "where is something" map)
  imagenet      the ImageNet classifier's class activation map (Zhou et al. 2016) of the photo's top-5 classes
  concepts      the caption-word detectors of concepts.py (runs/concepts.pt: MIL over the 7x7 grid)
  pyramid       the same detectors trained here over a 14x14 grid whose cells carry the stride-16 features (96) next
                to their stride-32 parent cell's (1280): a finer grid, "a feature pyramid ... projected"
and each of them times a centre prior exp(-d^2 / 2 sigma^2) (d in cells of the 7x7 grid).

  /usr/bin/python3 models/training/captioning/probe_maps.py [--pyramid-epochs 4] [--threads 1]

Needs the cached grids of extract_features.py (train for --pyramid, dev) and runs/concepts.pt. Dev only: tune here,
never on the held-out boxes. Prints one line per candidate (score.py's summary: all objects / small things).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bundle  # noqa: E402
import concepts  # noqa: E402
import data  # noqa: E402
import mobilenet  # noqa: E402
import text  # noqa: E402

SHARED = os.path.join(HERE, "..", "..", "..", "..", "shared")
GOLD = os.path.join(SHARED, "ground", "dev.jsonl")


def softmax(x):
    x = x - x.max()
    e = np.exp(x)
    return e / e.sum()


def score(gold, names_row, grid, map_of, tmp):
    """Writes score.py's MODEL file for map_of(image_row, word) -> [grid*grid] weights and returns its summary."""
    with open(tmp, "w") as f:
        for g in gold:
            i = names_row[g["image"]]
            toks = text.tokenize(g["caption"])
            maps = [map_of(i, t) for t in toks]
            f.write(json.dumps(dict(image=g["image"], tokens=toks, attention=dict(
                dims=[len(toks), grid, grid], data=np.concatenate(maps).astype(float).tolist()))) + "\n")
    out = subprocess.run([sys.executable, os.path.join(SHARED, "ground", "score.py"), GOLD, tmp],
                         capture_output=True, text=True).stdout
    return " | ".join(ln for ln in out.splitlines() if ln.startswith(("all", "small")))


def centre_d2(grid):
    yy, xx = np.mgrid[0:grid, 0:grid]
    c = (grid - 1) / 2
    return (((yy - c) ** 2 + (xx - c) ** 2) * (7.0 / grid) ** 2).flatten()


def train_pyramid(tr7, tr14, words, y, epochs, r=5.0, seed=1):
    """MIL word detectors over 14x14 cells: x_i(w) = W7 a7[parent(i)] + W14 (a14_i - mu) / sd + b."""
    torch.manual_seed(seed)
    K = len(words)
    parent = torch.tensor([(i // 14 // 2) * 7 + (i % 14) // 2 for i in range(196)])
    l7 = torch.nn.Linear(tr7.shape[2], K)
    l14 = torch.nn.Linear(tr14.shape[2], K, bias=False)
    for layer in (l7, l14):
        torch.nn.init.zeros_(layer.weight)
    prior = y.mean(0).clamp(1e-4, 1 - 1e-4)
    l7.bias.data.copy_(torch.log(prior / (1 - prior)))
    sample = torch.from_numpy(tr14[:500].astype(np.float32)).reshape(-1, tr14.shape[2])
    mu, sd = sample.mean(0), sample.std(0) + 1e-3
    opt = torch.optim.Adam(list(l7.parameters()) + list(l14.parameters()), lr=1e-3, weight_decay=1e-4)

    def cells(a7, a14):
        return l7(a7)[:, parent, :] + ((a14 - mu) / sd) @ l14.weight.T

    rng = np.random.default_rng(seed)
    t0 = time.time()
    for ep in range(epochs):
        order = rng.permutation(len(tr7))
        for s in range(0, len(order), 100):
            b = np.sort(order[s:s + 100])
            x = cells(torch.from_numpy(tr7[b].astype(np.float32)), torch.from_numpy(tr14[b].astype(np.float32)))
            loss = torch.nn.functional.binary_cross_entropy_with_logits(concepts.lse_pool(x, r), y[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("pyramid detectors: epoch %d, train bce %.4f (%.1f min)" % (ep + 1, float(loss), (time.time() - t0) / 60),
              flush=True)
    return cells


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=mobilenet.DEFAULT_DATA_DIR)
    ap.add_argument("--concepts", default=os.path.join(HERE, "runs", "concepts.pt"))
    ap.add_argument("--pyramid-epochs", type=int, default=4, help="0: skip the pyramid detectors")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    gold = [json.loads(ln) for ln in open(GOLD)]
    names, dv7, dv_caps = data.load_split("flickr8k", "dev", args.data_dir)
    row = {n: i for i, n in enumerate(names)}
    c = torch.load(args.concepts)
    idx = {w: k for k, w in enumerate(c["words"])}
    W, B = c["weight"].numpy(), c["bias"].numpy()
    enc, _ = bundle.read_safetensors(os.path.join(HERE, "..", "..", "mobilenet-v2-imagenet", "weights.safetensors"))
    Wc = enc["classifier.1.weight"].astype(np.float32) * enc["classifier.1.weight_scale"].astype(np.float32)[0]
    bc = enc["classifier.1.bias"].astype(np.float32)
    d7 = centre_d2(7)

    def concept(i, t):
        a = dv7[i].astype(np.float32)
        return a @ W[idx[t]] + B[idx[t]] if t in idx else np.zeros(49)

    def saliency(i, t):
        return np.log(dv7[i].astype(np.float32).sum(1) + 1e-6)

    def imagenet(i, t):
        lg = dv7[i].astype(np.float32) @ Wc.T + bc
        top = np.argsort(-lg.mean(0))[:5]
        return (lg[:, top] * softmax(lg.mean(0)[top])).sum(1)

    tmp = os.path.join(tempfile.mkdtemp(), "maps.jsonl")
    print("centre-cell and uniform baselines are in each line's parentheses", flush=True)
    for name, fn in (("saliency", saliency), ("imagenet", imagenet), ("concepts", concept)):
        for sigma in (None, 1.0, 1.5):
            prior = 0.0 if sigma is None else d7 / (2 * sigma * sigma)
            label = name if sigma is None else "%s x centre prior (sigma %.1f cells)" % (name, sigma)
            print("%-45s %s" % (label, score(gold, row, 7, lambda i, t: softmax(fn(i, t) - prior), tmp)), flush=True)
    if args.pyramid_epochs > 0:
        _, tr7, tr_caps = data.load_split("flickr8k", "train", args.data_dir)
        tr14 = np.load(os.path.join(data.CACHE, "flickr8k_train_grid14.npy"))
        dv14 = np.load(os.path.join(data.CACHE, "flickr8k_dev_grid14.npy"))
        itos = text.build_vocab([text.tokenize(x) for cs in tr_caps for x in cs], c["min_count"])
        words = concepts.concept_words(tr_caps, itos, 20)
        pidx = {w: k for k, w in enumerate(words)}
        cells = train_pyramid(tr7, tr14, words, torch.from_numpy(concepts.labels(tr_caps, words)), args.pyramid_epochs)
        d14 = centre_d2(14)
        with torch.no_grad():
            x = cells(torch.from_numpy(dv7.astype(np.float32)), torch.from_numpy(dv14.astype(np.float32))).numpy()
        for sigma in (None, 1.0):
            prior = 0.0 if sigma is None else d14 / (2 * sigma * sigma)
            label = "pyramid 14x14" if sigma is None else "pyramid 14x14 x centre prior (sigma %.1f)" % sigma
            print("%-45s %s" % (label, score(gold, row, 14, lambda i, t: softmax(
                (x[i, :, pidx[t]] if t in pidx else np.zeros(196)) - prior), tmp)), flush=True)


if __name__ == "__main__":
    main()
