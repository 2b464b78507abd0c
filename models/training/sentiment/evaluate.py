"""Accuracy of an exported bundle over the FULL SST-2 dev set, computed by PyTorch from the bundle as read back
(PyTorch reference; the engine-side evaluation replaces it once the C++ forward lands).

  /usr/bin/python3 models/training/sentiment/evaluate.py --bundle models/sst2-selfattn

Each dev sentence is run alone (batch of one, no padding), exactly as the engine will run it.
"""

import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


def dev_accuracy(model, vocab, dev):
    """Accuracy of `model` (eval mode, CPU) over the rows `dev` [(tokens, label)], one sentence at a time:
    a dict of the overall and per-label accuracies and the <unk> rate."""
    stoi = {w: i for i, w in enumerate(vocab)}
    model.eval()
    correct = [0, 0]
    total = [0, 0]
    n_unk = n_tok = 0
    with torch.no_grad():
        for tokens, label in dev:
            ids = common.encode(tokens, stoi) or [common.UNK_ID]
            n_unk += sum(i == common.UNK_ID for i in ids)
            n_tok += len(ids)
            logits, _ = model(torch.tensor([ids]), torch.tensor([len(ids)]))
            total[label] += 1
            correct[label] += int(int(logits[0].argmax()) == label)
    return {"n": len(dev), "accuracy": sum(correct) / len(dev), "accuracy_negative": correct[0] / total[0],
            "accuracy_positive": correct[1] / total[1], "unk_token_rate": n_unk / n_tok}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bundle", required=True)
    ap.add_argument("--data-dir", default=common.DEFAULT_DATA_DIR)
    args = ap.parse_args()
    torch.set_num_threads(1)  # see README.md: one thread is far cheaper on this oversubscribed machine

    cfg, vocab, model = common.load_bundle(args.bundle)
    dev = common.read_sst2(os.path.join(args.data_dir, "sst2", "dev.tsv"))
    t0 = time.time()
    result = {"bundle": args.bundle, "architecture": cfg["architecture"], "split": "sst2/dev.tsv (full)",
              **dev_accuracy(model, vocab, dev), "seconds": round(time.time() - t0, 1),
              "evaluator": "PyTorch reference (models/training/sentiment/evaluate.py); engine evaluation pending"}
    print(json.dumps(result, indent=1))

if __name__ == "__main__":
    main()
