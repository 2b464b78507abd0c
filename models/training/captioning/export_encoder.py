"""Export the MobileNetV2 ImageNet encoder once, as its own bundle models/mobilenet-v2-imagenet/, which the
captioning bundles name in their config.json ("encoder": {"bundle": "mobilenet-v2-imagenet"}) instead of each
carrying a copy (every committed version of a bundle stays in git forever).

  /usr/bin/python3 models/training/captioning/export_encoder.py [--out models/mobilenet-v2-imagenet]

Bundle (architecture "mobilenet-v2"):
  config.json          architecture, preprocessing, the same-pad convs, bn_eps, labels file
  weights.safetensors  torchvision mobilenet_v2 state_dict names. Every conv/classifier weight W is stored as
                       integer codes K (F16, |K| <= 255, exact) in "<name>" plus one F32 scale s in
                       "<name>_scale" [1], W = float32(K) * s: the .pth was dequantized from a uint8 TFLite model
                       with one scale per tensor, so this is as small as F16 yet reproduces the F32 weights to
                       within one float32 rounding (checked below). BatchNorm tensors and biases are F32 (BN stays
                       unfolded; the engine folds it at load).
  labels.txt           ImageNet labels: output i = line i (the "background" line 0 of imagenet_labels.txt dropped);
                       not in config "files" (the engine does not need it, so JS does not download it)
  LICENSE              Apache-2.0 text of the source repository (google-coral/test_data)

Plain F16 rounding would move the grid features by up to 1.5% (0.09 of 6.0 on cat.jpg); the code+scale form moves
them by float32 rounding only (printed below). Goldens are computed by PyTorch from the weights as the engine reads
them (bundle.load_encoder_bundle), never from the .pth directly.
"""
import argparse
import json
import os
import shutil
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bundle  # noqa: E402
import mobilenet  # noqa: E402

DEFAULT_OUT = os.path.join(mobilenet.REPO_ROOT, "models", bundle.ENCODER_BUNDLE)


def quantization_codes(a):
    """a = K * s with integer K (the dequantized TFLite weights): returns (K, s) or (None, None)."""
    a64 = a.astype(np.float64)
    u = np.unique(a64)
    step = np.diff(u).min()
    k = np.round(a64 / step)
    if np.abs(a64 / step - k).max() > 0.01 or np.abs(k).max() > 2048:
        return None, None
    s = np.float32((a64 * k).sum() / (k * k).sum())  # least squares scale
    back = k.astype(np.float32) * s
    if np.abs(back - a).max() > 2e-6 * np.abs(a).max():
        return None, None
    return k, s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    os.makedirs(args.out, exist_ok=True)
    enc = mobilenet.build_mobilenet_v2()
    tensors = {}
    for k, v in enc.state_dict().items():
        if k.endswith("num_batches_tracked"):
            continue
        a = v.numpy().astype(np.float32)
        if a.ndim < 2:  # BN vectors and biases: F32
            tensors[k] = a
            continue
        codes, scale = quantization_codes(a)
        assert codes is not None, "%s is not integer codes times one scale" % k
        tensors[k] = codes.astype(np.float16)
        tensors[k + "_scale"] = np.array([scale], np.float32)
    bundle.write_safetensors(os.path.join(args.out, "weights.safetensors"), tensors)
    labels = open(os.path.join(mobilenet.DEFAULT_DATA_DIR, "mobilenet_v2_imagenet", "imagenet_labels.txt")).read()
    labels = labels.rstrip("\n").split("\n")
    assert labels[0] == "background" and len(labels) == 1001
    with open(os.path.join(args.out, "labels.txt"), "w") as f:
        f.write("\n".join(labels[1:]) + "\n")
    shutil.copyfile(os.path.join(mobilenet.DEFAULT_DATA_DIR, "mobilenet_v2_imagenet", "LICENSE-google-coral-test_data.txt"),
                    os.path.join(args.out, "LICENSE"))
    config = {
        "format": "attnlens-bundle",
        "version": 1,
        "architecture": "mobilenet-v2",
        "task": "image-classification",
        "name": bundle.ENCODER_BUNDLE,
        "weights": "weights.safetensors",
        "weights_dtype": "conv and classifier weights: F16 integer codes K with an F32 scale <name>_scale [1], W = K * scale; BatchNorm and biases F32",
        "source": "google-coral/test_data mobilenet_v2_1.0_224_quant.tflite (Apache-2.0), dequantized to a torchvision "
                  "state_dict (../shared/data/mobilenet_v2_imagenet/SOURCE.md)",
        "image": bundle.IMAGE_CONFIG,
        "encoder": {
            "type": "mobilenet_v2",
            "width_mult": 1.0,
            "bn_eps": 1e-5,
            "activation": "relu6",
            "same_pad_convs": list(mobilenet.SAME_PAD_CONVS),
            "same_pad": "zero pad right 1 and bottom 1, then padding 0 (TF 'SAME' for stride 2, 3x3, even size)",
            "grid_layer": "features (after features.18)",
            "grid": [7, 7],
            "feat_dim": 1280,
        },
        "classifier": {"num_classes": 1000, "labels": "labels.txt",
                       "input": "spatial mean of the grid features, then classifier.1 (Linear 1280->1000)"},
    }
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    # how far the F16 encoder is from the F32 .pth (informative; goldens use the F16 one)
    enc16 = bundle.load_encoder_bundle(args.out)
    x = mobilenet.preprocess_rgba(mobilenet.load_image_rgb(os.path.join(
        mobilenet.DEFAULT_DATA_DIR, "mobilenet_v2_imagenet", "sanity", "cat.jpg")))[None]
    with torch.no_grad():
        g32, g16 = mobilenet.grid_features(enc, x), mobilenet.grid_features(enc16, x)
        l32, l16 = enc(x), enc16(x)
    print("wrote %s: weights %.2f MB; bundle vs the F32 .pth on cat.jpg: grid max |diff| %.2e (max |grid| %.2f), "
          "logits max |diff| %.2e" % (args.out, os.path.getsize(os.path.join(args.out, "weights.safetensors")) / 1e6,
                                      float((g32 - g16).abs().max()), float(g32.abs().max()),
                                      float((l32 - l16).abs().max())))


if __name__ == "__main__":
    main()
