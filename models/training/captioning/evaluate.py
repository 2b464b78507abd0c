"""Flickr8k caption quality: BLEU-1..4 (nltk corpus_bleu, all 5 references, docs/DESIGN.md §13 conventions).

Two modes:
  --bundle models/flickr8k-mobilenet : the shipped bundle end to end; the encoder runs from the bundle's weights
        on every image of the split (JPEG from the tar -> RGB -> the engine's preprocessing), decoder from the
        bundle. This is the number that goes into MODEL_CARD.md ("PyTorch reference").
  --checkpoint runs/flickr8k/best.pt : a training checkpoint on the cached features (fast; for choosing decoding
        settings on dev).
Example:
  /usr/bin/python3 models/training/captioning/evaluate.py --bundle models/flickr8k-mobilenet --split test --beam 3
"""
import argparse
import io
import json
import os
import sys
import tarfile
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bundle  # noqa: E402
import data  # noqa: E402
import engine_io  # noqa: E402
import extract_features  # noqa: E402
import mobilenet  # noqa: E402
import sat  # noqa: E402
import text  # noqa: E402


def bundle_features(enc, data_dir, names, batch=32):
    tar_path = os.path.join(data_dir, "flickr8k", "flickr8k_images_160.tar")
    out = []
    with tarfile.open(tar_path) as tar:
        members = {os.path.basename(m.name): m for m in tar.getmembers() if m.isfile()}
        for s in range(0, len(names), batch):
            xs = [mobilenet.preprocess_rgba(mobilenet.load_image_rgb(io.BytesIO(tar.extractfile(members[n]).read())))
                  for n in names[s:s + batch]]
            with torch.no_grad():
                out.append(mobilenet.grid_features(enc, torch.stack(xs)))
    return torch.cat(out)


def decode_all(dec, feats, beam, max_len, projected, length_norm):
    if beam <= 1:
        res = []
        for s in range(0, feats.shape[0], 250):
            res += [r["tokens"] for r in sat.greedy_decode(dec, feats[s:s + 250], max_len=max_len,
                                                           projected=projected)]
        return res
    return [sat.beam_decode(dec, feats[i], beam=beam, max_len=max_len, projected=projected,
                            length_norm=length_norm)["tokens"] for i in range(feats.shape[0])]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bundle")
    ap.add_argument("--checkpoint")
    ap.add_argument("--data-dir", default=mobilenet.DEFAULT_DATA_DIR)
    ap.add_argument("--split", default="test", choices=["dev", "test"])
    ap.add_argument("--beam", type=int, nargs="+", default=[3])
    ap.add_argument("--length-norm", type=float, default=0.0)
    ap.add_argument("--cache-dir", default=data.CACHE)
    ap.add_argument("--out", help="write hypotheses + scores as JSON here")
    args = mobilenet.parse_args_with_threads(ap)
    t0 = time.time()
    names = extract_features.read_split(args.data_dir, args.split)
    allcaps = engine_io.flickr8k_captions(args.data_dir)
    refs = [allcaps[n] for n in names]
    if args.bundle:
        enc, dec, itos, cfg = bundle.load_bundle(args.bundle)
        feats = bundle_features(enc, args.data_dir, names)
        projected = False
        max_len = cfg["decoder"]["max_len"]
    else:
        dec, itos, ck = sat.load_checkpoint(args.checkpoint)
        names, f16, refs = data.load_split("flickr8k", args.split, args.data_dir, args.cache_dir)
        with torch.no_grad():
            feats = dec.feat_proj(torch.from_numpy(f16.astype(np.float32)))
        projected = True
        max_len = ck["args"]["max_len"]
    print("features ready %.0fs" % (time.time() - t0), flush=True)
    results = {}
    for beam in args.beam:
        hyps = [text.decode(t, itos) for t in decode_all(dec, feats, beam, max_len, projected, args.length_norm)]
        sc = text.bleu_scores(hyps, refs)
        results["beam%d" % beam] = dict(scores=sc, hypotheses=dict(zip(names, hyps)))
        print("%s %s beam %d: %s  (%.0fs)" % (args.bundle or args.checkpoint, args.split, beam,
                                             "  ".join("%s %.2f" % kv for kv in sc.items()), time.time() - t0),
              flush=True)
        print("  e.g.", hyps[:3], flush=True)
    if args.out:
        json.dump(dict(split=args.split, images=len(names), command=" ".join(sys.argv), results=results),
                  open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
