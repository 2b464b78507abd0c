"""How sure is a pointing margin? Per-object pointing and centre-cell hits of one MODEL.jsonl on a box file, as
score.py counts them (same matching, same peak, same centre cell), and a 95% bootstrap interval of
pointing - centre (and of mass / uniform on small things) resampling PHOTOS (objects of a photo are not independent).

  /usr/bin/python3 models/training/captioning/ground_test/margin.py GOLD.jsonl MODEL.jsonl [--reps 10000]

MODEL.jsonl: e.g. ground.py --out-dir DIR's DIR/ground_forced.jsonl. Prints the point figures (which must equal
score.py's) and the intervals; seed fixed (0).
"""
import argparse
import json
import os
import random
import sys

from draw import SHARED

sys.path.insert(0, os.path.join(SHARED, "ground"))
from score import norm, stem, union_share  # noqa: E402


def per_object(gold, model):
    """[(photo index, kind_small, point_hit, centre_hit, mass, area)] for each counted object."""
    by_image = {stem(m["image"]): m for m in model}
    rows = []
    for gi, g in enumerate(gold):
        m = by_image.get(stem(g["image"]))
        if m is None:
            continue
        toks = [norm(t) for t in m["tokens"]]
        T, GH, GW = m["attention"]["dims"]
        for o in g["objects"]:
            w = norm(o["word"])
            if w not in toks:
                continue
            t = toks.index(w)
            row = m["attention"]["data"][t * GH * GW:(t + 1) * GH * GW]
            boxes = o["boxes"]

            def inside(c):
                x, y = ((c % GW) + 0.5) * 10 / GW, (c // GW + 0.5) * 10 / GH
                return any(a <= x <= cc and b <= y <= d for a, b, cc, d in boxes)

            best = max(range(GH * GW), key=lambda c: row[c])
            mass = sum(row[c] * union_share(boxes, (c % GW) * 10 / GW, (c // GW) * 10 / GH,
                                            (c % GW + 1) * 10 / GW, (c // GW + 1) * 10 / GH) for c in range(GH * GW))
            area = union_share(boxes, 0, 0, 10, 10, n=40)
            centre_cell = int(5 * GH / 10) * GW + int(5 * GW / 10)
            rows.append((gi, o["kind"] == "thing" and area < 0.5, inside(best), inside(centre_cell), mass, area))
    return rows


def figures(rows):
    n = len(rows)
    small = [r for r in rows if r[1]]
    return (100 * sum(r[2] - r[3] for r in rows) / n,
            sum(r[4] for r in small) / sum(r[5] for r in small))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gold")
    ap.add_argument("model")
    ap.add_argument("--reps", type=int, default=10000)
    args = ap.parse_args()
    gold = [json.loads(ln) for ln in open(args.gold, encoding="utf-8") if ln.strip()]
    model = [json.loads(ln) for ln in open(args.model, encoding="utf-8") if ln.strip()]
    rows = per_object(gold, model)
    n = len(rows)
    p, c = sum(r[2] for r in rows), sum(r[3] for r in rows)
    margin, ratio = figures(rows)
    print("objects %d: pointing %d (%.1f%%), centre %d (%.1f%%), margin %+.1f points; peak in box and centre not: %d,"
          " centre in box and peak not: %d" % (n, p, 100 * p / n, c, 100 * c / n, margin,
                                               sum(r[2] and not r[3] for r in rows),
                                               sum(r[3] and not r[2] for r in rows)))
    print("small things %d: mass / uniform %.2fx" % (sum(r[1] for r in rows), ratio))
    by_photo = {}
    for r in rows:
        by_photo.setdefault(r[0], []).append(r)
    photos = sorted(by_photo)
    rng = random.Random(0)
    ms, rs = [], []
    for _ in range(args.reps):
        sample = [r for _ in photos for r in by_photo[rng.choice(photos)]]
        m, q = figures(sample)
        ms.append(m)
        rs.append(q)
    ms.sort()
    rs.sort()
    lo, hi = int(0.025 * args.reps), int(0.975 * args.reps) - 1
    print("95%% bootstrap over %d photos (%d reps): margin [%+.1f, %+.1f] points; small mass / uniform [%.2f, %.2f]x"
          % (len(photos), args.reps, ms[lo], ms[hi], rs[lo], rs[hi]))


if __name__ == "__main__":
    main()
