"""A statistical word aligner written for this project: fast_align's reparameterised IBM Model 2 (Dyer, Chahuneau &
Smith 2013) trained by EM in both directions and symmetrised with grow-diag-final-and (Koehn et al. 2005).
It makes the labels of the guided alignment head (Garg et al. 2019) and is itself measured on ../shared/align.

Model, one direction (target word j of m picks source position a_j in {NULL, 1..n}):
  p(a_j = 0)       = p0                                                   (NULL, p0 = 0.08)
  p(a_j = i >= 1)  = (1 - p0) * exp(-lambda |i/n - j/m|) / Z_j           (diagonal prior, lambda = 4)
  p(e_j | f_i)     = t(e_j | f_i)                                          (lexical table, EM, t init uniform)
EM, vectorised over every (sentence, j, i) triple at once with numpy; hard links: argmax_i posterior, NULL = none.
Symmetrisation (grow-diag-final-and): start from the intersection of the two directions; repeatedly add union
links that neighbour (8-neighbourhood) a current link and align a word not yet aligned; finally add union links
whose two words are both unaligned.

Words: the pieces of the project's BPE merged into words (see words_of_pieces: a piece that starts with the
space marker, a punctuation piece, and the piece after a punctuation piece start a new word) — the same words
`re.findall(r"\\w+|[^\\w\\s]", line)` gives for ordinary text, and the rule the engine uses for word-level maps.

  /usr/bin/python3 aligner.py gold    # train on the general corpus + Multi30k val texts, AER on ../shared/align
  /usr/bin/python3 aligner.py labels  # + piece-level training labels for the alignment head (align_labels.py)
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import REPO  # noqa: E402

ALIGN_DIR = os.path.join(REPO, "..", "shared", "align")
MARK = "\u2581"
_WORD = re.compile(r"\w", re.UNICODE)


# ---------------------------------------------------------------- pieces -> words
def is_punct_piece(piece):
    p = piece[1:] if piece.startswith(MARK) else piece
    return len(p) == 1 and not _WORD.match(p)


def words_of_pieces(pieces):
    """word index of every piece, and the word strings (marker removed). Specials (<s>, </s>, <pad>) get -1."""
    word_of, words, prev_punct, carried = [], [], False, []
    for p in pieces:
        if p in ("<s>", "</s>", "<pad>"):
            word_of.append(-1)
            prev_punct, carried = False, []
            continue
        if p == MARK:  # the marker alone (before an <unk>): belongs to the next piece's word
            carried.append(len(word_of))
            word_of.append(-1)
            continue
        # an <unk> counts as punctuation here only through the engine's view of the input character; the
        # recipes' texts have no characters outside the vocabulary (0 <unk> in every split), so plain rules suffice
        punct = is_punct_piece(p)
        if not words or p.startswith(MARK) or carried or punct or prev_punct:
            words.append("")
        words[-1] += p[1:] if p.startswith(MARK) else p
        for k in carried:
            word_of[k] = len(words) - 1
        word_of.append(len(words) - 1)
        prev_punct, carried = punct, []
    return word_of, words


# ---------------------------------------------------------------- EM, one direction
class Direction:
    """fast_align in one direction over integer-coded sentences (source ids >= 1; 0 is NULL)."""

    def __init__(self, src, tgt, lam=4.0, p0=0.08):
        t0 = time.time()
        rows, s_tok, t_tok, prior, pos_i = [], [], [], [], []
        row_base = 0
        self.row_start = []
        for f, e in zip(src, tgt):
            n, m = len(f), len(e)
            if m == 0:
                self.row_start.append(row_base)
                continue
            i = np.arange(n + 1)
            j = np.arange(1, m + 1)
            w = np.exp(-lam * np.abs(i[None, 1:] / max(n, 1) - j[:, None] / m))  # (m, n)
            w = (1.0 - p0) * w / w.sum(axis=1, keepdims=True) if n else w
            pr = np.concatenate([np.full((m, 1), p0), w], axis=1)  # (m, n+1)
            rows.append(np.repeat(np.arange(row_base, row_base + m), n + 1))
            s_tok.append(np.tile(np.concatenate([[0], f]), m))
            t_tok.append(np.repeat(np.asarray(e), n + 1))
            prior.append(pr.reshape(-1))
            pos_i.append(np.tile(i, m))
            self.row_start.append(row_base)
            row_base += m
        self.n_rows = row_base
        self.rows = np.concatenate(rows).astype(np.int64)
        self.pos_i = np.concatenate(pos_i).astype(np.int32)
        self.prior = np.concatenate(prior)
        s_tok = np.concatenate(s_tok).astype(np.int64)
        t_tok = np.concatenate(t_tok).astype(np.int64)
        keys = s_tok * (int(t_tok.max()) + 1) + t_tok
        uniq, self.pid = np.unique(keys, return_inverse=True)
        self.pair_src = (uniq // (int(t_tok.max()) + 1)).astype(np.int64)
        self.t = np.ones(len(uniq))
        self.lengths = [(len(f), len(e)) for f, e in zip(src, tgt)]
        print(f"  {len(self.rows):,} (j, i) entries, {len(uniq):,} word pairs ({time.time() - t0:.0f}s)", flush=True)

    def em(self, iterations=5):
        for it in range(iterations):
            p = self.t[self.pid] * self.prior
            norm = np.bincount(self.rows, p, minlength=self.n_rows)
            post = p / norm[self.rows]
            counts = np.bincount(self.pid, post, minlength=len(self.t))
            totals = np.bincount(self.pair_src, counts)
            self.t = counts / totals[self.pair_src]
            print(f"  EM iteration {it + 1}: log-likelihood per word {np.log(norm).mean():.4f}", flush=True)

    def viterbi(self):
        """[(links as set of (i, j) with 0-based source i and target j)] per sentence."""
        p = self.t[self.pid] * self.prior
        order = np.lexsort((-p, self.rows))  # per row, the best entry first
        first = order[np.r_[0, np.flatnonzero(np.diff(self.rows[order])) + 1]]
        best_i = np.full(self.n_rows, 0, dtype=np.int64)
        best_i[self.rows[first]] = self.pos_i[first]
        out = []
        for (n, m), base in zip(self.lengths, self.row_start):
            out.append({(int(best_i[base + j]) - 1, j) for j in range(m) if best_i[base + j] > 0})
        return out


def grow_diag_final_and(fwd, rev):
    """fwd, rev: sets of (i, j) links. Returns the symmetrised set."""
    a = fwd & rev
    union = fwd | rev
    ai = {i for i, _ in a}
    aj = {j for _, j in a}
    neigh = ((-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))
    added = True
    while added:
        added = False
        for i, j in sorted(a):
            for di, dj in neigh:
                c = (i + di, j + dj)
                if c in union and c not in a and (c[0] not in ai or c[1] not in aj):
                    a.add(c)
                    ai.add(c[0])
                    aj.add(c[1])
                    added = True
    for c in sorted(union - a):
        if c[0] not in ai and c[1] not in aj:
            a.add(c)
            ai.add(c[0])
            aj.add(c[1])
    return a


def align_corpus(de_words, en_words, iterations=5):
    """Symmetrised links for every pair of word lists (lowercased before counting)."""
    vocab = {}

    def code(ws):
        return np.asarray([vocab.setdefault(w.lower(), len(vocab) + 1) for w in ws], dtype=np.int64)

    de = [code(w) for w in de_words]
    en = [code(w) for w in en_words]
    print("direction de->en (each English word picks a German word)", flush=True)
    d1 = Direction(de, en)
    d1.em(iterations)
    fwd = d1.viterbi()
    del d1
    print("direction en->de (each German word picks an English word)", flush=True)
    d2 = Direction(en, de)
    d2.em(iterations)
    rev = [{(i, j) for j, i in links} for links in d2.viterbi()]
    del d2
    return [grow_diag_final_and(f, r) for f, r in zip(fwd, rev)], fwd, rev


# ---------------------------------------------------------------- corpus
def piece_words(prefix, ids_list):
    with open(prefix + ".vocab", encoding="utf-8") as f:
        vocab = [line.rstrip("\n") for line in f]
    return [words_of_pieces([vocab[i] for i in ids]) for ids in ids_list]


def gold_pairs():
    with open(os.path.join(ALIGN_DIR, "val.tsv"), encoding="utf-8") as f:
        return [(int(a), b.split(), c.split()) for a, b, c in (line.rstrip("\n").split("\t") for line in f)]


def write_talp(path, links_list):
    with open(path, "w") as f:
        for links in links_list:
            f.write(" ".join(f"{i}-{j}" for i, j in sorted(links)) + "\n")


def aer(hyp_path):
    out = subprocess.run([sys.executable, os.path.join(ALIGN_DIR, "aer.py"), os.path.join(ALIGN_DIR, "val.talp"),
                          hyp_path], stdout=subprocess.PIPE, check=True, text=True).stdout
    return out.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=("gold", "labels"))
    ap.add_argument("--merges", type=int, default=10000)
    ap.add_argument("--iterations", type=int, default=5)
    ap.add_argument("--out-dir", help="default: cache/general-bpe<N>/")
    args = ap.parse_args()
    from general import corpus_dir
    d = corpus_dir(args.merges)
    out_dir = args.out_dir or d
    with open(os.path.join(d, "encoded.json")) as f:
        blob = json.load(f)
    prefix = os.path.join(d, "joint")
    enc = blob["enc"]
    names = ("multi30k_train", "tatoeba_train", "val")
    sides = {name: (piece_words(prefix, enc[name][0]), piece_words(prefix, enc[name][1])) for name in names}
    de_words = [w for name in names for _, w in sides[name][0]]
    en_words = [w for name in names for _, w in sides[name][1]]
    t0 = time.time()
    links, fwd, rev = align_corpus(de_words, en_words, args.iterations)
    print(f"aligned {len(links):,} pairs in {time.time() - t0:.0f}s", flush=True)
    offs, k = {}, 0
    for name in names:
        offs[name] = k
        k += len(sides[name][0])

    # AER on the hand-aligned Multi30k val pairs (word tokens must agree with the gold tokens).
    gold = gold_pairs()
    hyp = {"gdfa": [], "de->en": [], "en->de": []}
    mismatch = 0
    for line, g_de, g_en in gold:
        r = offs["val"] + line
        if [w.lower() for w in de_words[r]] != [w.lower() for w in g_de] or \
                [w.lower() for w in en_words[r]] != [w.lower() for w in g_en]:
            mismatch += 1
        hyp["gdfa"].append(links[r])
        hyp["de->en"].append(fwd[r])
        hyp["en->de"].append(rev[r])
    print(f"gold pairs whose piece-words differ from the gold tokens: {mismatch}")
    report = {}
    for name, h in hyp.items():
        p = os.path.join(out_dir, f"aligner-{name.replace('>', '')}.talp")
        write_talp(p, h)
        report[name] = aer(p)
        print(f"AER {name}: {report[name]}")
    with open(os.path.join(out_dir, "aligner-aer.json"), "w") as f:
        json.dump(report, f, indent=1)

    if args.mode == "labels":
        # Piece-level labels for each distinct training pair: (source piece, output position) links, where
        # output position t predicts target piece t (out = bpe(tgt) + </s>); </s> links to the source </s>.
        labels = {}
        for name in ("multi30k_train", "tatoeba_train"):
            rows = []
            for r, ((s_of, _), (t_of, _)) in enumerate(zip(sides[name][0], sides[name][1])):
                wl = links[offs[name] + r]
                by_src = {}
                for p, w in enumerate(s_of):
                    by_src.setdefault(w, []).append(p)
                pairs = [(p, q) for q, wj in enumerate(t_of) for (wi, wj2) in wl if wj2 == wj
                         for p in by_src.get(wi, [])]
                pairs.append((len(s_of), len(t_of)))  # </s> -> </s>
                rows.append(sorted(set(pairs)))
            labels[name] = rows
        path = os.path.join(out_dir, "align-labels.json")
        with open(path, "w") as f:
            json.dump(labels, f)
        print(f"labels -> {path}")


if __name__ == "__main__":
    main()
