"""Flickr8k caption quality of the ENGINE (native attnlens-cli, no PyTorch): BLEU-1..4 over the 1000 test images
against their 5 references (docs/DESIGN.md §13: nltk corpus_bleu, default weights, no smoothing, text lowercased
and split by \\w+|[^\\w\\s], one hypothesis per image). This is the number for MODEL_CARD.md.

  cmake --build build --target attnlens-cli
  /usr/bin/python3 models/training/captioning/evaluate_engine.py --bundle models/flickr8k-mobilenet \\
      --cli build/attnlens-cli --split test --beams 1 3 [--out results.json]

Each JPEG of ../shared/data/flickr8k/flickr8k_images_160.tar is decoded with PIL to RGB (as the PyTorch recipe
does), written as a binary PPM to a temporary folder, and captioned by `attnlens-cli caption` in one process per
beam setting: the engine does the resize to 224x224, normalisation, MobileNetV2, and the decoder itself.
"""
import json
import os
import re
import sys
import tempfile
import time

from nltk.translate.bleu_score import corpus_bleu

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import engine_io  # noqa: E402
from engine_io import engine_parser, split_names  # noqa: E402

TOKEN_RE = re.compile(r"\w+|[^\w\s]")


def tokenize(s):
    return TOKEN_RE.findall(s.lower())


def bleu_scores(hyps, refs):
    """BLEU-1..4 in percent; BLEU-n uses uniform weights over 1..n-grams (text.bleu_scores, without torch)."""
    h = [tokenize(x) for x in hyps]
    r = [[tokenize(y) for y in rs] for rs in refs]
    return {"bleu%d" % n: 100.0 * corpus_bleu(r, h, weights=tuple([1.0 / n] * n)) for n in range(1, 5)}


def main():
    ap = engine_parser()
    ap.add_argument("--beams", type=int, nargs="+", default=[1, 3])
    ap.add_argument("--limit", type=int, default=0, help="first N images only (smoke runs; report the full set)")
    ap.add_argument("--out", help="write hypotheses and scores as JSON here")
    args = ap.parse_args()
    names = split_names(args.data_dir, args.split)
    if args.limit:
        names = names[:args.limit]
    allcaps = engine_io.flickr8k_captions(args.data_dir)
    refs = [allcaps[n] for n in names]
    results = {}
    with tempfile.TemporaryDirectory(prefix="attnlens-eval-") as tmp:
        t0 = time.time()
        paths = engine_io.decode_photos(names, os.path.join(args.data_dir, "flickr8k", "flickr8k_images_160.tar"), tmp)
        print("decoded %d %s images with PIL (%.0fs)" % (len(paths), args.split, time.time() - t0), flush=True)
        for beams in args.beams:
            cmd = [args.cli, "caption", "--model", args.bundle, "--beams", str(beams), "--json"]
            if args.encoder:
                cmd += ["--encoder", args.encoder]
            t1 = time.time()
            out = engine_io.run_cli(cmd, "\n".join(paths) + "\n")
            secs = time.time() - t1
            assert len(out) == len(paths), (len(out), len(paths))
            hyps = [o["text"] for o in out]
            sc = bleu_scores(hyps, refs)
            results["beam%d" % beams] = dict(scores=sc, seconds=secs, images_per_second=len(paths) / secs,
                                             hypotheses=dict(zip(names, hyps)))
            print("engine %s %s (%d images) beams %d: %s  (%.1f s, %.1f img/s)" % (
                args.bundle, args.split, len(names), beams, "  ".join("%s %.2f" % kv for kv in sc.items()), secs,
                len(paths) / secs), flush=True)
            print("  e.g.", hyps[:3], flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(dict(split=args.split, images=len(names), command=" ".join(sys.argv), results=results), f,
                      indent=1)


if __name__ == "__main__":
    main()
