"""Questions about the synthetic shapes scenes (../captioning/shapes.py), with their answers and the boxes of the
objects each question names. Deterministic: the questions of scene i of a split come from
numpy.random.default_rng([QUESTION_SEED, split seed, i]) only.

Four question types (tokens as the tokenizer splits them; "colour" may also be written "color"):
  colour    "what colour is the <shape> ?"               the shape is unique in the scene; answer its colour
  shape     "what shape is the <colour> object ?"        the colour is unique; answer its shape
  count     "how many <shape>s are there ?", "how many <colour> objects are there ?", "how many objects are there ?"
                                                         answer 0, 1, 2 or 3
  relation  "is the <A> <left of|right of|above|below> the <B> ?"   answer yes / no
            A and B are each named by their shape when it is unique, else by "<colour> object" when the colour is
            unique (else the pair is not asked). The true relation of the pair is read off the box centres
            (dx = x_B - x_A, dy = y_B - y_A, image y grows downwards): "left of" if dx >= 1.5|dy|, "right of" if
            -dx >= 1.5|dy|, "above" if dy >= 1.5|dx|, "below" if -dy >= 1.5|dx|, and the centres must be >= 40 px
            apart along that axis; pairs that fall between the cones are not asked. Half of the relation questions
            ask the true relation (yes), half one of the three others (no).

Answers are balanced per type within a split (balance()): yes/no exactly, colours and shapes by sampling, counts
by capping each count at twice the rarest count's number of questions.

What each question names, for attention supervision (train.py) and grounding (evaluate.py):
  target_s  the objects the question-level (LSTM) attention should cover: the named object (colour, shape), the
            relation's subject A, the counted objects (none for a count of 0)
  target_w  the objects the word-level attention should cover: the same, but both A and B for relations
  grounded  the object whose box the attention peak must fall in for the grounding metric (colour, shape:
            the named object; relation: A); None for counts (they name a class, not one object)
"""
import re

import numpy as np

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "captioning"))
import shapes  # noqa: E402

QUESTION_SEED = 18003
TYPES = ("colour", "shape", "count", "relation")
COLOURS = tuple(shapes.COLOURS)            # red green blue yellow purple
SHAPES = shapes.SHAPES                     # circle square triangle
RELATIONS = ("left of", "right of", "above", "below")
ANSWERS = COLOURS + SHAPES + ("0", "1", "2", "3", "yes", "no")
SPECIALS = ("<pad>", "<unk>")
VOCAB = SPECIALS + ("what", "colour", "color", "shape", "is", "the", "object", "how", "many", "are", "there", "objects",
                    "left", "right", "of", "above", "below", "?") + COLOURS + SHAPES + tuple(s + "s" for s in SHAPES)
MAX_WORDS = 24  # longer questions are refused (engine and PyTorch alike)
GRID = 7
CELL = shapes.SIZE // GRID

_TOKEN = re.compile(r"\w+|[^\w\s]")


def tokenize(text):
    """lowercase, then the regex \\w+|[^\\w\\s] (the captioners' rule; the engine uses text::tokenize_caption)."""
    return _TOKEN.findall(text.lower())


def encode(text):
    """question text -> (tokens, ids); unknown words -> <unk> (id 1)."""
    toks = tokenize(text)
    index = {w: i for i, w in enumerate(VOCAB)}
    return toks, [index.get(t, 1) for t in toks]


def centre(o):
    b = o["box"]
    return (b[0] + b[2]) / 2.0, (b[1] + b[3]) / 2.0


def relation_of(a, b):
    """The relation of object a to object b (see the module docstring), or None when it is not clear."""
    (ax, ay), (bx, by) = centre(a), centre(b)
    dx, dy = bx - ax, by - ay
    if dx >= 1.5 * abs(dy) and dx >= 40:
        return "left of"
    if -dx >= 1.5 * abs(dy) and -dx >= 40:
        return "right of"
    if dy >= 1.5 * abs(dx) and dy >= 40:
        return "above"
    if -dy >= 1.5 * abs(dx) and -dy >= 40:
        return "below"
    return None


def _name(objs, k):
    """How object k is named uniquely: 'square' or 'red object', or None."""
    o = objs[k]
    if sum(p["shape"] == o["shape"] for p in objs) == 1:
        return o["shape"]
    if sum(p["colour"] == o["colour"] for p in objs) == 1:
        return o["colour"] + " object"
    return None


def candidates(objs, rng):
    """Every question of the scene: dicts {type, text, answer, target_s, target_w, grounded} (object indices)."""
    out = []
    colour_word = lambda: "colour" if rng.random() < 0.75 else "color"  # noqa: E731
    for k, o in enumerate(objs):
        if sum(p["shape"] == o["shape"] for p in objs) == 1:
            out.append(dict(type="colour", text="what %s is the %s ?" % (colour_word(), o["shape"]),
                            answer=o["colour"], target_s=[k], target_w=[k], grounded=k))
        if sum(p["colour"] == o["colour"] for p in objs) == 1:
            out.append(dict(type="shape", text="what shape is the %s object ?" % o["colour"], answer=o["shape"],
                            target_s=[k], target_w=[k], grounded=k))
    for s in SHAPES:
        ks = [k for k, o in enumerate(objs) if o["shape"] == s]
        out.append(dict(type="count", text="how many %ss are there ?" % s, answer=str(len(ks)), target_s=ks,
                        target_w=ks, grounded=None))
    for c in COLOURS:
        ks = [k for k, o in enumerate(objs) if o["colour"] == c]
        out.append(dict(type="count", text="how many %s objects are there ?" % c, answer=str(len(ks)), target_s=ks,
                        target_w=ks, grounded=None))
    ks = list(range(len(objs)))
    out.append(dict(type="count", text="how many objects are there ?", answer=str(len(ks)), target_s=ks,
                    target_w=ks, grounded=None))
    for a in range(len(objs)):
        for b in range(len(objs)):
            if a == b:
                continue
            na, nb, rel = _name(objs, a), _name(objs, b), relation_of(objs[a], objs[b])
            if na is None or nb is None or rel is None:
                continue
            if rng.random() < 0.5:
                asked, answer = rel, "yes"
            else:
                asked, answer = str(rng.choice([r for r in RELATIONS if r != rel])), "no"
            out.append(dict(type="relation", text="is the %s %s the %s ?" % (na, asked, nb), answer=answer,
                            target_s=[a], target_w=[a, b], grounded=a))
    return out


def scene_questions(split_seed, index, objs):
    rng = np.random.default_rng([QUESTION_SEED, split_seed, index])
    return candidates(objs, rng)


def balance(questions, seed):
    """Subsample so answers are balanced within each type (see the module docstring). Keeps the input order."""
    rng = np.random.default_rng(seed)
    keep = np.zeros(len(questions), bool)
    for t in TYPES:
        idx = [i for i, q in enumerate(questions) if q["type"] == t]
        by = {}
        for i in idx:
            by.setdefault(questions[i]["answer"], []).append(i)
        if not by:
            continue
        sizes = sorted(len(v) for v in by.values())
        cap = 2 * sizes[0] if t == "count" else sizes[0]
        for v in by.values():
            chosen = v if len(v) <= cap else list(rng.choice(v, size=cap, replace=False))
            keep[chosen] = True
    return [q for i, q in enumerate(questions) if keep[i]]


def split_questions(scenes, split_seed, seed):
    """scenes: the cache's scene dicts (objects with boxes). -> balanced list of questions with 'scene' index."""
    qs = []
    for i, sc in enumerate(scenes):
        for q in scene_questions(split_seed, i, sc["objects"]):
            q["scene"] = i
            qs.append(q)
    return balance(qs, seed)


def cells_in_boxes(objs, ks):
    """[49] mask of the grid cells whose centre lies inside one of the boxes of objects ks."""
    m = np.zeros(GRID * GRID, np.float32)
    for k in ks:
        x0, y0, x1, y1 = objs[k]["box"]
        for r in range(GRID):
            for c in range(GRID):
                cx, cy = (c + 0.5) * CELL, (r + 0.5) * CELL
                if x0 <= cx < x1 and y0 <= cy < y1:
                    m[r * GRID + c] = 1.0
    return m


def density(objs, ks):
    """[49] count density: for each object in ks, the share of its box area in each cell (sums to 1 per object)."""
    d = np.zeros(GRID * GRID, np.float32)
    for k in ks:
        x0, y0, x1, y1 = objs[k]["box"]
        area = float((x1 - x0) * (y1 - y0))
        for r in range(GRID):
            for c in range(GRID):
                ox = max(0, min(x1, (c + 1) * CELL) - max(x0, c * CELL))
                oy = max(0, min(y1, (r + 1) * CELL) - max(y0, r * CELL))
                d[r * GRID + c] += ox * oy / area
    return d


def peak_in_box(attention, box):
    """Grounding: the centre of the attention's peak cell (first maximum, row-major) lies inside box [x0,y0,x1,y1)."""
    p = int(np.argmax(attention))
    cx, cy = (p % GRID + 0.5) * CELL, (p // GRID + 0.5) * CELL
    return box[0] <= cx < box[2] and box[1] <= cy < box[3]
