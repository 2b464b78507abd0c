"""Draw the photos of the held-out box set: 64 Flickr8k TEST photos at random, each with its first human caption.

  /usr/bin/python3 models/training/captioning/ground_test/draw.py > /tmp/drawn.jsonl

Reads ../shared/data/flickr8k (Flickr_8k.testImages.txt, Flickr8k.token.txt) and ../shared/ground/dev.jsonl.
The test split's names are sorted, the photos of dev.jsonl removed, and random.Random(SEED).sample(names, N) drawn;
each line printed is {"image", "caption"} with the photo's `#0` caption, in the drawn order. The boxes of test.jsonl
were then drawn by hand on these photos (README.md).
"""
import json
import os
import random

SEED = 5858
N = 64
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
SHARED = os.path.join(os.path.dirname(REPO), "shared")  # ../shared, beside the repository


def main():
    data = os.path.join(SHARED, "data", "flickr8k")
    test = sorted({ln.strip() for ln in open(os.path.join(data, "Flickr_8k.testImages.txt")) if ln.strip()})
    dev = {json.loads(ln)["image"] for ln in open(os.path.join(SHARED, "ground", "dev.jsonl")) if ln.strip()}
    names = [n for n in test if n not in dev]
    first = {}
    for ln in open(os.path.join(data, "Flickr8k.token.txt"), encoding="utf-8"):
        key, _, cap = ln.rstrip("\n").partition("\t")
        if key.endswith("#0"):
            first[key[:-2]] = cap.strip()
    for n in random.Random(SEED).sample(names, N):
        print(json.dumps({"image": n, "caption": first[n]}))


if __name__ == "__main__":
    main()
