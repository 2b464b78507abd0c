"""Exact-sequence accuracy of a pointer-sort bundle on held-out lists, at every length 1..20 and at 30, 40, 50.

A list is sorted exactly when the whole output order equals the stable argsort of the values (equal values in
input order). The held-out sets are drawn here from fixed seeds that training never uses (training draws from
seed --seed of train.py, default 1, through one generator; these use default_rng(100000 + 1000·k + n) for
distribution k and length n): --count lists per (distribution, length), 2000 by default.
  uniform  U[0, 1) floats, the standard sorting benchmark (Vinyals et al. 2016, "Order Matters")
  int100   integers 0..99 (ties from length 2 on, many at length 20 and beyond)

  /usr/bin/python3 models/training/pointer/evaluate.py --bundle models/pointer-sort --out eval.json
  --write-sets DIR also writes each set as DIR/<dist>-<n>.txt (one list per line) for evaluate_engine.py.
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

EVAL_DISTS = ("uniform", "int100")
LENGTHS = list(range(1, 21)) + [30, 40, 50]


def held_out(dist, n, count):
    k = EVAL_DISTS.index(dist)
    rng = np.random.default_rng(100000 + 1000 * k + n)
    return common.sample_values(rng, dist, count, n)


def set_text(raw):
    return "\n".join(" ".join(repr(float(v)) for v in row) for row in raw) + "\n"


def print_exact(dist, n, exact):
    print(f"{dist:8s} n={n:2d} exact {100 * exact:6.2f}%", flush=True)


def finish_report(report, t0, out):
    """Stamps the report with the seconds since t0 and writes it as JSON to `out` (when given)."""
    report["seconds"] = time.time() - t0
    if out:
        with open(out, "w") as f:
            json.dump(report, f, indent=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bundle", required=True)
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default=None, help="JSON report")
    ap.add_argument("--write-sets", default=None)
    ap.add_argument("--max-n", type=int, default=50)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    model, cfg = common.load_bundle(args.bundle)
    report = {"bundle": os.path.basename(os.path.normpath(args.bundle)), "count": args.count,
              "metric": "exact-sequence accuracy (whole order equals the stable argsort)", "results": {}}
    t0 = time.time()
    for dist in EVAL_DISTS:
        curve = {}
        for n in LENGTHS:
            if n > args.max_n:
                continue
            raw = held_out(dist, n, args.count)
            if args.write_sets:
                os.makedirs(args.write_sets, exist_ok=True)
                with open(os.path.join(args.write_sets, f"{dist}-{n}.txt"), "w") as f:
                    f.write(set_text(raw))
            x = torch.from_numpy(np.stack([common.preprocess(r) for r in raw]))
            target = torch.from_numpy(np.argsort(raw, axis=1, kind="stable"))
            order, _, _ = model.sort_batch(x, raw)
            exact = float((order == target).all(dim=1).float().mean())
            curve[str(n)] = exact
            print_exact(dist, n, exact)
        report["results"][dist] = curve
    finish_report(report, t0, args.out)


if __name__ == "__main__":
    main()
