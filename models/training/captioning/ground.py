"""Grounding of the ENGINE's per-word attention on hand-drawn boxes (../shared/ground: 60 Flickr8k dev photos with
their first caption and boxes around the concrete nouns; its README and score.py define the metrics).

  cmake --build build --target attnlens-cli
  /usr/bin/python3 models/training/captioning/ground.py --bundle models/flickr8k-mobilenet --cli build/attnlens-cli \\
      [--out-dir DIR]

Each photo of dev.jsonl is read from ../shared/data/flickr8k/flickr8k_images_160.tar, decoded with PIL to RGB (as
evaluate_engine.py does) and written as NAME.ppm to a temporary folder. Two runs of `attnlens-cli caption --json
--attentions`:
  forced  --forced: teacher forcing of the photo's gold caption (dev.jsonl "caption", Flickr8k #0), so every object
          word whose word is in the vocabulary is scored, at the step that emits it;
  own     the model's own caption (bundle default decoding): only the objects it names count (the README's
          reference figures).
Each run's output is the MODEL.jsonl that score.py reads (written to --out-dir as ground_forced.jsonl and
ground_own.jsonl when given); score.py is then run on it and its lines are printed. Dev only: this set is for
tuning; the held-out boxes are elsewhere.

Which step's attention points at word t's object? `--shifts -2 -1 0 1 2` also scores the forced run with, for
each shift s, word t given the α of step t + s (clamped to the caption), and once with the mean of the caption's α
over all its steps, printed as one table row each (pointing and mass, all objects / small things).
`--forced-file DIR/ground_forced.jsonl` scores a kept forced run that way without running the engine. In the
paper's order (the LSTM reads z_t, the output layer sees h_t alone) the state that predicts word t already carries
the looks of earlier steps: if an earlier step's α points at the object more often than α_t itself, the map shown
for a word is not where the word's evidence came from. With decoder.context = "output" word t's only visual
evidence is z_t, so s = 0 should be the best row.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from engine_io import REPO, decode_photos, engine_parser, run_cli  # noqa: E402

SHARED = os.path.join(REPO, "..", "shared")


def shifted(model, shift):
    """MODEL.jsonl records with each word's row replaced by the row of step t + shift (None: the caption's mean)."""
    out = []
    for m in model:
        T, gh, gw = m["attention"]["dims"]
        data, n = m["attention"]["data"], gh * gw
        if shift is None:
            mean = [sum(data[t * n + c] for t in range(T)) / T for c in range(n)]
            rows = mean * T
        else:
            rows = []
            for t in range(T):
                s = min(max(t + shift, 0), T - 1)
                rows += data[s * n:(s + 1) * n]
        out.append(dict(m, attention=dict(m["attention"], dims=[T, gh, gw], data=rows)))
    return out


def print_shift_table(ground_dir, gold, model, shifts):
    """score.py's pointing and mass of the forced maps with each word's row taken from step t + s, and the mean."""
    sys.path.insert(0, ground_dir)
    import score
    print("row used for word t\tall: pointing, mass\tsmall: pointing, mass")
    for shift in list(shifts) + [None]:
        _, _, acc = score.score(gold, shifted(model, shift))
        a, s = acc["all"], acc["small"]
        label = "mean over the caption" if shift is None else "step t%+d" % shift if shift else "step t (as shown)"
        print("%s\t%.1f%%, %.1f%%\t%.1f%%, %.1f%%" % (label, 100 * a[1] / a[0], 100 * a[2] / a[0],
                                                     100 * s[1] / s[0], 100 * s[2] / s[0]))


def main():
    ap = engine_parser(__doc__, flickr8k_split=False)
    ap.add_argument("--ground-dir", default=os.path.join(SHARED, "ground"))
    ap.add_argument("--tar", default=os.path.join(SHARED, "data", "flickr8k", "flickr8k_images_160.tar"))
    ap.add_argument("--gold", default="dev.jsonl", help="file of --ground-dir (dev.jsonl: the tuning set)")
    ap.add_argument("--out-dir", help="keep the MODEL.jsonl files and scores.json here")
    ap.add_argument("--shifts", type=int, nargs="*", help="also score the forced maps with step t + s (and the mean)")
    ap.add_argument("--forced-file", help="with --shifts: a kept ground_forced.jsonl, scored without the engine")
    args = ap.parse_args()
    gold_path = os.path.join(args.ground_dir, args.gold)
    gold = [json.loads(ln) for ln in open(gold_path, encoding="utf-8") if ln.strip()]
    if args.forced_file:
        model = [json.loads(ln) for ln in open(args.forced_file, encoding="utf-8") if ln.strip()]
        print_shift_table(args.ground_dir, gold, model, args.shifts or [-2, -1, 0, 1, 2])
        return
    base = [args.cli, "caption", "--model", args.bundle, "--json", "--attentions"]
    if args.encoder:
        base += ["--encoder", args.encoder]
    results = {}
    with tempfile.TemporaryDirectory(prefix="attnlens-ground-") as tmp:
        paths = decode_photos([g["image"] for g in gold], args.tar, tmp)
        for cap in [g["caption"] for g in gold]:
            assert "\t" not in cap and "\n" not in cap, cap
        runs = {
            "forced": (base + ["--forced"], "".join("%s\t%s\n" % (p, g["caption"]) for p, g in zip(paths, gold))),
            "own": (base, "".join(p + "\n" for p in paths)),
        }
        for name, (cmd, stdin_text) in runs.items():
            out = run_cli(cmd, stdin_text)
            assert len(out) == len(gold) and all("error" not in o for o in out), [o for o in out if "error" in o]
            model_path = os.path.join(args.out_dir or tmp, "ground_%s.jsonl" % name)
            if args.out_dir:
                os.makedirs(args.out_dir, exist_ok=True)
            with open(model_path, "w", encoding="utf-8") as f:
                for o in out:
                    f.write(json.dumps({"image": os.path.basename(o["image"]), "tokens": o["tokens"],
                                        "attention": o["attention"]}) + "\n")
            score = subprocess.run([sys.executable, os.path.join(args.ground_dir, "score.py"), gold_path, model_path],
                                   capture_output=True, text=True, check=True).stdout
            unknown = sum(len(o.get("unknown_words", [])) for o in out)
            print("== %s (%s): %s%s" % (name, "teacher forcing of the gold caption" if name == "forced"
                                       else "the model's own caption, bundle default decoding", args.bundle,
                                       ", %d caption words outside the vocabulary" % unknown if name == "forced"
                                       else ""))
            print(score.rstrip())
            results[name] = score
            if name == "forced" and args.shifts is not None:
                model = [json.loads(ln) for ln in open(model_path, encoding="utf-8") if ln.strip()]
                print_shift_table(args.ground_dir, gold, model, args.shifts or [-2, -1, 0, 1, 2])
    if args.out_dir:
        with open(os.path.join(args.out_dir, "scores.json"), "w") as f:
            json.dump(dict(command=" ".join(sys.argv), gold=gold_path, scores=results), f, indent=1)


if __name__ == "__main__":
    main()
