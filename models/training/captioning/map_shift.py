"""Which step's attention points at word t's object? A diagnostic of the forced maps that ground.py writes.

  /usr/bin/python3 models/training/captioning/ground.py --bundle models/flickr8k-mobilenet --out-dir DIR
  /usr/bin/python3 models/training/captioning/map_shift.py DIR/ground_forced.jsonl

For each shift s, word t is scored (../shared/ground/score.py, the dev boxes) with the α of step t + s (clamped to
the caption), and once with the mean of the caption's α over all its steps. In the paper's order (the LSTM reads
z_t, the output layer sees h_t alone) the state that predicts word t already carries the looks of earlier steps:
if an earlier step's α points at the object more often than α_t itself, the map shown for a word is not where the
word's evidence came from. With decoder.context = "output" word t's only visual evidence is z_t, so s = 0 should be
the best row. Dev only, like ground.py.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
GROUND = os.path.join(HERE, "..", "..", "..", "..", "shared", "ground")


def shifted(model, shift):
    """MODEL.jsonl records with each word's row replaced by the row of step t + shift (None: the caption's mean)."""
    out = []
    for m in model:
        T, gh, gw = m["attention"]["dims"]
        data, n = m["attention"]["data"], gh * gw
        if shift is None:
            mean = [sum(data[t * n + c] for t in range(T)) / T for c in range(n)]
            rows = mean * T
        else:
            rows = []
            for t in range(T):
                s = min(max(t + shift, 0), T - 1)
                rows += data[s * n:(s + 1) * n]
        out.append(dict(m, attention=dict(m["attention"], dims=[T, gh, gw], data=rows)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("forced", help="ground_forced.jsonl written by ground.py --out-dir")
    ap.add_argument("--ground-dir", default=GROUND)
    ap.add_argument("--gold", default="dev.jsonl")
    ap.add_argument("--shifts", type=int, nargs="+", default=[-2, -1, 0, 1, 2])
    args = ap.parse_args()
    sys.path.insert(0, args.ground_dir)
    import score
    gold = [json.loads(l) for l in open(os.path.join(args.ground_dir, args.gold)) if l.strip()]
    model = [json.loads(l) for l in open(args.forced) if l.strip()]
    print("row used for word t\tall: pointing, mass\tsmall: pointing, mass")
    for shift in args.shifts + [None]:
        _, _, acc = score.score(gold, shifted(model, shift))
        a, s = acc["all"], acc["small"]
        label = "mean over the caption" if shift is None else "step t%+d" % shift if shift else "step t (as shown)"
        print("%s\t%.1f%%, %.1f%%\t%.1f%%, %.1f%%" % (label, 100 * a[1] / a[0], 100 * a[2] / a[0],
                                                     100 * s[1] / s[0], 100 * s[2] / s[0]))


if __name__ == "__main__":
    main()
