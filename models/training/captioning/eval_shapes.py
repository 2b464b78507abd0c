"""Shapes captioner: exact-caption accuracy and attention grounding on held-out scenes.

Held-out scenes are the `test` split of shapes.py (seed 3003, never used in training or selection).
  exact       share of scenes whose generated caption equals the ground-truth caption token for token.
  grounding   share of generated object words (colour and shape words) whose attention peak lies inside that
              object's ground-truth box. The attention for a word is alpha_t of the step that produced it (SAT:
              alpha_t comes from h_{t-1} and feeds the prediction of word t). Peak = argmax cell of the 7x7 grid;
              it "lies inside" the box when the cell centre ((c + 0.5) * 32, (r + 0.5) * 32) px is inside
              [x0, x1) x [y0, y1). Captions list objects left to right, so the k-th "a ..." phrase of the
              generated caption is matched with ground-truth object k; a word in a phrase beyond the number of
              objects counts as a miss. Every generated object word counts (not only those of exact captions).
  grounding_overlap   the same with the looser test "the peak cell overlaps the box" (reported for reference).
Modes: --bundle models/shapes (scenes re-rendered, encoder from the bundle), --bundle with --cached (decoder
from the bundle on the cached features: valid because export.py checks that the bundle's F32 encoder equals the
.pth the cache was computed with), or --checkpoint (cached features, float32 training checkpoint).
  /usr/bin/python3 models/training/captioning/eval_shapes.py --bundle models/shapes --beam 1 3
  /usr/bin/python3 models/training/captioning/eval_shapes.py --bundle models/shapes --engine build/attnlens-cli --beam 1 3
(--engine: the engine itself, attnlens-cli caption --json --attentions over the re-rendered scenes as PPM files.)
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bundle  # noqa: E402
import data  # noqa: E402
import mobilenet  # noqa: E402
import sat  # noqa: E402
import shapes  # noqa: E402
import text  # noqa: E402

CELL = mobilenet.INPUT_SIZE / 7.0


def grounding(tokens, alphas, objects):
    """Returns list of (word, hit_centre, hit_overlap) for the colour/shape words of one generated caption."""
    out = []
    k = -1
    for t, w in enumerate(tokens):
        if w == "a":
            k += 1
        if w not in shapes.COLOUR_WORDS and w not in shapes.SHAPE_WORDS:
            continue
        if k < 0 or k >= len(objects):
            out.append((w, False, False))
            continue
        x0, y0, x1, y1 = objects[k]["box"]
        peak = int(torch.as_tensor(alphas[t]).argmax())
        r, c = divmod(peak, 7)
        cx, cy = (c + 0.5) * CELL, (r + 0.5) * CELL
        centre = x0 <= cx < x1 and y0 <= cy < y1
        overlap = c * CELL < x1 and (c + 1) * CELL > x0 and r * CELL < y1 and (r + 1) * CELL > y0
        out.append((w, centre, overlap))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bundle")
    ap.add_argument("--checkpoint")
    ap.add_argument("--split", default="test", choices=["dev", "test"])
    ap.add_argument("--n", type=int, default=500, help="number of held-out scenes (bundle mode)")
    ap.add_argument("--beam", type=int, nargs="+", default=[1])
    ap.add_argument("--cached", action="store_true", help="with --bundle: use the cached test features")
    ap.add_argument("--engine", metavar="CLI",
                    help="with --bundle: measure the ENGINE: attnlens-cli caption --json --attentions over the "
                         "re-rendered scenes written as PPM files (no torch in the measured path)")
    ap.add_argument("--cache-dir", default=data.CACHE)
    ap.add_argument("--out")
    args = mobilenet.parse_args_with_threads(ap)
    t0 = time.time()
    seed = shapes.SPLIT_SEEDS[args.split]
    if args.engine:
        assert args.bundle, "--engine needs --bundle"
        report = {}
        for beam in args.beam:
            report["beam%d" % beam] = r = engine_evaluate(args.engine, args.bundle, seed, args.n, beam)
            print("ENGINE %s %s %s (%d scenes, beam %d): exact %.1f%%  grounding %.1f%% of %d object words  "
                  "(overlap %.1f%%)  %.0fs" % (args.engine, args.bundle, args.split, args.n, beam, r["exact"],
                                               r["grounding"], r["object_words"], r["grounding_overlap"],
                                               time.time() - t0))
            for x in [x for x in r["scenes"] if not x["exact"]][:5]:
                print("  wrong: %r -> %r" % (x["truth"], x["generated"]))
        if args.out:
            json.dump(dict(command=" ".join(sys.argv), split=args.split, results=report), open(args.out, "w"),
                      indent=1)
        return
    if args.bundle and not args.cached:
        enc, dec, itos, cfg = bundle.load_bundle(args.bundle)
        scenes, feats = [], []
        for s in range(0, args.n, 32):
            xs = []
            for i in range(s, min(args.n, s + 32)):
                px, meta = shapes.make_scene(seed, i)
                scenes.append(meta)
                xs.append(mobilenet.preprocess_rgba(px))
            with torch.no_grad():
                feats.append(mobilenet.decoder_grid(enc, torch.stack(xs),
                                                    cfg["encoder"].get("cell_colour") == "mean_rgb",
                                                    cfg["encoder"].get("cell_position") == "xy"))
        feats = torch.cat(feats)
        projected = False
        max_len = cfg["decoder"]["max_len"]
    else:
        if args.bundle:
            _, dec, itos, cfg = bundle.load_bundle(args.bundle)
            max_len = cfg["decoder"]["max_len"]
        else:
            dec, itos, ck = sat.load_checkpoint(args.checkpoint)
            max_len = ck["args"]["max_len"]
        meta = json.load(open(os.path.join(args.cache_dir, "shapes_%s.json" % args.split)))
        scenes = meta["scenes"]
        _, f16, _ = data.load_split("shapes", args.split, None, args.cache_dir)
        a = torch.from_numpy(f16.astype(np.float32))
        ck_args = torch.load(args.checkpoint)["args"] if args.checkpoint else {}
        if ck_args.get("cell_colour") or (args.bundle and cfg["encoder"].get("cell_colour")):
            rgb = np.load(os.path.join(args.cache_dir, "shapes_%s_rgb7.npy" % args.split))[:a.shape[0]]
            a = torch.cat([a, torch.from_numpy(rgb)], dim=2)
        if ck_args.get("cell_position") or (args.bundle and cfg["encoder"].get("cell_position")):
            a = torch.cat([a, mobilenet.cell_position().unsqueeze(0).expand(a.shape[0], -1, -1)], dim=2)
        with torch.no_grad():
            feats = dec.feat_proj(a)
        projected = True
    report = {}
    for beam in args.beam:
        report["beam%d" % beam] = evaluate(dec, feats, scenes, itos, beam, max_len, projected)
        r = report["beam%d" % beam]
        print("%s %s (%d scenes, beam %d): exact %.1f%%  grounding %.1f%% of %d object words  (overlap %.1f%%)  %.0fs"
              % (args.bundle or args.checkpoint, args.split, len(scenes), beam, r["exact"], r["grounding"],
                 r["object_words"], r["grounding_overlap"], time.time() - t0))
        for x in [x for x in r["scenes"] if not x["exact"]][:5]:
            print("  wrong: %r -> %r" % (x["truth"], x["generated"]))
    if args.out:
        json.dump(dict(command=" ".join(sys.argv), split=args.split, results=report), open(args.out, "w"), indent=1)


def engine_evaluate(cli, bundle_dir, seed, n, beam):
    """Scenes (seed, 0..n-1) rendered to binary PPMs, captioned by the engine CLI, scored like evaluate()."""
    import subprocess
    import tempfile
    scenes, paths = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(n):
            px, meta = shapes.make_scene(seed, i)
            scenes.append(meta)
            paths.append(os.path.join(tmp, "%05d.ppm" % i))
            with open(paths[-1], "wb") as f:
                f.write(b"P6\n%d %d\n255\n" % (px.shape[1], px.shape[0]) + px.tobytes())
        out = subprocess.run([cli, "caption", "--model", bundle_dir, "--beams", str(beam), "--json", "--attentions"],
                             input="\n".join(paths) + "\n", capture_output=True, text=True, check=True).stdout
    lines = [json.loads(x) for x in out.splitlines() if x.strip()]
    assert len(lines) == n and all("error" not in x for x in lines), "engine failed on some scenes"
    results, n_exact, words = [], 0, []
    for sc, r in zip(scenes, lines):
        toks = [t for t in r["tokens"] if t != "<end>"]
        att = np.asarray(r["attention"]["data"], np.float32).reshape(r["attention"]["dims"][0], -1)
        exact = toks == text.tokenize(sc["caption"])
        n_exact += exact
        g = grounding(toks, att, sc["objects"])
        words += g
        results.append(dict(id=sc["id"], truth=sc["caption"], generated=" ".join(toks), exact=exact,
                            words=[[w, bool(a), bool(b)] for w, a, b in g]))
    return dict(exact=100.0 * n_exact / n, grounding=100.0 * sum(w[1] for w in words) / max(1, len(words)),
                grounding_overlap=100.0 * sum(w[2] for w in words) / max(1, len(words)), object_words=len(words),
                scenes=results)


def evaluate(dec, feats, scenes, itos, beam, max_len, projected):
    results = []
    if beam <= 1:
        dec_out = []
        for s in range(0, feats.shape[0], 250):
            dec_out += sat.greedy_decode(dec, feats[s:s + 250], max_len=max_len, projected=projected)
    else:
        dec_out = [sat.beam_decode(dec, feats[i], beam=beam, max_len=max_len, projected=projected)
                   for i in range(feats.shape[0])]
    n_exact, words = 0, []
    for sc, r in zip(scenes, dec_out):
        toks = [itos[i] for i in r["tokens"]]
        exact = toks == text.tokenize(sc["caption"])
        n_exact += exact
        g = grounding(toks, r["alphas"], sc["objects"])
        words += g
        results.append(dict(id=sc["id"], truth=sc["caption"], generated=" ".join(toks), exact=exact,
                            words=[[w, bool(a), bool(b)] for w, a, b in g]))
    return dict(exact=100.0 * n_exact / len(scenes), grounding=100.0 * sum(w[1] for w in words) / max(1, len(words)),
                grounding_overlap=100.0 * sum(w[2] for w in words) / max(1, len(words)), object_words=len(words),
                scenes=results)


if __name__ == "__main__":
    main()
