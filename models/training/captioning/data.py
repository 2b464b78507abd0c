"""Datasets for the captioners: grid features (from cache/) + tokenised captions + references."""
import json
import os

import numpy as np

import text
from engine_io import flickr8k_captions

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(HERE, "cache")


def load_split(task, split, data_dir, cache_dir=CACHE, grid="grid7"):
    """Returns (names, feats float16 [N, L, D], raw captions per image (list of lists of str))."""
    if task == "flickr8k":
        names = json.load(open(os.path.join(cache_dir, "flickr8k_%s_names.json" % split)))
        feats = np.load(os.path.join(cache_dir, "flickr8k_%s_%s.npy" % (split, grid)))
        allcaps = flickr8k_captions(data_dir)
        caps = [allcaps[n] for n in names]
    elif task == "shapes":
        meta = json.load(open(os.path.join(cache_dir, "shapes_%s.json" % split)))
        names = [s["id"] for s in meta["scenes"]]
        feats = np.load(os.path.join(cache_dir, "shapes_%s_%s.npy" % (split, grid)))
        feats = feats[:len(names)]  # a split cut short by --max-minutes holds only the scenes listed in its json
        caps = [[s["caption"]] for s in meta["scenes"]]
    else:
        raise ValueError(task)
    assert feats.shape[0] == len(names) == len(caps)
    return names, feats, caps
