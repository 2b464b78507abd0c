"""Checkpoint selection on val with the ENGINE, export, goldens and test numbers, in one command (no PyTorch beam
search: the C++ engine decodes val/test in a minute where the PyTorch reference needs a quarter of an hour).

  /usr/bin/python3 finalize.py --run transformer --name de-en-transformer --average 1 3 5 --alphas 0.6 1.0
  /usr/bin/python3 finalize.py --run rnn-general --name de-en-rnn-general --average 1 2 3

1. candidates: the average of the last n epoch checkpoints of runs/<run>/ for each n in --average, plus the single
   epoch with the best val greedy BLEU (history.jsonl); each is exported (F16) to runs/<run>/candidates/;
2. each candidate is decoded on val by attnlens-cli with beam 4 for every alpha in --alphas; the best
   (candidate, alpha) by val BLEU (lowercased tokenized) wins — val only, never test;
3. the winner is exported to models/<name> with that alpha as the bundle's default, goldens are written
   (make_goldens.py), and test_2016_flickr is decoded once with beam 4 and greedy (evaluate_engine.py).
Every result is appended to runs/<run>/finalize.jsonl.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
PY = "/usr/bin/python3"


def sh(cmd):
    print("$ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, cwd=HERE)


def engine_eval(bundle, split, beams, alpha, log, cli=None):
    cmd = [PY, os.path.join(HERE, "evaluate_engine.py"), "--bundle", bundle, "--split", split,
           "--beam", *map(str, beams), "--json-out", log]
    if alpha is not None:
        cmd += ["--alpha", str(alpha)]
    if cli:
        cmd += ["--cli", cli]
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True, cwd=HERE).stdout
    print(out, end="", flush=True)
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--run", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--average", type=int, nargs="+", default=[1, 3])
    p.add_argument("--alphas", type=float, nargs="+", default=[0.6])
    p.add_argument("--cli")
    p.add_argument("--skip-test", action="store_true")
    args = p.parse_args()
    run_dir = os.path.join(HERE, "runs", args.run)
    log = os.path.join(run_dir, "finalize.jsonl")
    epochs = sorted(glob.glob(os.path.join(run_dir, "epoch*.pt")),
                    key=lambda f: int(re.search(r"epoch(\d+)\.pt$", f).group(1)))
    if not epochs:
        raise SystemExit(f"no epoch checkpoints in {run_dir}")
    candidates = {}
    for n in args.average:
        if n <= len(epochs):
            candidates[f"last{n}"] = epochs[-n:]
    hist = [json.loads(line) for line in open(os.path.join(run_dir, "history.jsonl"))]
    best = max(hist, key=lambda r: r.get("val_greedy_bleu", -1))
    best_path = os.path.join(run_dir, f"epoch{best['epoch']}.pt")
    if os.path.isfile(best_path) and [best_path] not in candidates.values():
        candidates[f"best-epoch{best['epoch']}"] = [best_path]

    scores = []
    for tag, cks in candidates.items():
        out = os.path.join(run_dir, "candidates", tag)
        shutil.rmtree(out, ignore_errors=True)
        sh([PY, "export.py", "--name", args.name, "--checkpoints", *cks, "--out-dir", out, "--verify-sentences", "20"])
        for alpha in args.alphas:
            r = engine_eval(out, "val", [4], alpha, log, args.cli)[0]
            scores.append((r["bleu_lc_tok"], tag, alpha, cks))
    scores.sort(key=lambda s: -s[0])
    for s in scores:
        print(f"val beam 4: {s[0]:.2f}  {s[1]}  alpha {s[2]}", flush=True)
    bleu, tag, alpha, cks = scores[0]
    with open(log, "a") as f:
        f.write(json.dumps({"selected": tag, "checkpoints": [os.path.basename(c) for c in cks], "alpha": alpha,
                            "val_beam4_bleu_lc_tok": bleu}) + "\n")
    final = os.path.join(REPO, "models", args.name)
    sh([PY, "export.py", "--name", args.name, "--checkpoints", *cks, "--alpha", str(alpha), "--out-dir", final])
    sh([PY, "make_goldens.py", "--bundle", final])
    if not args.skip_test:
        engine_eval(final, "test_2016_flickr", [4, 1], None, log, args.cli)


if __name__ == "__main__":
    main()
