"""Draw the photos of the training box set: Flickr8k TRAIN photos at random, each with its five human captions.

  /usr/bin/python3 models/training/captioning/ground_train/draw.py > /tmp/train-drawn.jsonl

The training split's names (Flickr_8k.trainImages.txt) are sorted and drawn in rounds (ROUNDS: seed, photos): each
round is random.Random(seed).sample of the sorted names no earlier round drew, so a later round adds photos without
changing the earlier ones. Each line printed is {"index", "image", "captions"} with the photo's five captions (#0 … #4
of Flickr8k.token.txt), in the drawn order. The boxes of train.jsonl were then drawn by hand on these photos
(README.md). No photo of the two measuring sets (../shared/ground, dev photos; ../ground_test, test photos) can be
drawn: they are not in the training split.
"""
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import engine_io  # noqa: E402  (the Flickr8k split and caption readers)

ROUNDS = [(8080, 320), (8081, 480)]  # (seed, photos): each round samples the photos no earlier round drew
SHARED = os.path.dirname(engine_io.DATA)  # ../shared, beside the repository


def drawn():
    caps = engine_io.flickr8k_captions(engine_io.DATA)
    names = sorted(set(engine_io.split_names(engine_io.DATA, "train")))
    order = []
    for seed, n in ROUNDS:
        order += random.Random(seed).sample(sorted(set(names) - set(order)), n)
    return [{"index": i, "image": n, "captions": [c.strip() for c in caps[n]]} for i, n in enumerate(order)]


def main():
    for rec in drawn():
        print(json.dumps(rec))


if __name__ == "__main__":
    main()
