"""Held-out evaluation of the VQA bundles through the engine (attnlens-cli vqa), both variants side by side.

  /usr/bin/python3 models/training/vqa/evaluate.py --cli build/attnlens-cli \
      --bundle models/shapes-vqa-coattn models/shapes-vqa-aoa --split test --n 500 [--markdown]

The scenes are rendered by shapes.make_scene(split seed, i) for i < n (the test split, seed 3003, is never read by
train.py), written as PPM files to a temporary folder, and every balanced question of questions.py about them is
asked through `attnlens-cli vqa --json --attentions` (IMAGE<TAB>QUESTION lines on stdin). No torch is needed.

Metrics (docs/DESIGN.md §13 style: the full held-out set, the engine itself):
  accuracy   share of exact answers, per question type and over all questions
  grounding  share of the questions that name one object (colour, shape: that object; relation: its subject)
             where the peak cell of the question-level region attention (region_attention, layer 1) has its centre
             inside the object's box; per type and overall. Counts name a class, so they are reported apart:
             "count, any" = the peak lies in one of the counted objects (questions with a count >= 1).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import questions as Q  # noqa: E402
from questions import shapes  # noqa: E402
from engine_io import write_ppm  # noqa: E402  (../captioning, on the path through questions)

BALANCE_SEED = {"train": 11, "dev": 22, "test": 33}


def questions_for(split, n, folder):
    seed = shapes.SPLIT_SEEDS[split]
    scenes, paths = [], []
    for i in range(n):
        px, meta = shapes.make_scene(seed, i)
        path = os.path.join(folder, "%s_%04d.ppm" % (split, i))
        write_ppm(path, px)
        scenes.append(meta)
        paths.append(path)
    return scenes, paths, Q.split_questions(scenes, seed, BALANCE_SEED[split])


def score(results, qs, scenes):
    right, total, ground, ground_n = {}, {}, {}, {}
    for r, q in zip(results, qs):
        if "error" in r:
            raise SystemExit("engine error on %r: %s" % (q["text"], r["error"]))
        t = q["type"]
        total[t] = total.get(t, 0) + 1
        right[t] = right.get(t, 0) + int(r["answer"] == q["answer"])
        region = [m for m in r["attentions"] if m["name"] == "region_attention" and m["layer"] == 1][0]["data"]
        objs = scenes[q["scene"]]["objects"]
        if q["grounded"] is not None:
            ground_n[t] = ground_n.get(t, 0) + 1
            ground[t] = ground.get(t, 0) + int(Q.peak_in_box(np.array(region), objs[q["grounded"]]["box"]))
        elif q["target_s"]:
            key = "count, any"
            ground_n[key] = ground_n.get(key, 0) + 1
            ground[key] = ground.get(key, 0) + int(any(Q.peak_in_box(np.array(region), objs[k]["box"])
                                                       for k in q["target_s"]))
    acc = {t: right[t] / total[t] for t in total}
    acc["all"] = sum(right.values()) / sum(total.values())
    named = [t for t in ground_n if t != "count, any"]
    grd = {t: ground[t] / ground_n[t] for t in ground_n}
    grd["all"] = sum(ground[t] for t in named) / sum(ground_n[t] for t in named)
    return dict(accuracy=acc, n=dict(total, all=sum(total.values())), grounding=grd,
                grounding_n=dict(ground_n, all=sum(ground_n[t] for t in named)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--bundle", nargs="+", required=True)
    ap.add_argument("--split", default="test", choices=("dev", "test"))
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--out", default=None, help="write the results as JSON here")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        scenes, paths, qs = questions_for(args.split, args.n, tmp)
        lines = "".join("%s\t%s\n" % (paths[q["scene"]], q["text"]) for q in qs)
        report = {}
        for b in args.bundle:
            p = subprocess.run([args.cli, "vqa", "--model", b, "--json", "--attentions"], input=lines.encode(),
                               stdout=subprocess.PIPE, check=False)
            results = [json.loads(x) for x in p.stdout.decode().splitlines()]
            assert len(results) == len(qs), (len(results), len(qs))
            report[os.path.basename(os.path.normpath(b))] = score(results, qs, scenes)
    report["_set"] = dict(split=args.split, scenes=args.n, questions=len(qs))
    if args.out:
        json.dump(report, open(args.out, "w"), indent=1)
    names = [k for k in report if not k.startswith("_")]
    if args.markdown:
        first = report[names[0]]
        print("| metric | n | " + " | ".join("`%s`" % n for n in names) + " |")
        print("|---|---|" + "---|" * len(names))
        for t in ("colour", "shape", "count", "relation", "all"):
            print("| accuracy, %s | %d | %s |" % (t, first["n"][t], " | ".join(
                "%.1f%%" % (100 * report[n]["accuracy"][t]) for n in names)))
        for t in ("colour", "shape", "relation", "all", "count, any"):
            print("| grounding, %s | %d | %s |" % (t, first["grounding_n"][t], " | ".join(
                "%.1f%%" % (100 * report[n]["grounding"][t]) for n in names)))
    else:
        print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
