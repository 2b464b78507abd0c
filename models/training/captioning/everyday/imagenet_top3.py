"""Does the ImageNet encoder the captioner starts from see what the everyday photos show? Prints, for each photo of
judgements.jsonl, the top 3 ImageNet classes of the frozen MobileNetV2 (`mobilenet.build_mobilenet_v2`, 224x224,
the engine's preprocessing) next to the judge's subject kind, judgement and reason. A diagnosis, not a measure of
any captioner: nothing is selected on it.

  /usr/bin/python3 models/training/captioning/everyday/imagenet_top3.py > top3.txt
"""
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import mobilenet  # noqa: E402


def main():
    torch.set_num_threads(1)
    model = mobilenet.build_mobilenet_v2().eval()
    labels = open(os.path.join(mobilenet.DEFAULT_DATA_DIR, "mobilenet_v2_imagenet", "imagenet_labels.txt")).read()
    labels = labels.split("\n")[1:]  # line 0 is "background"; the classifier's 1000 outputs are the rest
    for ln in open(os.path.join(HERE, "judgements.jsonl"), encoding="utf-8"):
        j = json.loads(ln)
        x = mobilenet.preprocess_rgba(mobilenet.load_image_rgb(os.path.join(HERE, "photos", j["image"])), 224)
        with torch.no_grad():
            top = mobilenet.classify(model, x[None])[0].topk(3).indices.tolist()
        print("%-6s %-12s %-26s | %s | %s" % (j["judgement"], j["subject_kind"], j["image"],
                                              " / ".join(labels[i].split(",")[0] for i in top), j["reason"]))


if __name__ == "__main__":
    main()
