"""ONNX export of a captioner and its MobileNetV2 encoder (the encoder bundle its config.json names:
flickr8k-mobilenet-encoder for flickr8k-mobilenet) for the peer benchmark, float32:
  <encoder>.encoder.onnx               pixels float32 [1,3,S,S] (x = v / 127.5 - 1, CHW) -> grid [1,(S/32)^2,D]
                                       (S: the bundle's config.json "image.input_size", 224 when it names none)
                                       (D = 1280, + 2 for the cell centre with "encoder.cell_position": "xy")
  <bundle>.decoder-init.onnx           grid -> p, keys, h, c (sat.ShowAttendTell.encode)
  <bundle>.decoder.{maps,nomaps}.onnx  one step: token [N], p, keys, h, c -> logits, next_h, next_c [+ alpha, beta]
Weights from the encoder bundle through the recipe's loader (models/training/captioning/bundle.py
load_encoder_bundle: integer codes x scale -> float32, the TF-SAME convs of mobilenet.py); the output is
mobilenet.grid_features, what the decoder attends over. Also writes the benchmark's images: the first --images
Flickr8k test images, decoded with PIL and resized to SxS (so neither engine resizes), as raw RGBA bytes in
flickr8k_test_S.rgba (N x S x S x 4).

  /usr/bin/python3 bench/peers/export_captioning.py --bundle models/flickr8k-mobilenet --out bench/peers/out
"""
import io
import json
import os
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_common import OPSET, REPO, export, finish, parse_args, recipe  # noqa: E402  (exits without PyTorch)

recipe("captioning")
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

import bundle  # noqa: E402
import mobilenet  # noqa: E402
DATA = os.path.join(REPO, "..", "shared", "data", "flickr8k")


class Grid(nn.Module):
    """pixels -> the grid the decoder attends over: mobilenet.decoder_grid (the 1280 features of each cell, then
    its centre (x, y) when the bundle says "encoder.cell_position": "xy")."""

    def __init__(self, enc, cell_position=False):
        super().__init__()
        self.enc = enc
        self.cell_position = cell_position

    def forward(self, x):
        return mobilenet.decoder_grid(self.enc, x, False, self.cell_position)


class DecoderInit(nn.Module):
    """grid [1,L,D] -> p (projected features), keys, h0, c0: sat.ShowAttendTell.encode."""

    def __init__(self, dec):
        super().__init__()
        self.dec = dec

    def forward(self, grid):
        return self.dec.encode(grid)


class DecoderStep(nn.Module):
    """sat.ShowAttendTell.step: token [N], p, keys, h, c -> logits, h, c [+ alpha [N,L], beta [N,1]]."""

    def __init__(self, dec, maps):
        super().__init__()
        self.dec, self.maps = dec, maps

    def forward(self, token, p, keys, h, c):
        logits, alpha, beta, h, c = self.dec.step(p, keys, h, c, token)
        return (logits, h, c, alpha, beta) if self.maps else (logits, h, c)


def write_images(out, n, S):
    from PIL import Image
    names = [l.strip() for l in open(os.path.join(DATA, "Flickr_8k.testImages.txt")) if l.strip()][:n]
    want = {"images/" + x: i for i, x in enumerate(names)}
    buf = [None] * len(names)
    with tarfile.open(os.path.join(DATA, "flickr8k_images_160.tar")) as tar:
        for m in tar:
            if m.name in want:
                with Image.open(io.BytesIO(tar.extractfile(m).read())) as im:
                    rgb = np.asarray(im.convert("RGB").resize((S, S), Image.BILINEAR), dtype=np.uint8)
                buf[want[m.name]] = np.concatenate([rgb, np.full((S, S, 1), 255, np.uint8)], axis=2)
    buf = [b for b in buf if b is not None]
    path = os.path.join(out, "flickr8k_test_%d.rgba" % S)
    np.stack(buf).tofile(path)
    return path


def main():
    args = parse_args(__doc__, lambda p: p.add_argument("--images", type=int, default=20),
                      bundle=os.path.join(REPO, "models", "flickr8k-mobilenet"))
    with open(os.path.join(args.bundle, "config.json")) as f:
        cfg = json.load(f)
    enc_dir = bundle.encoder_dir_for(args.bundle, cfg)
    enc = bundle.load_encoder_bundle(enc_dir)
    name = os.path.basename(enc_dir)
    path = os.path.join(args.out, f"{name}.encoder.onnx")
    cp = cfg["encoder"].get("cell_position") == "xy"
    S = bundle.input_size(cfg)
    with torch.no_grad():
        export(Grid(enc, cp), (torch.zeros(1, 3, S, S),), path, input_names=["pixels"], output_names=["grid"])
    written = [path, write_images(args.out, args.images, S)]
    # The Show-Attend-Tell decoder of the captioning bundle (sat.py), from the bundle's weights.
    _, dec, _, _ = bundle.load_bundle(args.bundle, enc_dir)
    cap = os.path.basename(os.path.normpath(args.bundle))
    with torch.no_grad():
        grid = Grid(enc, cp)(torch.zeros(1, 3, S, S))
        path = os.path.join(args.out, f"{cap}.decoder-init.onnx")
        export(DecoderInit(dec), (grid,), path, input_names=["grid"], output_names=["p", "keys", "h", "c"])
        written.append(path)
        p_, keys, h, c = dec.encode(grid)
        for maps in (False, True):
            path = os.path.join(args.out, f"{cap}.decoder.{'maps' if maps else 'nomaps'}.onnx")
            outs = ["logits", "next_h", "next_c"] + (["alpha", "beta"] if maps else [])
            export(DecoderStep(dec, maps), (torch.tensor([1]), p_, keys, h, c), path,
                   input_names=["token", "p", "keys", "h", "c"], output_names=outs,
                   dynamic_axes={k: {0: "N"} for k in ["token", "p", "keys", "h", "c"] + outs})
            written.append(path)
    finish(args.out, name, {"name": name, "torch": torch.__version__, "opset": OPSET}, written)


if __name__ == "__main__":
    main()
