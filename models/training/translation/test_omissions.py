"""omissions.py's counting on hand-made engine results (no engine, no data): unlinked content words, and the words
dropped against the reference (unlinked in the translation, linked when the head reads the reference).

  /usr/bin/python3 models/training/translation/test_omissions.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from omissions import dropped_against_reference, summarize, unlinked_content  # noqa: E402


def result(source, text, links):
    """A translate/align --json result reduced to what omissions.py reads."""
    return {"source_words": [{"text": w} for w in source.split()], "text": text, "alignment": links}


def main():
    src = "Ich glaube , wir haben Mäuse auf dem Dachboden ."
    # content words: glaube, Mäuse, Dachboden ("Ich wir haben auf dem" are closed-class, "," "." have no letter)
    hyp = result(src, "I think we've been on the roof.", [[0, 0], [1, 1], [3, 2], [4, 3], [6, 4], [8, 6]])
    ref = result(src, "I think we have mice in the attic.", [[0, 0], [1, 1], [3, 2], [4, 3], [5, 4], [6, 5], [8, 7]])
    assert unlinked_content(hyp) == (["glaube", "Mäuse", "Dachboden"], ["Mäuse"]), unlinked_content(hyp)
    assert dropped_against_reference(hyp, ref) == ["Mäuse"]
    # a word the reference leaves unlinked too (an idiom, a head miss) is not dropped against it
    ref_missing = result(src, ref["text"], [[0, 0], [1, 1], [3, 2], [4, 3], [6, 5], [8, 7]])
    assert dropped_against_reference(hyp, ref_missing) == []
    # multiplicity: "Tom" twice in the source, once unlinked in both -> not dropped; twice in the translation -> once
    src2 = "Tom sah Tom ."
    hyp2 = result(src2, "Tom saw.", [[0, 0], [1, 1]])
    ref2 = result(src2, "Tom saw Tom.", [[0, 0], [1, 1], [2, 2]])
    ref2_one = result(src2, "Tom saw himself.", [[0, 0], [1, 1]])
    assert dropped_against_reference(hyp2, ref2) == ["Tom"]
    assert dropped_against_reference(hyp2, ref2_one) == []
    summary, per_sentence = summarize([hyp, hyp2], [ref["text"], ref2["text"]], [ref, ref2])
    assert summary["content_words"] == 3 + 3 and summary["unlinked_content_words"] == 2, summary
    assert summary["dropped_against_reference"] == 2 and summary["relative_omission_rate"] == round(100 * 2 / 6, 2)
    assert summary["sentences_with_dropped"] == 100.0
    assert per_sentence[0]["dropped_against_reference"] == ["Mäuse"]
    summary_plain, _ = summarize([hyp], [ref["text"]])  # without the references' results: no relative figure
    assert "relative_omission_rate" not in summary_plain
    print("omissions.py counting: ok")


if __name__ == "__main__":
    main()
