"""Do our word vectors carry sentiment? A cheap probe that needs no network training: each sentence is the mean of
its (frozen) word vectors, a logistic regression (L-BFGS, L2 1e-4) is fit on SST-2 train and scored on the full
dev set. Compared with random vectors of the same shape and per-dimension scale (a random projection of the bag of
words), so the difference measures what the PPMI-SVD vectors add.

  /usr/bin/python3 models/training/sentiment/probe_vectors.py --vectors models/training/sentiment/cache/vec_ppmi200.npy
"""

import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


def mean_features(rows, stoi, vec):
    feats = np.zeros((len(rows), vec.shape[1]), dtype=np.float32)
    for r, (toks, _) in enumerate(rows):
        ids = [stoi.get(t, common.UNK_ID) for t in toks] or [common.UNK_ID]
        feats[r] = vec[ids].mean(0)
    return torch.from_numpy(feats), torch.tensor([y for _, y in rows], dtype=torch.float32)


def probe(vec, train, dev, stoi):
    xtr, ytr = mean_features(train, stoi, vec)
    xdv, ydv = mean_features(dev, stoi, vec)
    mu, sd = xtr.mean(0), xtr.std(0) + 1e-6
    xtr, xdv = (xtr - mu) / sd, (xdv - mu) / sd
    w = torch.zeros(xtr.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    opt = torch.optim.LBFGS([w, b], max_iter=200, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(xtr @ w + b, ytr) + 1e-4 * (w * w).sum()
        loss.backward()
        return loss

    opt.step(closure)
    with torch.no_grad():
        return float((((xdv @ w + b) > 0).float() == ydv).float().mean())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vectors", required=True)
    ap.add_argument("--data-dir", default=common.DEFAULT_DATA_DIR)
    args = ap.parse_args()
    torch.set_num_threads(1)
    train = common.read_sst2(os.path.join(args.data_dir, "sst2", "train.tsv"))
    dev = common.read_sst2(os.path.join(args.data_dir, "sst2", "dev.tsv"))
    vocab = common.build_vocab(train, 2)
    stoi = {w: i for i, w in enumerate(vocab)}
    vec = np.load(args.vectors)
    rnd = np.random.default_rng(0).normal(0, vec[2:].std(), size=vec.shape).astype(np.float32)
    out = {"probe": "mean of frozen word vectors + logistic regression, fit on train, full dev",
           "dev_accuracy_ppmi_svd": probe(vec, train, dev, stoi),
           "dev_accuracy_random": probe(rnd, train, dev, stoi)}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
