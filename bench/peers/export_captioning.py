"""ONNX export of the captioner's MobileNetV2 encoder (models/mobilenet-v2-imagenet, shared by the captioning
bundles) for the peer benchmark, float32:
  mobilenet-v2-imagenet.encoder.onnx   pixels float32 [1,3,224,224] (x = v / 127.5 - 1, CHW) -> grid [1,49,1280]
Weights from the encoder bundle through the recipe's loader (models/training/captioning/bundle.py
load_encoder_bundle: integer codes x scale -> float32, the TF-SAME convs of mobilenet.py); the output is
mobilenet.grid_features, what the decoder attends over. Also writes the benchmark's images: the first --images
Flickr8k test images, decoded with PIL and resized to 224x224 (so neither engine resizes), as raw RGBA bytes in
flickr8k_test_224.rgba (N x 224 x 224 x 4).

  /usr/bin/python3 bench/peers/export_captioning.py --bundle models/flickr8k-mobilenet --out bench/peers/out
"""
import argparse
import io
import json
import os
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "models", "training", "captioning"))

try:
    import numpy as np
    import torch
    import torch.nn as nn
except ImportError:
    sys.exit("bench/peers: PyTorch is missing; install it with `apt-get install python3-torch python3-torchvision`")

import bundle  # noqa: E402
import mobilenet  # noqa: E402

OPSET = 17
DATA = os.path.join(REPO, "..", "shared", "data", "flickr8k")


class Grid(nn.Module):
    def __init__(self, enc):
        super().__init__()
        self.enc = enc

    def forward(self, x):
        return mobilenet.grid_features(self.enc, x)


def write_images(out, n):
    from PIL import Image
    names = [l.strip() for l in open(os.path.join(DATA, "Flickr_8k.testImages.txt")) if l.strip()][:n]
    want = {"images/" + x: i for i, x in enumerate(names)}
    buf = [None] * len(names)
    with tarfile.open(os.path.join(DATA, "flickr8k_images_160.tar")) as tar:
        for m in tar:
            if m.name in want:
                with Image.open(io.BytesIO(tar.extractfile(m).read())) as im:
                    rgb = np.asarray(im.convert("RGB").resize((224, 224), Image.BILINEAR), dtype=np.uint8)
                buf[want[m.name]] = np.concatenate([rgb, np.full((224, 224, 1), 255, np.uint8)], axis=2)
    buf = [b for b in buf if b is not None]
    path = os.path.join(out, "flickr8k_test_224.rgba")
    np.stack(buf).tofile(path)
    return path


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bundle", default=os.path.join(REPO, "models", "flickr8k-mobilenet"))
    p.add_argument("--out", default=os.path.join(HERE, "out"))
    p.add_argument("--images", type=int, default=20)
    args = p.parse_args()
    torch.set_num_threads(1)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.bundle, "config.json")) as f:
        cfg = json.load(f)
    enc_dir = bundle.encoder_dir_for(args.bundle, cfg)
    enc = bundle.load_encoder_bundle(enc_dir)
    name = os.path.basename(enc_dir)
    path = os.path.join(args.out, f"{name}.encoder.onnx")
    with torch.no_grad():
        torch.onnx.export(Grid(enc), (torch.zeros(1, 3, 224, 224),), path, input_names=["pixels"],
                          output_names=["grid"], opset_version=OPSET, do_constant_folding=True)
    written = [path, write_images(args.out, args.images)]
    with open(os.path.join(args.out, f"{name}.json"), "w") as f:
        json.dump({"name": name, "torch": torch.__version__, "opset": OPSET}, f)
    for w in written:
        print(f"wrote {os.path.relpath(w)} ({os.path.getsize(w) / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
