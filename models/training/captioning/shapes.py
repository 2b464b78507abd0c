"""Deterministic synthetic scenes for the `shapes` captioner: 1-3 coloured shapes on varied backgrounds, with a
caption that follows from the scene and a ground-truth box per object.

Scene i of a split with seed s is drawn from numpy.random.default_rng([s, i]) only, so any scene can be rebuilt
from (seed, index) alone.

Image: 224x224 RGB uint8 (the encoder's input size, so the engine's resize is the identity on these).
Background: a random low-saturation base colour, a linear gradient in a random direction and Gaussian noise
  (sigma 6 grey levels), so the model cannot rely on one background colour.
Objects: shape in {circle, square, triangle}; colour in {red, green, blue, yellow, purple} (each channel jittered
  by +-20); size in {small (side 34-42 px), medium (56-66 px), large (84-98 px)}. Boxes do not overlap (>= 6 px
  apart). Edges are anti-aliased by 4x4 supersampling of the coverage.
Caption: objects are listed left to right (by box centre x). Each object is "a [small|large] <colour> <shape>"
  (medium has no size word). Consecutive objects A, B are joined by a relation read off their centres:
  dx = x_B - x_A (>= 0 by the ordering), dy = y_B - y_A (image y grows downwards):
      "left of"  if dx >= 1.5 |dy|          (A is left of B)
      "above"    if dy >= 1.5 dx            (A is above B)
      "below"    if -dy >= 1.5 dx           (A is below B)
  Scenes where some pair falls between these cases, or where consecutive centres are < 40 px apart in x, are
  redrawn, so every caption is unambiguous. Example: "a small red circle left of a blue square".
"""
import numpy as np

SIZE = 224
COLOURS = {"red": (215, 40, 40), "green": (40, 170, 60), "blue": (40, 80, 215), "yellow": (235, 205, 35),
           "purple": (145, 55, 185)}
SHAPES = ("circle", "square", "triangle")
SIZES = {"small": (34, 42), "medium": (56, 66), "large": (84, 98)}
SIZE_WORD = {"small": "small", "medium": None, "large": "large"}
COLOUR_WORDS = set(COLOURS)
SHAPE_WORDS = set(SHAPES)
SPLIT_SEEDS = {"train": 1001, "dev": 2002, "test": 3003}


def _coverage(shape, box, ss=4):
    """Fraction of each pixel covered by the shape, from ss x ss samples per pixel, as a [SIZE, SIZE] map.
    box = [x0, y0, x1, y1) in pixels; only the pixels of the box are sampled (the shape lies inside it)."""
    x0, y0, x1, y1 = box
    off = (np.arange(ss) + 0.5) / ss
    ys = (np.arange(y0, y1)[:, None] + off[None, :]).reshape(-1)
    xs = (np.arange(x0, x1)[:, None] + off[None, :]).reshape(-1)
    Y, X = np.meshgrid(ys, xs, indexing="ij")
    if shape == "square":
        inside = np.ones_like(X, dtype=bool)
    elif shape == "circle":
        cx, cy, r = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2
        inside = (X - cx) ** 2 + (Y - cy) ** 2 <= r * r
    else:  # upright isosceles triangle filling the box: apex at top centre, base along the bottom
        cx, w, h = (x0 + x1) / 2, (x1 - x0), (y1 - y0)
        t = (Y - y0) / h  # 0 at apex, 1 at base
        inside = np.abs(X - cx) <= t * w / 2
    cov = np.zeros((SIZE, SIZE))
    cov[y0:y1, x0:x1] = inside.reshape(y1 - y0, ss, x1 - x0, ss).mean(axis=(1, 3))
    return cov


def _relation(a, b):
    ax, ay = (a["box"][0] + a["box"][2]) / 2, (a["box"][1] + a["box"][3]) / 2
    bx, by = (b["box"][0] + b["box"][2]) / 2, (b["box"][1] + b["box"][3]) / 2
    dx, dy = bx - ax, by - ay
    if dx < 40:
        return None
    if dx >= 1.5 * abs(dy):
        return "left of"
    if dy >= 1.5 * dx:
        return "above"
    if -dy >= 1.5 * dx:
        return "below"
    return None


def _layout(rng):
    n = int(rng.integers(1, 4))
    for _ in range(200):
        objs = []
        ok = True
        for _k in range(n):
            size = str(rng.choice(list(SIZES)))
            lo, hi = SIZES[size]
            s = int(rng.integers(lo, hi + 1))
            placed = False
            for _t in range(50):
                x0 = int(rng.integers(2, SIZE - s - 1))
                y0 = int(rng.integers(2, SIZE - s - 1))
                box = [x0, y0, x0 + s, y0 + s]
                if all(box[2] + 6 <= o["box"][0] or o["box"][2] + 6 <= box[0] or box[3] + 6 <= o["box"][1]
                       or o["box"][3] + 6 <= box[1] for o in objs):
                    placed = True
                    break
            if not placed:
                ok = False
                break
            objs.append(dict(shape=str(rng.choice(SHAPES)), colour=str(rng.choice(list(COLOURS))), size=size,
                             box=box))
        if not ok:
            continue
        objs.sort(key=lambda o: (o["box"][0] + o["box"][2]) / 2)
        rels = [_relation(objs[k], objs[k + 1]) for k in range(len(objs) - 1)]
        if all(r is not None for r in rels):
            return objs, rels
    raise RuntimeError("could not lay out a scene")  # not reached in practice (200 tries)


def caption_of(objs, rels):
    """Returns (caption string, object index per token or -1)."""
    words, owner = [], []
    for k, o in enumerate(objs):
        phrase = ["a"] + ([SIZE_WORD[o["size"]]] if SIZE_WORD[o["size"]] else []) + [o["colour"], o["shape"]]
        words += phrase
        owner += [k] * len(phrase)
        if k < len(rels):
            rw = rels[k].split()
            words += rw
            owner += [-1] * len(rw)
    return " ".join(words), owner


def make_scene(seed, index):
    """Returns (pixels uint8 [224, 224, 3], meta dict with objects, caption, word owners)."""
    rng = np.random.default_rng([seed, index])
    # background: low-saturation base colour + gradient + noise
    grey = rng.uniform(40, 215)
    base = grey + rng.uniform(-25, 25, size=3)
    ang = rng.uniform(0, 2 * np.pi)
    amp = rng.uniform(0, 50)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE] / (SIZE - 1) - 0.5
    grad = amp * (np.cos(ang) * xx + np.sin(ang) * yy)
    img = base[None, None, :] + grad[:, :, None] + rng.normal(0, 6, size=(SIZE, SIZE, 1))
    objs, rels = _layout(rng)
    for o in objs:
        col = np.clip(np.array(COLOURS[o["colour"]], float) + rng.uniform(-20, 20, size=3), 0, 255)
        cov = _coverage(o["shape"], o["box"])[:, :, None]
        img = img * (1 - cov) + col[None, None, :] * cov
    pixels = np.clip(np.rint(img), 0, 255).astype(np.uint8)
    cap, owner = caption_of(objs, rels)
    return pixels, dict(id="%d_%d" % (seed, index), objects=objs, relations=rels, caption=cap, word_objects=owner)
