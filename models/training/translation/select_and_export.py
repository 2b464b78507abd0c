"""Checkpoint selection on val, export, verification, goldens and the test-set numbers, in one command:

  nohup flock /tmp/attnlens-train.lock /usr/bin/python3 select_and_export.py --run transformer \
      --name de-en-transformer --average 1 3 5 > runs/transformer-select.log 2>&1 &

1. candidates: the average of the last n epoch checkpoints for each n in --average (n = 1: the last epoch alone),
   plus the single epoch with the best val greedy BLEU;
2. each candidate is decoded on val with beam 4; alpha in --alphas is rescored from the same search;
   the best (candidate, alpha) by val BLEU (lowercased tokenized) is chosen — val only, never test;
3. export with --dtype (F16 by default) and read-back verification (export.py), the F16 effect on val greedy
   BLEU, goldens (make_goldens.py), then test_2016_flickr with beam 4 and greedy through the exported bundle.
Every evaluation result is appended to runs/<run>/select.jsonl.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PY = "/usr/bin/python3"


def run_eval(args_list, log, lim):
    out = subprocess.run([PY, os.path.join(HERE, "evaluate.py")] + args_list + lim + ["--json-out", log],
                         stdout=subprocess.PIPE, check=True, text=True).stdout
    print(out, end="", flush=True)
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--run", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--average", type=int, nargs="+", default=[1, 3, 5])
    p.add_argument("--alphas", type=float, nargs="+", default=[0.6, 1.0])
    p.add_argument("--dtype", default="F16")
    p.add_argument("--skip-test", action="store_true")
    p.add_argument("--out-dir", help="bundle folder (default models/<name>)")
    p.add_argument("--limit", type=int, help="code checks only: evaluate the first N sentences of each split")
    args = p.parse_args()
    lim = ["--limit", str(args.limit)] if args.limit else []
    run_dir = os.path.join(HERE, "runs", args.run)
    log = os.path.join(run_dir, "select.jsonl")
    hist = [json.loads(line) for line in open(os.path.join(run_dir, "history.jsonl"))]
    last = max(h["epoch"] for h in hist)
    candidates = {}
    for n in args.average:
        if n <= last:
            candidates[f"avg{n}"] = [os.path.join(run_dir, f"epoch{e}.pt") for e in range(last - n + 1, last + 1)]
    best_single = max(hist, key=lambda h: h["val_greedy_bleu"])["epoch"]
    if best_single != last:
        candidates[f"epoch{best_single}"] = [os.path.join(run_dir, f"epoch{best_single}.pt")]
    best = None
    for name, paths in candidates.items():
        print(f"candidate {name}: {[os.path.basename(x) for x in paths]}", flush=True)
        for r in run_eval(["--checkpoints"] + paths + ["--split", "val", "--beam", "4", "--alpha"] +
                          [str(a) for a in args.alphas], log, lim):
            if best is None or r["bleu_lc_tok"] > best[2]["bleu_lc_tok"]:
                best = (name, paths, r)
    name, paths, r = best
    print(f"chosen on val: {name} alpha {r['alpha']} (val beam-4 BLEU {r['bleu_lc_tok']})", flush=True)
    with open(log, "a") as f:
        f.write(json.dumps({"chosen": name, "checkpoints": [os.path.basename(x) for x in paths],
                            "alpha": r["alpha"], "val_bleu_lc_tok": r["bleu_lc_tok"]}) + "\n")
    bundle = args.out_dir or os.path.abspath(os.path.join(HERE, "..", "..", args.name))
    subprocess.run([PY, os.path.join(HERE, "export.py"), "--name", args.name, "--checkpoints"] + paths +
                   ["--dtype", args.dtype, "--alpha", str(r["alpha"]), "--out-dir", bundle], check=True)
    # The effect of the F16 rounding, measured on val (greedy): float32 checkpoints vs the bundle.
    run_eval(["--checkpoints"] + paths + ["--split", "val", "--beam", "1"], log, lim)
    run_eval(["--bundle", bundle, "--split", "val", "--beam", "1"], log, lim)
    subprocess.run([PY, os.path.join(HERE, "make_goldens.py"), "--bundle", bundle], check=True)
    if not args.skip_test:
        run_eval(["--bundle", bundle, "--split", "test_2016_flickr", "--beam", "4", "--alpha", str(r["alpha"]),
                  "--hyps-out", os.path.join(run_dir, "test_beam4.txt")], log, lim)
        run_eval(["--bundle", bundle, "--split", "test_2016_flickr", "--beam", "1",
                  "--hyps-out", os.path.join(run_dir, "test_greedy.txt")], log, lim)


if __name__ == "__main__":
    sys.exit(main())
