"""Self-checks of the held-out box set, no torch and no photos needed:

  /usr/bin/python3 -m unittest models/training/captioning/ground_test/test_boxes.py      (or run the file)

- test.jsonl is well formed: 64 distinct photos, boxes inside 0..10 with x0 < x1 and y0 < y1, kind thing/stuff,
  every object word among its caption's words and entered once a photo as score.py matches words (a plural "s"
  dropped), so no object is scored at another object's token;
- with ../shared present (skipped on CI): draw.py still draws exactly test.jsonl's photos and captions, none of
  them in the dev box set, and margin.py counts a hand-made case as score.py does.
"""
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from draw import SHARED  # noqa: E402

BOXES = os.path.join(HERE, "test.jsonl")
SCORE_DIR = os.path.join(SHARED, "ground")
HAVE_SHARED = os.path.isfile(os.path.join(SCORE_DIR, "score.py")) and os.path.isdir(os.path.join(SHARED, "data"))


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(ln) for ln in f if ln.strip()]


def norm(w):
    """score.py's word matching: lowercased, a plural "s" dropped from words longer than 3 letters."""
    w = w.lower()
    return w[:-1] if len(w) > 3 and w.endswith("s") else w


class BoxFile(unittest.TestCase):
    def setUp(self):
        self.recs = read_jsonl(BOXES)

    def test_photos(self):
        names = [r["image"] for r in self.recs]
        self.assertEqual(len(names), 64)
        self.assertEqual(len(set(names)), 64)
        self.assertTrue(all(set(r) == {"image", "caption", "objects"} for r in self.recs))

    def test_objects(self):
        for r in self.recs:
            words = [norm(t) for t in r["caption"].replace(",", " ").split()]
            seen = set()
            for o in r["objects"]:
                self.assertEqual(set(o), {"word", "kind", "boxes"})
                self.assertIn(o["kind"], ("thing", "stuff"))
                self.assertIn(norm(o["word"]), words, r["image"])
                self.assertNotIn(norm(o["word"]), seen, r["image"])
                seen.add(norm(o["word"]))
                self.assertTrue(o["boxes"])
                for x0, y0, x1, y1 in o["boxes"]:
                    self.assertTrue(0 <= x0 < x1 <= 10 and 0 <= y0 < y1 <= 10, (r["image"], o["word"]))


@unittest.skipUnless(HAVE_SHARED, "../shared (Flickr8k lists, ../shared/ground) not here")
class WithShared(unittest.TestCase):
    def test_draw_reproduces(self):
        out = subprocess.run([sys.executable, os.path.join(HERE, "draw.py")], capture_output=True, text=True,
                             check=True).stdout
        drawn = [json.loads(ln) for ln in out.splitlines()]
        boxed = read_jsonl(BOXES)
        self.assertEqual([(d["image"], d["caption"]) for d in drawn], [(b["image"], b["caption"]) for b in boxed])
        dev = {r["image"] for r in read_jsonl(os.path.join(SCORE_DIR, "dev.jsonl"))}
        self.assertFalse(dev & {d["image"] for d in drawn})

    def test_margin_matches_score(self):
        sys.path.insert(0, SCORE_DIR)
        import margin
        import score
        # 2x2 grid. "dog" boxed top-left, peak there; "grass" bottom half, peak top-right; "cat" never said.
        gold = [{"image": "a.jpg", "caption": "A dog on grass .", "objects": [
            {"word": "dog", "kind": "thing", "boxes": [[0, 0, 5, 5]]},
            {"word": "grass", "kind": "stuff", "boxes": [[0, 5, 10, 10]]},
            {"word": "cat", "kind": "thing", "boxes": [[5, 5, 10, 10]]}]}]
        model = [{"image": "x/a.ppm", "tokens": ["a", "dog", "on", "grass", "."],
                  "attention": {"dims": [5, 2, 2], "data": [0.25] * 4 + [0.7, 0.1, 0.1, 0.1] + [0.25] * 4
                                + [0.1, 0.6, 0.2, 0.1] + [0.25] * 4}}]
        rows = margin.per_object(gold, model)
        counted, total, acc = score.score(gold, model)
        n, p, ms, c, u = acc["all"]
        self.assertEqual((len(rows), total), (counted, 3))
        self.assertEqual(sum(r[2] for r in rows), p)
        self.assertEqual(sum(r[3] for r in rows), c)
        self.assertAlmostEqual(sum(r[4] for r in rows), ms)
        self.assertAlmostEqual(sum(r[5] for r in rows), u)
        self.assertEqual([r[2] for r in rows], [True, False])  # dog's peak inside, grass's peak outside
        self.assertAlmostEqual(rows[0][4], 0.7)
        self.assertAlmostEqual(rows[1][4], 0.3)


if __name__ == "__main__":
    unittest.main()
