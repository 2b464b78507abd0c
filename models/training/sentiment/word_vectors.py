"""Word vectors trained by us: PPMI + truncated SVD (Levy, Goldberg & Dagan 2015, "Improving Distributional
Similarity with Lessons Learned from Word Embeddings", TACL): a count-based method that matches skip-gram on
similarity tasks at this corpus size, and runs in about a minute on two cores instead of tens of minutes of SGD.

  counts   c(w, c) = Σ over co-occurrences within ±window tokens, weighted (window − d + 1)/window
           (the expected weight of word2vec's dynamic window at distance d)
  PPMI     max(0, log( c(w,c) · Σc^α / (c(w) · c(c)^α) )),  α = 0.75 (context distribution smoothing)
  vectors  U_k · sqrt(Σ_k) of the rank-k SVD of the PPMI matrix (eigenvalue weighting p = 0.5)

Corpora (licences: see ../shared/data/*/SOURCE.md):
  * SST-2 train sentences (the supervised training split itself; no labels are used here)
  * Tatoeba English side (CC-BY 2.0, attribution: tatoeba.org and manythings.org/anki)
Not used: umich_si650 (no licence known), multi30k/flickr8k captions (non-commercial image descriptions, off-domain).

Words are the SST-2 training vocabulary (common.build_vocab); output rows follow its ids, with <pad> = 0 and
<unk> = the mean vector. Output: an .npy (vocab_size, dim) float32, rows scaled to a common norm.
"""

import argparse
import gzip
import os
import re
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


def ptb_like_tokens(text):
    """Lowercase and split the way SST-2 was tokenized: clitics (n't, 's, 're, 've, 'll, 'd, 'm) and
    punctuation become their own tokens ("don't" -> "do n't", "can't" -> "ca n't")."""
    text = text.lower()
    text = re.sub(r"([a-z])n't\b", r"\1 n't", text)
    text = re.sub(r"'(s|re|ve|ll|d|m)\b", r" '\1", text)
    text = re.sub(r"([.,!?;:\"()\[\]])", r" \1 ", text)
    return text.split()


def tatoeba_english(data_dir):
    """The English side of tatoeba_deu_eng, each distinct sentence once, tokenized like SST-2 (token lists)."""
    seen, out = set(), []
    with gzip.open(os.path.join(data_dir, "tatoeba_deu_eng", "deu.txt.gz"), "rt", encoding="utf-8") as f:
        for line in f:
            en = line.split("\t", 1)[0]
            if en not in seen:  # alternative translations repeat the English side
                seen.add(en)
                out.append(ptb_like_tokens(en))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=common.DEFAULT_DATA_DIR)
    ap.add_argument("--min-count", type=int, default=2)
    ap.add_argument("--dim", type=int, default=200)
    ap.add_argument("--window", type=int, default=5)
    ap.add_argument("--no-tatoeba", action="store_true", help="SST-2 train text only")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    torch.set_num_threads(2)
    torch.manual_seed(0)
    t0 = time.time()

    train = common.read_sst2(os.path.join(args.data_dir, "sst2", "train.tsv"))
    vocab = common.build_vocab(train, args.min_count)
    stoi = {w: i for i, w in enumerate(vocab)}
    V = len(vocab)

    sentences = [toks for toks, _ in train]
    if not args.no_tatoeba:
        sentences += tatoeba_english(args.data_dir)
    # one long id stream with -1 for words outside the vocabulary and a gap of `window` -1s between sentences
    # (out-of-vocabulary words keep their position so distances stay true)
    gap = [-1] * args.window
    stream = []
    for toks in sentences:
        stream += [stoi.get(t, -1) for t in toks] + gap
    ids = np.asarray(stream, dtype=np.int64)
    n_tokens = int((ids >= 0).sum())
    print(f"{len(sentences)} sentences, {n_tokens} in-vocabulary tokens, V={V}", flush=True)

    codes, weights = [], []
    for d in range(1, args.window + 1):
        a, b = ids[:-d], ids[d:]
        ok = (a >= 0) & (b >= 0)
        a, b = a[ok], b[ok]
        w = (args.window - d + 1) / args.window
        codes += [a * V + b, b * V + a]  # symmetric window
        weights += [np.full(2 * len(a), w)]
    codes = np.concatenate(codes)
    weights = np.concatenate(weights)
    uniq, inv = np.unique(codes, return_inverse=True)
    cnt = np.bincount(inv, weights=weights)
    rows, cols = uniq // V, uniq % V
    print(f"{len(uniq)} distinct pairs ({time.time() - t0:.0f}s)", flush=True)

    row_sum = np.bincount(rows, weights=cnt, minlength=V)
    col_pow = np.bincount(cols, weights=cnt, minlength=V) ** 0.75
    pmi = np.log(cnt * col_pow.sum() / (row_sum[rows] * col_pow[cols]))
    keep = pmi > 0
    dense = torch.zeros(V, V, dtype=torch.float32)
    dense[torch.from_numpy(rows[keep]), torch.from_numpy(cols[keep])] = torch.from_numpy(pmi[keep]).float()

    U, S, _ = torch.svd_lowrank(dense, q=args.dim, niter=4)
    vec = (U * S.sqrt()).numpy()
    norms = np.linalg.norm(vec, axis=1, keepdims=True)
    has = norms[:, 0] > 0
    vec[has] /= norms[has]
    rng = np.random.default_rng(0)
    vec[~has] = rng.normal(0, 1 / np.sqrt(args.dim), size=(int((~has).sum()), args.dim))
    vec[common.UNK_ID] = vec[2:].mean(0)
    vec[common.PAD_ID] = 0
    # scale so that each word vector has per-dimension std ≈ 0.5, in the range of a fresh nn.Embedding's
    # N(0,1) init shrunk for LSTM inputs that saturate less
    vec *= 0.5 * np.sqrt(args.dim)
    np.save(args.out, vec.astype(np.float32))

    unit = vec / np.maximum(np.linalg.norm(vec, axis=1, keepdims=True), 1e-9)
    for w in ["good", "bad", "boring", "masterpiece", "funny", "n't", "worst"]:
        if w in stoi:
            sims = unit @ unit[stoi[w]]
            nn_ = [vocab[i] for i in np.argsort(-sims)[1:8]]
            print(f"{w}: {' '.join(nn_)}")
    print(f"wrote {args.out} {vec.shape} in {time.time() - t0:.0f}s")


if __name__ == "__main__":
    main()
