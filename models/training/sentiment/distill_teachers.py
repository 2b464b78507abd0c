"""Teacher logits for knowledge distillation (train.py --distill): every teacher's logits over the SST-2 train
phrases (and dev sentences), computed once and written to a cache file, plus each teacher's and the ensemble's dev
accuracy (the ensemble = mean of the teachers' probabilities), so that an ensemble too weak to be worth
distilling is seen before any student trains (`--dev-only`: the dev figures alone, seconds per teacher).

  /usr/bin/python3 models/training/sentiment/distill_teachers.py --out models/training/sentiment/cache/teachers.npz \
      --report models/training/sentiment/runs/teachers.json \
      models/sst2-selfattn models/training/sentiment/runs/teacher_s2/final.pt ...

The report also has the best ensemble over every subset of the teachers (chosen on dev, so selection-biased: an
upper bound on what an ensemble of these teachers reaches) and the share of dev sentences some teacher gets right.

A teacher is a bundle directory (config.json, weights.safetensors, vocab.txt) or a train.py checkpoint (best.pt,
final.pt: the evaluated weights with their config and vocabulary). Each teacher reads the raw tokens through its own
vocabulary, so teachers with different vocabularies mix. Rows follow train.tsv's order; the cache holds a digest of
the train sentences and labels, which train.py checks before using it.

Cache (.npz): train_logits (n_teachers, n_train, 2) float32, dev_logits (n_teachers, n_dev, 2), teachers (names),
train_digest (sha256 of train.tsv's rows as read).
"""

import argparse
import hashlib
import itertools
import json
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


def rows_digest(rows):
    """sha256 over (tokens, label) rows: the identity of the data the cache's rows stand for."""
    h = hashlib.sha256()
    for tokens, label in rows:
        h.update((" ".join(tokens) + "\t" + str(label) + "\n").encode("utf-8"))
    return h.hexdigest()


def load_teacher(path):
    """-> (vocabulary, model in eval mode) from a bundle directory or a train.py checkpoint."""
    if os.path.isdir(path):
        _, vocab, model = common.load_bundle(path)
    else:
        ck = torch.load(path)
        if not isinstance(ck, dict) or "model" not in ck or "meta" not in ck:
            raise SystemExit(f"{path}: not a train.py checkpoint (needs 'model' and 'meta')")
        vocab = ck["meta"]["vocab"]
        model = common.build_model(ck["meta"]["cfg"])
        model.load_state_dict(ck["model"])
    return vocab, model.eval()


@torch.no_grad()
def teacher_logits(model, vocab, rows, batch_size):
    """Logits (len(rows), 2) in rows' order, padded batches (the models mask padding exactly: test_common.py)."""
    stoi = {w: i for i, w in enumerate(vocab)}
    enc = [(common.encode(t, stoi), y) for t, y in rows]
    out = np.zeros((len(rows), 2), dtype=np.float32)
    for batch in common.make_batches(enc, batch_size, shuffle=False):
        ids, lengths, _ = common.collate(enc, batch)
        logits, _ = model(ids, lengths)
        out[batch] = logits.numpy()
    return out


def softmax(z, temperature=1.0):
    z = z / temperature
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def ensemble_probs(logits, temperature=1.0):
    """Mean over teachers of softmax(logits / T): (n_teachers, n, 2) -> (n, 2)."""
    return softmax(np.asarray(logits, dtype=np.float64), temperature).mean(axis=0)


def best_subset(dev_logits, labels):
    """(accuracy, teacher indices) of the most accurate mean-of-probabilities ensemble over every non-empty subset."""
    n = len(dev_logits)
    subsets = (list(s) for k in range(1, n + 1) for s in itertools.combinations(range(n), k))
    return max(((float((ensemble_probs(dev_logits[s]).argmax(1) == labels).mean()), s) for s in subsets),
               key=lambda r: r[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("teachers", nargs="+", help="bundle directories and/or train.py checkpoints")
    ap.add_argument("--out", default=None, help="cache file (.npz); required unless --dev-only")
    ap.add_argument("--dev-only", action="store_true", help="dev figures only: no train logits, no cache")
    ap.add_argument("--report", default=None, help="json: dev accuracy of each teacher and of growing ensembles")
    ap.add_argument("--data-dir", default=common.DEFAULT_DATA_DIR)
    ap.add_argument("--batch-size", type=int, default=128)
    args = ap.parse_args()
    if not args.dev_only and not args.out:
        raise SystemExit("--out CACHE is required (or --dev-only for the dev figures alone)")
    torch.set_num_threads(1)  # see README.md: one thread on this shared machine

    train = common.read_sst2(os.path.join(args.data_dir, "sst2", "train.tsv"))
    dev = common.read_sst2(os.path.join(args.data_dir, "sst2", "dev.tsv"))
    dev_y = np.array([y for _, y in dev])
    train_y = np.array([y for _, y in train])
    tr, dv, report = [], [], dict(teachers=[], ensembles=[])
    for path in args.teachers:
        t0 = time.time()
        vocab, model = load_teacher(path)
        dv.append(teacher_logits(model, vocab, dev, args.batch_size))
        rec = dict(teacher=path, dev_accuracy=float((dv[-1].argmax(1) == dev_y).mean()))
        if not args.dev_only:
            tr.append(teacher_logits(model, vocab, train, args.batch_size))
            rec["train_accuracy"] = float((tr[-1].argmax(1) == train_y).mean())
        rec["seconds"] = round(time.time() - t0, 1)
        report["teachers"].append(rec)
        ens = dict(teachers=len(dv), dev_accuracy=float((ensemble_probs(dv).argmax(1) == dev_y).mean()))
        report["ensembles"].append(ens)
        print(json.dumps(rec), json.dumps(ens), flush=True)
    dv = np.stack(dv)
    acc, subset = best_subset(dv, dev_y)
    report["best_subset"] = dict(teachers=[args.teachers[i] for i in subset], dev_accuracy=acc,
                                 note="chosen on dev: selection-biased")
    report["some_teacher_right"] = float((dv.argmax(2) == dev_y[None]).any(axis=0).mean())
    print(json.dumps(dict(best_subset=report["best_subset"], some_teacher_right=report["some_teacher_right"])))
    if not args.dev_only:
        np.savez(args.out, train_logits=np.stack(tr), dev_logits=dv, teachers=np.array(args.teachers),
                 train_digest=np.array(rows_digest(train)))
        print(f"wrote {args.out}: {len(tr)} teachers x {len(train)} train phrases")
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
