"""Self-checks of the grounding tools, no torch and no photos needed:

  /usr/bin/python3 -m unittest models/training/captioning/test_ground.py      (or run the file)

- ../shared/ground/score.py on a tiny hand-made case whose pointing and mass were worked out by hand (skipped when
  ../shared/ground is absent, as on CI);
- deletion.py's cell masking and word selection;
- ground.py's row shifting (--shifts) (step t + s, clamped to the caption) and the caption's mean map.
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import deletion  # noqa: E402
import ground  # noqa: E402

SCORE_PY = os.path.join(HERE, "..", "..", "..", "..", "shared", "ground", "score.py")

# Two photos. a.jpg: "dog" (thing) boxed in the top-left quarter, "grass" (stuff) in the bottom half, "cat" (thing,
# never said). b.jpg: "man", but the model file has no b.jpg. So 2 of 4 objects count.
GOLD = [
    {"image": "a.jpg", "caption": "A dog on grass .", "objects": [
        {"word": "dog", "kind": "thing", "boxes": [[0, 0, 5, 5]]},
        {"word": "grass", "kind": "stuff", "boxes": [[0, 5, 10, 10]]},
        {"word": "cat", "kind": "thing", "boxes": [[5, 0, 10, 5]]}]},
    {"image": "b.jpg", "caption": "A man .", "objects": [{"word": "man", "kind": "thing", "boxes": [[0, 0, 10, 10]]}]},
]
# 2x2 grid, cells row-major: 0 = top-left, 1 = top-right, 2 = bottom-left, 3 = bottom-right. "dogs" matches "dog"
# (plural s dropped); the first "dog" (row 1) counts, not row 4.
MODEL = [{"image": "some/folder/a.ppm", "tokens": ["a", "dogs", "on", "grass", "dog", "<end>"],
          "attention": {"dims": [6, 2, 2], "data": [0.25, 0.25, 0.25, 0.25,
                                                    0.7, 0.1, 0.1, 0.1,    # dogs
                                                    0.25, 0.25, 0.25, 0.25,
                                                    0.4, 0.1, 0.2, 0.3,    # grass
                                                    0.0, 0.0, 0.0, 1.0,    # dog again: ignored
                                                    0.25, 0.25, 0.25, 0.25]}}]
# By hand:
#   dog:   peak cell 0, centre (2.5, 2.5) in [0,5]x[0,5] -> pointing 1; mass = 0.7 (cell 0 fully covered, cells 1-3
#          not at all); centre cell = int(5*2/10)*2 + int(5*2/10) = 3, centre (7.5, 7.5) not in the box -> 0;
#          uniform = box area 25% (small thing: area < 50%).
#   grass: peak cell 0 (0.4), centre (2.5, 2.5) not in [0,10]x[5,10] -> 0; mass = 0.2 + 0.3 = 0.5; centre cell 3
#          inside -> 1; uniform = 50%. Stuff, so not small.
#   all (n=2): pointing 50.0%, centre 50.0%, mass 60.0%, uniform 37.5%; small (n=1, dog): 100.0%, 0.0%, 70.0%, 25.0%.
EXPECTED_LINES = [
    "objects counted\t2/4",
    "all\tn=2\tpointing 50.0% (centre 50.0%)\tmass 60.0% (uniform 37.5%)",
    "small\tn=1\tpointing 100.0% (centre 0.0%)\tmass 70.0% (uniform 25.0%)",
]


@unittest.skipUnless(os.path.exists(SCORE_PY), "../shared/ground/score.py is not here")
class ScorePyTest(unittest.TestCase):
    def load(self):
        spec = importlib.util.spec_from_file_location("ground_score", SCORE_PY)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod

    def test_hand_made_case(self):
        counted, total, acc = self.load().score(GOLD, MODEL)
        self.assertEqual((counted, total), (2, 4))
        n, point, mass, centre, uniform = acc["all"]
        self.assertEqual(n, 2)
        self.assertEqual(point, 1)
        self.assertAlmostEqual(mass, 0.7 + 0.5, places=9)
        self.assertEqual(centre, 1)
        self.assertAlmostEqual(uniform, 0.25 + 0.5, places=9)
        n, point, mass, centre, uniform = acc["small"]
        self.assertEqual((n, point, centre), (1, 1, 0))
        self.assertAlmostEqual(mass, 0.7, places=9)
        self.assertAlmostEqual(uniform, 0.25, places=9)

    def test_command_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            gold, model = os.path.join(tmp, "gold.jsonl"), os.path.join(tmp, "model.jsonl")
            with open(gold, "w") as f:
                f.writelines(json.dumps(g) + "\n" for g in GOLD)
            with open(model, "w") as f:  # a non-JSON line (a log line) is skipped by score.py
                f.write("attnlens-cli: something\n")
                f.writelines(json.dumps(m) + "\n" for m in MODEL)
            out = subprocess.run([sys.executable, SCORE_PY, gold, model], capture_output=True, text=True, check=True)
            self.assertEqual(out.stdout.splitlines(), EXPECTED_LINES)


class DeletionTest(unittest.TestCase):
    def test_cells_and_masking(self):
        self.assertEqual(deletion.cells_hidden(7), 13)  # ceil(0.25 * 49): 26.5% of the image
        self.assertEqual(deletion.cells_hidden(13), 43)  # ceil(0.25 * 169)
        img = np.arange(14 * 21 * 3, dtype=np.uint32).reshape(14, 21, 3).astype(np.uint8)
        out = deletion.masked(img, [8, 48], np.array([1, 2, 3], np.uint8), 7)
        # cell 8 = row 1, column 1: rows [2, 4), columns [3, 6); cell 48 = rows [12, 14), columns [18, 21)
        hit = np.zeros((14, 21), bool)
        hit[2:4, 3:6] = True
        hit[12:14, 18:21] = True
        self.assertTrue((out[hit] == [1, 2, 3]).all())
        self.assertTrue((out[~hit] == img[~hit]).all())
        self.assertTrue((img[hit] != [1, 2, 3]).any())  # the input is not changed

    def test_counted_words(self):
        # punctuation, <unk> and <end> are not counted
        self.assertEqual(deletion.counted(["a", "dog", "<unk>", ",", "runs", ".", "<end>"]), [0, 1, 4])
        self.assertEqual(deletion.counted(["a", "dog", "<unk>", ",", "runs", "in", "snow", "<end>"], True), [1, 4, 6])

    def test_summary(self):
        s = deletion.summary([(0, 2.0, 1.0), (0, 1.0, 1.0), (1, 0.0, 1.0)], 2, 0)
        self.assertEqual(s["words"], 3)
        self.assertAlmostEqual(s["mean_drop_top"], 1.0)
        self.assertAlmostEqual(s["mean_drop_random"], 1.0)
        self.assertAlmostEqual(s["ratio"], 1.0)
        self.assertAlmostEqual(s["share_top_greater"], 1 / 3)


class MapShiftTest(unittest.TestCase):
    def rows(self, records):
        d = records[0]["attention"]["data"]
        return [d[i:i + 4] for i in range(0, len(d), 4)]

    def test_shift_and_clamp(self):
        orig = self.rows(MODEL)
        self.assertEqual(self.rows(ground.shifted(MODEL, 0)), orig)
        back = self.rows(ground.shifted(MODEL, -1))  # word t shown with step t-1; step 0 keeps its own row
        self.assertEqual(back, [orig[0]] + orig[:5])
        ahead = self.rows(ground.shifted(MODEL, 2))  # the last two words repeat the last row
        self.assertEqual(ahead, orig[2:] + [orig[5], orig[5]])
        self.assertEqual(MODEL[0]["attention"]["data"][4], 0.7)  # the input is not changed
        self.assertEqual(ground.shifted(MODEL, 1)[0]["tokens"], MODEL[0]["tokens"])

    def test_mean_map(self):
        rows = self.rows(ground.shifted(MODEL, None))
        orig = self.rows(MODEL)
        mean = [sum(r[c] for r in orig) / 6 for c in range(4)]
        self.assertEqual(len(rows), 6)
        for r in rows:
            for a, b in zip(r, mean):
                self.assertAlmostEqual(a, b, places=12)
        self.assertAlmostEqual(sum(mean), 1.0, places=12)


if __name__ == "__main__":
    unittest.main()
