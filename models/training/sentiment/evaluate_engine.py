"""Accuracy of the attnlens ENGINE (native attnlens-cli) over the FULL SST-2 dev set. No PyTorch needed.

  python3 models/training/sentiment/evaluate_engine.py                        # both bundles
  python3 models/training/sentiment/evaluate_engine.py --bundle models/sst2-selfattn --cli build/attnlens-cli

Every one of the 872 dev sentences is sent, one per line, to `attnlens-cli sentiment --model BUNDLE`, which
tokenizes the raw line with the engine's SST-2 tokenizer (src/text/words.h) and classifies it alone (no padding),
exactly like a user's text. dev.tsv is already tokenized; the script also counts the lines whose engine tokens
differ from the file's own space-split tokens (0 expected) so a tokenizer change cannot go unnoticed. With
--pretokenized the file's tokens are passed as they are instead. Accuracy = share of exact labels (docs/DESIGN.md §13).

Default data: ../shared/data relative to the repo root (--data-dir to override). Writes nothing unless --json.
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from sst2 import read_sst2_sentences  # noqa: E402
REPO_ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
DEFAULT_DATA_DIR = os.path.join(REPO_ROOT, "..", "shared", "data")
DEFAULT_BUNDLES = ["models/sst2-selfattn", "models/sst2-relation"]
CLI_CANDIDATES = ["build/attnlens-cli", "build-sent/attnlens-cli", "build-release/attnlens-cli"]


def find_cli(explicit):
    if explicit:
        if not os.path.isfile(explicit):
            raise SystemExit(f"--cli {explicit}: no such file")
        return explicit
    for c in CLI_CANDIDATES:
        p = os.path.join(REPO_ROOT, c)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    raise SystemExit("attnlens-cli not found; build it (cmake --build build --target attnlens-cli) or pass --cli PATH")


def evaluate(cli, bundle, dev, pretokenized):
    cmd = [cli, "sentiment", "--model", bundle, "--no-attention"] + (["--pretokenized"] if pretokenized else [])
    text = "".join(s + "\n" for s, _ in dev)
    t0 = time.time()
    proc = subprocess.run(cmd, input=text.encode("utf-8"), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seconds = time.time() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode(errors='replace')[:500]}")
    results = [json.loads(line) for line in proc.stdout.decode("utf-8").splitlines()]
    if len(results) != len(dev):
        raise SystemExit(f"{bundle}: {len(results)} results for {len(dev)} sentences")
    correct, total = [0, 0], [0, 0]
    n_unk = n_tok = token_mismatch = truncated = 0
    for (sentence, label), r in zip(dev, results):
        if "error" in r:
            raise SystemExit(f"{bundle}: the engine refused {sentence!r}: {r['error']}")
        total[label] += 1
        correct[label] += int(r["label_index"] == label)
        n_tok += len(r["ids"])
        n_unk += sum(1 for i in r["ids"] if i == 1)
        truncated += int(r["truncated"])
        if len(r["ids"]) != len(sentence.split()):
            token_mismatch += 1
    n = len(dev)
    return {
        "bundle": bundle,
        "split": "sst2/dev.tsv (full)",
        "n": n,
        "accuracy": sum(correct) / n,
        "accuracy_negative": correct[0] / max(total[0], 1),
        "accuracy_positive": correct[1] / max(total[1], 1),
        "unk_token_rate": n_unk / max(n_tok, 1),
        "lines_tokenized_differently": token_mismatch,
        "truncated": truncated,
        "input": "pre-tokenized (split on spaces)" if pretokenized else "raw text through the engine tokenizer",
        "seconds_including_load": round(seconds, 2),
        "evaluator": "attnlens engine: attnlens-cli sentiment (models/training/sentiment/evaluate_engine.py)",
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle", action="append", help="bundle directory (repeatable; default: both SST-2 bundles)")
    ap.add_argument("--data-dir", default=DEFAULT_DATA_DIR)
    ap.add_argument("--cli", help="path to attnlens-cli (default: build/attnlens-cli, then build-sent/...)")
    ap.add_argument("--pretokenized", action="store_true", help="pass dev.tsv tokens as they are")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args()

    dev_path = os.path.join(args.data_dir, "sst2", "dev.tsv")
    if not os.path.isfile(dev_path):
        raise SystemExit(f"{dev_path} not found (set --data-dir to the folder holding sst2/dev.tsv)")
    dev = read_sst2_sentences(dev_path)
    cli = find_cli(args.cli)
    bundles = args.bundle or [os.path.join(REPO_ROOT, b) for b in DEFAULT_BUNDLES]
    reports = []
    for b in bundles:
        rep = evaluate(cli, b, dev, args.pretokenized)
        rep["bundle"] = os.path.relpath(os.path.abspath(b), REPO_ROOT)
        reports.append(rep)
        print(f"{rep['bundle']}: accuracy {100 * rep['accuracy']:.2f}% over {rep['n']} dev sentences "
              f"(negative {100 * rep['accuracy_negative']:.2f}%, positive {100 * rep['accuracy_positive']:.2f}%; "
              f"<unk> {100 * rep['unk_token_rate']:.1f}% of tokens; {rep['lines_tokenized_differently']} lines "
              f"tokenized differently from dev.tsv; {rep['seconds_including_load']} s)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(reports if len(reports) > 1 else reports[0], f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
