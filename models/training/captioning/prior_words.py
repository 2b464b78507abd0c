"""How much of a captioner's output comes from its language prior rather than the photo, on Flickr8k dev (no torch,
no engine: it reads `evaluate_engine.py --out` files). For stock phrases ("blue shirt", "a group of people") it
prints the share of the model's captions that use them against the share of photos whose references do, and for
each colour word the share of the photos it is said of where a reference of that photo uses it too (a colour the
references never mention is very likely not the photo's). A captioner that reads its words from the photo says a
phrase about as often as the references do and its colours are backed by them.

  /usr/bin/python3 models/training/captioning/evaluate_engine.py --split dev --beams 10 --out DEV.json
  /usr/bin/python3 models/training/captioning/prior_words.py DEV.json [OTHER_DEV.json ...]

Dev only: this is one of the figures a retrain is selected on (README, "Retraining against the language prior").
"""
import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from engine_io import DATA, flickr8k_captions  # noqa: E402

PHRASES = ["blue shirt", "red shirt", "a group of people", "shirt", "black and white dog"]
COLOURS = ["blue", "red", "black", "white", "green", "yellow", "brown", "pink"]


def has(text, phrase):
    return re.search(r"\b%s\b" % re.escape(phrase), text) is not None


def prior_figures(hyps, refs):
    """hyps {image: caption}, refs {image: [captions]} (lower case) -> {"phrases": {p: (model %, photos %)},
    "colours": {c: (photos said of, of which backed by a reference)}, "backed": % over all colours}."""
    names = sorted(hyps)
    out = dict(phrases={}, colours={})
    for p in PHRASES:
        said = sum(has(hyps[n], p) for n in names)
        in_refs = sum(any(has(r, p) for r in refs[n]) for n in names)
        out["phrases"][p] = (100.0 * said / len(names), 100.0 * in_refs / len(names))
    said_all = backed_all = 0
    for c in COLOURS:
        said = [n for n in names if has(hyps[n], c)]
        backed = sum(any(has(r, c) for r in refs[n]) for n in said)
        out["colours"][c] = (len(said), backed)
        said_all += len(said)
        backed_all += backed
    out["backed"] = 100.0 * backed_all / max(1, said_all)
    out["colour_mentions"] = said_all
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", help="evaluate_engine.py --out files (dev)")
    ap.add_argument("--data-dir", default=DATA)
    args = ap.parse_args()
    caps = flickr8k_captions(args.data_dir)
    for path in args.runs:
        run = json.load(open(path))
        if run.get("split") != "dev":
            raise SystemExit("%s: split %r; prior_words.py reads dev runs only" % (path, run.get("split")))
        for setting, res in run["results"].items():
            hyps = {n: h.lower() for n, h in res["hypotheses"].items()}
            refs = {n: [r.lower() for r in caps[n]] for n in hyps}
            f = prior_figures(hyps, refs)
            print("%s (%s, %d photos)" % (path, setting, len(hyps)))
            for p, (model, photos) in f["phrases"].items():
                print("  %-20s model %5.1f%% of captions | references %5.1f%% of photos" % (p, model, photos))
            print("  colours backed by a reference of the photo: %.1f%% of %d mentions (%s)" % (
                f["backed"], f["colour_mentions"],
                ", ".join("%s %d/%d" % (c, b, s) for c, (s, b) in f["colours"].items())))


if __name__ == "__main__":
    main()
