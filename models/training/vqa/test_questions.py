"""Fast self-checks of the VQA recipe's question generator (no torch, no cache):
   /usr/bin/python3 -m unittest models/training/vqa/test_questions.py"""
import os
import sys
import unittest
from collections import Counter

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import questions as Q  # noqa: E402


def scene(*objs):
    return [dict(shape=s, colour=c, size="medium", box=list(b)) for s, c, b in objs]


class QuestionTests(unittest.TestCase):
    def test_tokenize_and_vocab(self):
        self.assertEqual(Q.tokenize("What COLOR is the circle?"), ["what", "color", "is", "the", "circle", "?"])
        toks, ids = Q.encode("what colour is the zebra ?")
        self.assertEqual(ids[4], 1)  # <unk>
        self.assertEqual(len(set(Q.VOCAB)), len(Q.VOCAB))
        self.assertEqual(len(set(Q.ANSWERS)), len(Q.ANSWERS))

    def test_relations(self):
        a = dict(box=[10, 100, 50, 140])
        self.assertEqual(Q.relation_of(a, dict(box=[120, 100, 160, 140])), "left of")
        self.assertEqual(Q.relation_of(dict(box=[120, 100, 160, 140]), a), "right of")
        self.assertEqual(Q.relation_of(a, dict(box=[10, 10, 50, 50])), "below")
        self.assertEqual(Q.relation_of(a, dict(box=[10, 170, 50, 210])), "above")
        self.assertIsNone(Q.relation_of(a, dict(box=[70, 160, 110, 200])))  # between the cones
        self.assertIsNone(Q.relation_of(a, dict(box=[40, 100, 80, 140])))   # too close

    def test_answers_follow_from_the_scene(self):
        objs = scene(("circle", "red", (10, 100, 50, 140)), ("square", "blue", (120, 100, 170, 150)),
                     ("circle", "green", (120, 10, 160, 50)))
        qs = Q.candidates(objs, np.random.default_rng(0))
        by = {q["text"]: q for q in qs}
        self.assertEqual(by["how many circles are there ?"]["answer"], "2")
        self.assertEqual(by["how many triangles are there ?"]["answer"], "0")
        self.assertEqual(by["how many objects are there ?"]["answer"], "3")
        self.assertEqual(by["what shape is the blue object ?"]["answer"], "square")
        self.assertFalse(any(q["type"] == "colour" and "circle" in q["text"] for q in qs))  # circle not unique
        for q in qs:
            if q["type"] == "relation":
                a, b = q["target_w"]
                asked = [r for r in Q.RELATIONS if (" %s " % r) in q["text"]][0]
                self.assertEqual(q["answer"] == "yes", Q.relation_of(objs[a], objs[b]) == asked)

    def test_balance_and_masks(self):
        scenes = [dict(objects=Q.shapes._layout(np.random.default_rng([5, i]))[0]) for i in range(150)]
        qs = Q.split_questions(scenes, 5, 1)
        c = Counter((q["type"], q["answer"]) for q in qs)
        self.assertEqual(c[("relation", "yes")], c[("relation", "no")])
        self.assertEqual(len({c[("colour", x)] for x in Q.COLOURS}), 1)
        for q in qs[:200]:
            objs = scenes[q["scene"]]["objects"]
            for k in q["target_s"]:
                self.assertGreater(Q.cells_in_boxes(objs, [k]).sum(), 0)  # every box holds a cell centre
                self.assertAlmostEqual(float(Q.density(objs, [k]).sum()), 1.0, places=5)

    def test_peak_in_box(self):
        a = np.zeros(49)
        a[7 * 2 + 3] = 1  # row 2, column 3: centre (112, 80)
        self.assertTrue(Q.peak_in_box(a, [100, 70, 130, 90]))
        self.assertFalse(Q.peak_in_box(a, [0, 0, 100, 70]))


if __name__ == "__main__":
    unittest.main()
