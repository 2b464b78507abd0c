"""Shortlist checkpoint averages of one or more runs by greedy BLEU on the selection sets, in PyTorch (any device).

  python3 pick.py --runs runs/gpuA runs/gpuB --average 1 3 5 --top 2 --out-dir OUT --device cuda

For each run and each N in --average, the candidate is the element-wise mean of the run's last N epoch checkpoints
(bundle.average_checkpoints). Each candidate is scored like train.py scores an epoch: greedy BLEU (lowercased
tokenized) on Multi30k val and the Tatoeba dev split, mean of the two. Writes OUT/pick.json (every candidate's
scores) and the --top candidates as half-precision checkpoints OUT/<run>-avg<N>.pt, in the format export.py reads
(the bundles ship F16 weights, so nothing is lost). The final choice is made with the engine (finalize.py /
evaluate_engine.py, beam 4); test sets are never read here.
"""
import argparse
import glob
import json
import os
import re
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bundle import average_checkpoints  # noqa: E402
from common import DEFAULT_DATA_DIR, find_cli, read_lines  # noqa: E402
from general import load_general  # noqa: E402
from models import build_model  # noqa: E402
from train import evaluate_val  # noqa: E402


def epoch_checkpoints(run_dir):
    """The run's epoch<N>.pt files, by N."""
    found = [(int(re.search(r"epoch(\d+)\.pt$", p).group(1)), p) for p in glob.glob(os.path.join(run_dir, "epoch*.pt"))]
    return [p for _, p in sorted(found)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", nargs="+", required=True, help="run folders holding epoch<N>.pt")
    ap.add_argument("--average", nargs="+", type=int, default=[1, 3, 5])
    ap.add_argument("--top", type=int, default=2)
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--data-dir", default=DEFAULT_DATA_DIR)
    ap.add_argument("--cli")
    args = ap.parse_args()
    device = torch.device(args.device)
    cli = find_cli(args.cli)
    os.makedirs(args.out_dir, exist_ok=True)
    prefix = enc = text = None
    results = []
    for run_dir in args.runs:
        paths = epoch_checkpoints(run_dir)
        for n in args.average:
            if n > len(paths):
                continue
            chosen = paths[-n:]
            sd, meta = average_checkpoints(chosen)
            targs = meta["args"]
            if enc is None:
                prefix, enc, text, _ = load_general(targs["merges"], args.data_dir, cli, targs["multi30k_repeat"])
                dev_sets = [("val", enc["val"], read_lines(args.data_dir, "val", "en")),
                            ("tatoeba_dev", enc["tatoeba_dev"], list(text["tatoeba_dev"][1]))]
            model = build_model(meta["kind"], meta["vocab_size"],
                                {"dropout": 0.0, "d_ff": targs["d_ff"], "layers": targs["layers"],
                                 "dec_layers": targs["dec_layers"], "init_range": 0.0})
            model.load_state_dict(sd)
            model.to(device)
            scores = {name: evaluate_val(model, pairs, prefix, cli, refs, batch_sents=500, device=device)[1]
                      for name, pairs, refs in dev_sets}
            rec = {"run": os.path.basename(os.path.normpath(run_dir)), "average": n,
                   "checkpoints": [os.path.basename(p) for p in chosen], **scores,
                   "mean": sum(scores.values()) / len(scores)}
            print(json.dumps(rec), flush=True)
            results.append((rec, sd, meta))
    results.sort(key=lambda r: -r[0]["mean"])
    for rec, sd, meta in results[:args.top]:
        name = f"{rec['run']}-avg{rec['average']}.pt"
        rec["written"] = name
        torch.save({**{k: v for k, v in meta.items() if k != "model"},
                    "model": {k: v.half() if v.is_floating_point() else v for k, v in sd.items()},
                    "averaged": rec["checkpoints"]}, os.path.join(args.out_dir, name))
    with open(os.path.join(args.out_dir, "pick.json"), "w") as f:
        json.dump([r[0] for r in results], f, indent=1)
    print("written:", [r[0].get("written") for r in results[:args.top]], flush=True)


if __name__ == "__main__":
    main()
