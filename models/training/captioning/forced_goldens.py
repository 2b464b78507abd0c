"""Forced-caption goldens of an exported captioning bundle: PyTorch teacher forcing (sat.forced_decode) of given
captions on the images of the bundle's golden.json, for the engine's Captioner::attend parity tests.

  /usr/bin/python3 models/training/captioning/forced_goldens.py --bundle models/flickr8k-mobilenet
  /usr/bin/python3 models/training/captioning/forced_goldens.py --bundle models/shapes

export.py calls write_forced_goldens() after writing golden.json, so a re-exported bundle gets fresh ones. Computed
from the bundle as loaded back (bundle.load_bundle: encoder codes x scale, decoder F16 upcast), like the goldens.

Writes models/<name>/golden_forced.json + golden_forced.safetensors. golden_forced.json "cases" has one entry per
golden.json case (same index and name; the pixels are that case's: its PPM or golden.safetensors case<i>/pixels),
each with "forced": a list of {caption, words (text.tokenize), token_ids (unknown -> <unk>), unknown_words
[{word, position}], steps (= words + 1, the last step scores <end>), score}. Tensors per case i and caption k:
  case<i>/forced<k>/attention [steps, g, g]  alpha of each step (row-major grid; g = image.input_size / 32)
  case<i>/forced<k>/beta      [steps]        the gate beta
  case<i>/forced<k>/logprobs  [steps]        log-probability of each word, then of <end>
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bundle  # noqa: E402
import mobilenet  # noqa: E402
import engine_io  # noqa: E402
import sat  # noqa: E402
import text  # noqa: E402

# Captions forced per golden case (by index). Each list mixes a plausible caption, the model's own greedy caption
# where known (its forced score must equal greedy's), and one with capitals, punctuation and unknown words.
CAPTIONS = {
    "flickr8k-mobilenet": [
        ["a cat is lying on a bed .", "A black-and-white CAT sleeps on a zxqv blanket!"],
        ["a colorful parrot sits on a branch .", "a girl in a red shirt is standing in the snow .",
         "qqqq"],
    ],
    "shapes": [
        ["a purple square left of a large yellow circle", "a small green triangle above a blue square ."],
        ["a small red circle left of a large blue circle", "a red circle"],
    ],
}


def case_pixels(case, i, golden_tensors):
    if case.get("pixels_ppm"):
        return engine_io.to_rgba(engine_io.read_ppm(os.path.join(mobilenet.REPO_ROOT, case["pixels_ppm"])))
    return golden_tensors["case%d/pixels" % i].astype(np.float32).round().astype(np.uint8)


@torch.no_grad()
def write_forced_goldens(bundle_dir, encoder_dir=None, captions=None):
    name = os.path.basename(os.path.normpath(bundle_dir))
    meta = json.load(open(os.path.join(bundle_dir, "golden.json")))
    gt, _ = bundle.read_safetensors(os.path.join(bundle_dir, "golden.safetensors"))
    enc, dec, itos, cfg = bundle.load_bundle(bundle_dir, encoder_dir=encoder_dir)
    stoi = {w: i for i, w in enumerate(itos)}
    if captions is None:  # another bundle: each case's greedy caption and one fixed caption
        captions = CAPTIONS.get(name) or [[c["greedy"]["text"] or "a", "a dog runs on the grass ."]
                                          for c in meta["cases"]]
    assert len(captions) == len(meta["cases"]), (len(captions), len(meta["cases"]))
    cc = cfg["encoder"].get("cell_colour") == "mean_rgb"
    cp = cfg["encoder"].get("cell_position") == "xy"
    size = bundle.input_size(cfg)
    tensors, cases = {}, []
    for i, case in enumerate(meta["cases"]):
        px = case_pixels(case, i, gt)
        assert list(px.shape) == case["pixels_dims"], (px.shape, case["pixels_dims"])
        x = mobilenet.preprocess_rgba(px, size)[None]
        grid = mobilenet.decoder_grid(enc, x, cc, cp)[0]  # [g*g, D]
        forced = []
        for k, cap in enumerate(captions[i]):
            words = text.tokenize(cap)
            ids = [stoi.get(w, sat.UNK) for w in words]
            r = sat.forced_decode(dec, grid, ids)
            p = "case%d/forced%d/" % (i, k)
            tensors[p + "attention"] = r["alphas"].reshape(-1, size // 32, size // 32).numpy().astype(np.float32)
            tensors[p + "beta"] = np.array(r["betas"], np.float32)
            tensors[p + "logprobs"] = np.array(r["logprobs"], np.float32)
            forced.append(dict(caption=cap, words=words, token_ids=ids + [sat.END],
                               unknown_words=[dict(word=w, position=j) for j, (w, t) in enumerate(zip(words, ids))
                                              if t == sat.UNK],
                               steps=len(ids) + 1, score=r["score"]))
            print("forced %s %s %r: score %.4f, unknown %s" % (name, case["name"], cap, r["score"],
                                                                [u["word"] for u in forced[-1]["unknown_words"]]))
        cases.append(dict(name=case["name"], forced=forced))
    bundle.write_safetensors(os.path.join(bundle_dir, "golden_forced.safetensors"), tensors)
    with open(os.path.join(bundle_dir, "golden_forced.json"), "w") as f:
        json.dump(dict(model=name, generator="models/training/captioning/forced_goldens.py (sat.forced_decode)",
                       torch=torch.__version__, tolerance="abs <= 1e-4", cases=cases), f, indent=1)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bundle", required=True)
    ap.add_argument("--encoder-dir", default=None)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    write_forced_goldens(args.bundle, args.encoder_dir)


if __name__ == "__main__":
    main()
