"""Self-checks of the judged dropped-words set and its scoring (no engine, no torch):

  /usr/bin/python3 models/training/translation/dropped/test_dropped.py

- score.py on hand-made judgements: the rate, the share of sentences with a drop, a judgement that names a word that
  is not a content word of its source is refused, an unjudged hypothesis is refused, the agreement with
  omissions.py's flags is counted, and the bootstrap interval brackets the ratio;
- the committed files: sample.jsonl has SAMPLE_SIZE distinct sources, every hypothesis of every hypotheses-*.jsonl
  has exactly one judgement, every judged word is a content word of its source, and no judgement is left over.
- with ../shared present: the sample is still what make_blind.py draws from the Tatoeba dev split.
"""
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_blind import JUDGEMENTS_FILE, SAMPLE_FILE, SAMPLE_SIZE, load_systems, read_jsonl  # noqa: E402
from score import agreement, bootstrap_ratio, check_judgement, content_words, per_sentence, summary  # noqa: E402
from general import TATOEBA_FILE  # noqa: E402


class Scoring(unittest.TestCase):
    def setUp(self):
        self.sample = [{"id": 0, "source": "Ich glaube, wir haben Mäuse auf dem Dachboden."},
                       {"id": 1, "source": "Willst du noch eins davon?"}]
        self.judgements = {
            (0, "I think we've been on the roof."): {"id": 0, "dropped": ["Mäuse"], "wrong": ["Dachboden"]},
            (1, "Do you want another one of these?"): {"id": 1, "dropped": [], "wrong": []},
        }

    def test_content_words(self):
        self.assertEqual(content_words(self.sample[0]["source"]), ["glaube", "Mäuse", "Dachboden"])
        self.assertEqual(content_words("Tom ging um 2.30 Uhr nicht aus dem Haus."),
                         ["Tom", "ging", "2.30", "Uhr", "nicht", "Haus"])

    def test_rate(self):
        hyps = {0: "I think we've been on the roof.", 1: "Do you want another one of these?"}
        rows = per_sentence(self.sample, hyps, self.judgements)
        self.assertEqual(rows, [(3, 1, 1), (3, 0, 0)])  # noch, eins, davon are content words by omissions.py's list
        s = summary(rows)
        self.assertEqual((s["content_words"], s["dropped"], s["wrong"]), (6, 1, 1))
        self.assertAlmostEqual(s["dropped_rate"], 1 / 6)
        self.assertAlmostEqual(s["sentences_with_drop"], 0.5)

    def test_refusals(self):
        with self.assertRaises(ValueError):  # "wir" is closed-class: not a word a judgement may name
            check_judgement({"id": 0, "dropped": ["wir"]}, self.sample[0]["source"])
        check_judgement({"id": 0, "dropped": ["mäuse"]}, self.sample[0]["source"])  # case does not matter
        with self.assertRaises(ValueError):
            per_sentence(self.sample, {0: "I think we have mice in the attic.", 1: "x"}, self.judgements)

    def test_agreement(self):
        hyps = {0: "I think we've been on the roof.", 1: "Do you want another one of these?"}
        rows = [{"source": "Ich glaube , wir haben Mäuse auf dem Dachboden .", "hypothesis": hyps[0],
                 "unlinked": ["Mäuse", "glaube"], "dropped_against_reference": ["Mäuse"]},
                {"source": "Willst du noch eins davon ?", "hypothesis": hyps[1], "unlinked": ["noch"],
                 "dropped_against_reference": []}]
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as f:
            f.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
        try:
            a = agreement(self.sample, hyps, self.judgements, f.name)
            self.assertEqual(a["dropped_against_reference"], {"flagged": 1, "flagged_judged_dropped": 1,
                                                              "judged_dropped": 1, "judged_dropped_flagged": 1})
            self.assertEqual(a["unlinked"], {"flagged": 3, "flagged_judged_dropped": 1, "judged_dropped": 1,
                                             "judged_dropped_flagged": 1})
            with self.assertRaises(ValueError):  # another translation than the judged one
                agreement(self.sample, {0: "x", 1: hyps[1]}, self.judgements, f.name)
        finally:
            os.unlink(f.name)

    def test_bootstrap(self):
        base = [(3, 2, 0)] * 20 + [(3, 0, 0)] * 20
        new = [(3, 1, 0)] * 20 + [(3, 0, 0)] * 20
        lo, hi = bootstrap_ratio(base, new, rounds=500)
        self.assertAlmostEqual(lo, 0.5)  # every resample keeps the ratio of paired sentences here
        self.assertAlmostEqual(hi, 0.5)
        mixed = [(3, 1, 0)] * 10 + [(3, 0, 0)] * 10 + [(3, 2, 0)] * 20
        lo, hi = bootstrap_ratio(base, mixed, rounds=500)
        self.assertLess(lo, 1.25)
        self.assertGreater(hi, 1.25)  # the point ratio 50 / 40


class CommittedSet(unittest.TestCase):
    def test_sample(self):
        sample = read_jsonl(SAMPLE_FILE)
        self.assertEqual(len(sample), SAMPLE_SIZE)
        self.assertEqual(len({s["source"] for s in sample}), SAMPLE_SIZE)
        self.assertEqual([s["id"] for s in sample], list(range(SAMPLE_SIZE)))
        self.assertTrue(all(s["references"] for s in sample))

    def test_every_hypothesis_judged_once(self):
        sample = {s["id"]: s for s in read_jsonl(SAMPLE_FILE)}
        judgements = read_jsonl(JUDGEMENTS_FILE)
        keys = [(j["id"], j["hypothesis"]) for j in judgements]
        self.assertEqual(len(keys), len(set(keys)), "a hypothesis judged twice")
        for j in judgements:
            check_judgement(j, sample[j["id"]]["source"])
            self.assertRegex(j.get("judged", ""), r"^\d{4}-\d{2}-\d{2}$", "a judgement without its date")
        systems = load_systems()
        self.assertGreaterEqual(len(systems), 2)
        used = set()
        for name, hyps in systems.items():
            self.assertEqual(sorted(hyps), sorted(sample), f"hypotheses-{name}.jsonl does not cover the sample")
            used |= set(hyps.items())
            per_sentence(list(sample.values()), hyps, {k: j for k, j in zip(keys, judgements)})
        self.assertEqual(set(keys) - used, set(), "judgements of hypotheses no system wrote")

    @unittest.skipUnless(os.path.isfile(TATOEBA_FILE), "../shared/data not present")
    def test_sample_is_redrawn(self):
        from make_blind import make_sample
        self.assertEqual(make_sample(), read_jsonl(SAMPLE_FILE))


if __name__ == "__main__":
    unittest.main()
