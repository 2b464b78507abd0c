"""Asserts that our MobileNetV2 (mobilenet.py) reproduces sanity/expected_top5.json on the four sanity images,
and that the numpy resize equals torch's bilinear (align_corners=False) resize.

Run: /usr/bin/python3 models/training/captioning/check_mobilenet.py [--data-dir ../shared/data]
Exits non-zero on any mismatch.
"""
import argparse
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mobilenet  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=mobilenet.DEFAULT_DATA_DIR)
    args = ap.parse_args()
    torch.set_num_threads(2)

    # 1. the resize matches torch's reference implementation on awkward sizes (up and down).
    rng = np.random.default_rng(0)
    for (h, w) in [(1, 1), (3, 517), (160, 160), (300, 200), (640, 480), (224, 224)]:
        img = rng.integers(0, 256, size=(h, w, 3)).astype(np.float32)
        ours = mobilenet.resize_bilinear_half_pixel(img, 224, 224)
        ref = F.interpolate(torch.from_numpy(img.transpose(2, 0, 1))[None], size=(224, 224), mode="bilinear",
                            align_corners=False)[0].numpy().transpose(1, 2, 0)
        diff = float(np.abs(ours - ref).max())
        # torch computes the source index with different float32 rounding: weights differ by ~1e-5,
        # i.e. a few thousandths of a grey level; anything larger would be a formula difference.
        assert diff < 1e-2, "resize %dx%d differs from torch by %g" % (h, w, diff)
        print("resize %4dx%-4d max |ours - torch| = %.2e" % (h, w, diff))
    # transparent pixels become the background; opaque RGBA equals RGB
    rgba = np.zeros((10, 10, 4), np.uint8)
    x = mobilenet.preprocess_rgba(rgba)
    assert torch.allclose(x, torch.ones_like(x)), "fully transparent image must be white (+1)"
    rgb = rng.integers(0, 256, size=(50, 70, 3)).astype(np.uint8)
    opaque = np.concatenate([rgb, np.full((50, 70, 1), 255, np.uint8)], axis=2)
    assert torch.equal(mobilenet.preprocess_rgba(rgb), mobilenet.preprocess_rgba(opaque))

    # 2. ImageNet top-5 on the sanity images
    root = os.path.join(args.data_dir, "mobilenet_v2_imagenet")
    expected = json.load(open(os.path.join(root, "sanity", "expected_top5.json")))
    model = mobilenet.build_mobilenet_v2(data_dir=args.data_dir)
    ok = True
    for name, exp in expected.items():
        x = mobilenet.preprocess_rgba(mobilenet.load_image_rgb(os.path.join(root, "sanity", name)))
        with torch.no_grad():
            prob = torch.softmax(mobilenet.classify(model, x[None]), dim=1)[0]
        p, idx = prob.topk(5)
        got = [(int(i), float(q)) for i, q in zip(idx, p)]
        want = exp["torch_tf_same_padding_top5"]
        ref = exp["tflite_reference_top5"]
        print("%-12s ours: %s" % (name, ", ".join("%d:%.4f" % g for g in got)))
        print("%-12s want: %s   (tflite top-1 %d:%.4f)" % ("", ", ".join("%d:%.4f" % (w[0], w[2]) for w in want),
                                                          ref[0][0], ref[0][2]))
        if got[0][0] != want[0][0] or got[0][0] != ref[0][0]:
            ok = False
            print("  MISMATCH top-1")
        # top-3 classes and all probabilities above 1e-3 must agree to 2e-3
        for (gi, gp), w in zip(got[:3], want[:3]):
            if gi != w[0] or abs(gp - w[2]) > 2e-3:
                ok = False
                print("  MISMATCH", gi, gp, w)
    if not ok:
        sys.exit("MobileNetV2 does NOT reproduce expected_top5.json")
    print("OK: MobileNetV2 reproduces expected_top5.json on all sanity images")


if __name__ == "__main__":
    main()
