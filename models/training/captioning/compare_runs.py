"""Two caption runs of the same images compared (say float32 against int8): how many captions are word for word the
same, the BLEU-4 difference, and its spread under a paired bootstrap over the images.

  /usr/bin/python3 models/training/captioning/evaluate_engine.py --split test --beams 10 --out f32.json
  /usr/bin/python3 models/training/captioning/evaluate_engine.py --bundle /tmp/int8/flickr8k-mobilenet \\
      --split test --beams 10 --out int8.json
  /usr/bin/python3 models/training/captioning/compare_runs.py f32.json int8.json [--key beam10] [--resamples 2000]

Input: evaluate_engine.py --out files (same split). BLEU-4 as there (docs/DESIGN.md §13: corpus BLEU, uniform
weights, no smoothing, closest reference length), computed here from per-image clipped n-gram counts so that a
resample costs a sum; the full-set value is checked against the nltk figure the file recorded. The bootstrap draws
the images with replacement (seed 0) and scores both runs on the same draw: the spread of B − A says how far a
difference of this size can come from which images happen to be in the set. Also printed: BLEU-4 of both runs on
the images whose captions differ.
"""
import argparse
import collections
import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from engine_io import DATA, flickr8k_captions  # noqa: E402
from evaluate_engine import tokenize  # noqa: E402


def ngram_counts(tokens, n):
    return collections.Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def image_stats(hyp, refs):
    """[matched_1, total_1, ..., matched_4, total_4, hyp_len, closest_ref_len] for one caption."""
    h = tokenize(hyp)
    rs = [tokenize(r) for r in refs]
    out = []
    for n in range(1, 5):
        best = collections.Counter()
        for r in rs:
            for g, c in ngram_counts(r, n).items():
                best[g] = max(best[g], c)
        out += [sum(min(c, best[g]) for g, c in ngram_counts(h, n).items()), max(len(h) - n + 1, 0)]
    out.append(len(h))
    out.append(min((abs(len(r) - len(h)), len(r)) for r in rs)[1])
    return out


def bleu4(stats):
    s = stats.sum(axis=0)
    if min(s[0:8:2]) == 0:
        return 0.0
    log_p = sum(math.log(s[2 * i] / s[2 * i + 1]) for i in range(4)) / 4
    brevity = min(0.0, 1.0 - s[9] / s[8]) if s[8] > 0 else 0.0
    return 100.0 * math.exp(log_p + brevity)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a", help="evaluate_engine.py --out JSON (the reference run, e.g. float32)")
    ap.add_argument("b", help="evaluate_engine.py --out JSON (the other run, e.g. int8)")
    ap.add_argument("--key", default=None, help="result key, e.g. beam10 (default: the only one both files have)")
    ap.add_argument("--resamples", type=int, default=2000)
    ap.add_argument("--data-dir", default=DATA)
    args = ap.parse_args()
    ja, jb = json.load(open(args.a)), json.load(open(args.b))
    if ja["split"] != jb["split"]:
        sys.exit("the runs are of different splits: %s, %s" % (ja["split"], jb["split"]))
    keys = sorted(set(ja["results"]) & set(jb["results"]))
    key = args.key or (keys[0] if len(keys) == 1 else None)
    if key not in keys:
        sys.exit("choose --key among %s" % keys)
    ra, rb = ja["results"][key], jb["results"][key]
    ha, hb = ra["hypotheses"], rb["hypotheses"]
    if set(ha) != set(hb):
        sys.exit("the runs captioned different images")
    caps = flickr8k_captions(args.data_dir)
    names = sorted(ha)
    sa = np.array([image_stats(ha[n], caps[n]) for n in names], dtype=np.float64)
    sb = np.array([image_stats(hb[n], caps[n]) for n in names], dtype=np.float64)
    fa, fb = bleu4(sa), bleu4(sb)
    for f, r, path in ((fa, ra, args.a), (fb, rb, args.b)):
        assert abs(f - r["scores"]["bleu4"]) < 1e-6, "%s: BLEU-4 %.6f here, %.6f recorded" % (path, f, r["scores"]["bleu4"])
    same = [ha[n] == hb[n] for n in names]
    rng = np.random.default_rng(0)
    diffs = np.empty(args.resamples)
    for i in range(args.resamples):
        pick = rng.integers(0, len(names), len(names))
        diffs[i] = bleu4(sb[pick]) - bleu4(sa[pick])
    lo, hi = np.percentile(diffs, [2.5, 97.5])
    differ = np.array([not s for s in same])
    print("%s, %s, %d images" % (ja["split"], key, len(names)))
    print("captions word for word the same: %d (%.1f%%)" % (sum(same), 100.0 * np.mean(same)))
    print("BLEU-4: %.2f -> %.2f (%+.2f); paired bootstrap (%d resamples): sd %.2f, 95%% [%+.2f, %+.2f]" % (
        fa, fb, fb - fa, args.resamples, diffs.std(), lo, hi))
    if differ.any():
        print("on the %d images whose captions differ: BLEU-4 %.2f -> %.2f" % (
            differ.sum(), bleu4(sa[differ]), bleu4(sb[differ])))


if __name__ == "__main__":
    main()
