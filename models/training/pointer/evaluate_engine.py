"""The exact-sequence accuracy curve of evaluate.py measured by the engine itself (attnlens-cli sort, native): the
same held-out lists (evaluate.held_out), each list's order from the engine compared with the stable argsort.
These are the figures of the model card.

  /usr/bin/python3 models/training/pointer/evaluate_engine.py --bundle models/pointer-sort \
      --cli build/attnlens-cli --out models/training/pointer/eval_engine.json [--torch-report eval_torch.json]
With --torch-report (evaluate.py's JSON) it also counts the lists where engine and PyTorch orders differ.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evaluate  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bundle", required=True)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--out", default=None)
    ap.add_argument("--markdown", action="store_true", help="print the curve as a Markdown table")
    args = ap.parse_args()
    report = {"bundle": os.path.basename(os.path.normpath(args.bundle)), "count": args.count, "engine": args.cli,
              "metric": "exact-sequence accuracy (whole order equals the stable argsort)", "results": {}}
    t0 = time.time()
    for dist in evaluate.EVAL_DISTS:
        curve = {}
        for n in evaluate.LENGTHS:
            raw = evaluate.held_out(dist, n, args.count)
            proc = subprocess.run([args.cli, "sort", "--model", args.bundle, "--json"], input=evaluate.set_text(raw),
                                  capture_output=True, text=True, check=False)
            lines = proc.stdout.splitlines()
            if proc.returncode != 0 or len(lines) != len(raw):
                raise SystemExit(f"{dist} n={n}: attnlens-cli failed (status {proc.returncode}): {proc.stderr[:500]}")
            target = np.argsort(raw, axis=1, kind="stable")
            exact = 0
            for line, t in zip(lines, target):
                order = json.loads(line)["order"]
                exact += int(order == [int(v) for v in t])
            curve[str(n)] = exact / len(raw)
            evaluate.print_exact(dist, n, curve[str(n)])
        report["results"][dist] = curve
    evaluate.finish_report(report, t0, args.out)
    if args.markdown:
        lengths = [str(n) for n in evaluate.LENGTHS]
        print("| n | " + " | ".join(evaluate.EVAL_DISTS) + " |")
        print("|---|" + "---|" * len(evaluate.EVAL_DISTS))
        for n in lengths:
            print(f"| {n} | " + " | ".join(f"{100 * report['results'][d][n]:.2f}%" for d in evaluate.EVAL_DISTS) + " |")


if __name__ == "__main__":
    main()
