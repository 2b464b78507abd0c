"""Dropped words as judged by a reader, per system, over the judged sample of Tatoeba dev (see README.md).

  /usr/bin/python3 score.py [--compare BASE NEW] [--json-out FILE]

For every hypotheses-NAME.jsonl beside this script: source content words (../omissions.py's definition) that the
judgements mark dropped, over all source content words of the sample; the share of sentences with a drop; words
marked wrong (rendered, but with a wrong meaning). It refuses to count while any hypothesis lacks a judgement or a
judgement names a word that is not a content word of its source. --compare BASE NEW adds the ratio of NEW's rate to
BASE's with a paired bootstrap over sentences (10,000 resamples, random.Random(1)): the 2.5th and 97.5th percentiles.
--agreement NAME=FILE compares the judgements of system NAME with the words `../omissions.py --sentences-out FILE`
flagged for the same translations (the sentence's first line in the split): how many flagged words are judged
dropped (precision) and how many judged drops are flagged (recall), for the words dropped against the reference and
for all unlinked words.
"""
import argparse
import json
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from make_blind import JUDGEMENTS_FILE, load_sample, load_systems, read_jsonl  # noqa: E402
from omissions import is_content  # noqa: E402

_WORD = re.compile(r"\d+(?:[.,:]\d+)*|\w+(?:-\w+)*")
BOOTSTRAP_ROUNDS = 10000


def content_words(source):
    """The source's content words in order, as written (a word that occurs twice is listed twice)."""
    return [w for w in _WORD.findall(source) if is_content(w)]


def check_judgement(j, source):
    """Raise ValueError unless every word the judgement lists is a content word of the source (case-insensitive)."""
    words = {w.lower() for w in content_words(source)}
    for field in ("dropped", "wrong"):
        for w in j.get(field, []):
            if w.lower() not in words:
                raise ValueError(f"sentence {j['id']}: {field} word {w!r} is not a content word of {source!r}")


def per_sentence(sample, hyps, judgements):
    """[(content words, dropped, wrong)] in sample order for one system."""
    rows = []
    for s in sample:
        h = hyps.get(s["id"])
        if h is None:
            raise ValueError(f"sentence {s['id']} has no hypothesis")
        j = judgements.get((s["id"], h))
        if j is None:
            raise ValueError(f"sentence {s['id']}: hypothesis {h!r} is not judged (run make_blind.py and judge it)")
        rows.append((len(content_words(s["source"])), len(j.get("dropped", [])), len(j.get("wrong", []))))
    return rows


def summary(rows):
    content = sum(r[0] for r in rows)
    dropped = sum(r[1] for r in rows)
    return {"sentences": len(rows), "content_words": content, "dropped": dropped,
            "dropped_rate": dropped / content if content else 0.0,
            "sentences_with_drop": sum(1 for r in rows if r[1] > 0) / len(rows) if rows else 0.0,
            "wrong": sum(r[2] for r in rows)}


def bootstrap_ratio(base, new, rounds=BOOTSTRAP_ROUNDS, seed=1):
    """Percentile interval (2.5, 97.5) of sum(new dropped) / sum(base dropped) over sentences resampled in pairs."""
    rng = random.Random(seed)
    n = len(base)
    ratios = []
    for _ in range(rounds):
        idx = [rng.randrange(n) for _ in range(n)]
        b = sum(base[i][1] for i in idx)
        if b:
            ratios.append(sum(new[i][1] for i in idx) / b)
    ratios.sort()
    if not ratios:
        return None
    return ratios[int(0.025 * len(ratios))], ratios[min(len(ratios) - 1, int(0.975 * len(ratios)))]


def _squash(text):
    return re.sub(r"\s+", "", text)


def agreement(sample, hyps, judgements, sentences_file):
    """{field: {flagged, flagged_judged_dropped, judged_dropped, judged_dropped_flagged}} for the two word lists of
    omissions.py's --sentences-out lines (matched to the sample by source text, spaces ignored)."""
    first = {}
    for row in read_jsonl(sentences_file):
        first.setdefault(_squash(row["source"]), row)
    out = {}
    for field in ("dropped_against_reference", "unlinked"):
        flagged = hit = judged = 0
        for s in sample:
            row = first.get(_squash(s["source"]))
            if row is None:
                raise ValueError(f"sentence {s['id']} is not in {sentences_file}")
            if row["hypothesis"] != hyps[s["id"]]:
                raise ValueError(f"sentence {s['id']}: {sentences_file} translates it differently")
            j = judgements[(s["id"], hyps[s["id"]])]
            dropped = {w.lower() for w in j.get("dropped", [])}
            marked = {w.lower() for w in row[field]}
            flagged += len(marked)
            hit += len(marked & dropped)
            judged += len(j.get("dropped", []))
        # a word both flagged and judged dropped counts once for precision and once for recall
        out[field] = {"flagged": flagged, "flagged_judged_dropped": hit, "judged_dropped": judged,
                      "judged_dropped_flagged": hit}
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--compare", nargs=2, metavar=("BASE", "NEW"))
    p.add_argument("--agreement", action="append", default=[], metavar="NAME=FILE",
                   help="compare system NAME's judgements with omissions.py --sentences-out FILE (repeatable)")
    p.add_argument("--json-out", help="append the figures as one JSON line here")
    args = p.parse_args()
    sample = load_sample()
    sources = {s["id"]: s["source"] for s in sample}
    judgements = {}
    for j in read_jsonl(JUDGEMENTS_FILE):
        check_judgement(j, sources[j["id"]])
        judgements[(j["id"], j["hypothesis"])] = j
    systems = load_systems()
    rows = {name: per_sentence(sample, hyps, judgements) for name, hyps in systems.items()}
    out = {"systems": {name: summary(r) for name, r in rows.items()}}
    for name, s in out["systems"].items():
        print(f"{name}: dropped {s['dropped']} of {s['content_words']} content words = {100 * s['dropped_rate']:.2f}%; "
              f"sentences with a drop {100 * s['sentences_with_drop']:.1f}% of {s['sentences']}; wrong {s['wrong']}")
    if args.compare:
        base, new = args.compare
        for name in (base, new):
            if name not in rows:
                p.error(f"no hypotheses-{name}.jsonl")
        b, n = out["systems"][base], out["systems"][new]
        ratio = n["dropped"] / b["dropped"] if b["dropped"] else None
        ci = bootstrap_ratio(rows[base], rows[new])
        out["compare"] = {"base": base, "new": new, "ratio": ratio, "ci95": ci}
        if ratio is not None:
            text = f"{new} / {base} dropped: {ratio:.3f}"
            if ci:
                text += f" (95% bootstrap interval {ci[0]:.3f}-{ci[1]:.3f})"
            print(text)
    for spec in args.agreement:
        name, sep, path = spec.partition("=")
        if not sep or name not in systems:
            p.error(f"--agreement wants NAME=FILE with a system NAME, got {spec!r}")
        a = agreement(sample, systems[name], judgements, path)
        out.setdefault("agreement", {})[name] = a
        for field, c in a.items():
            print(f"{name} {field}: {c['flagged']} flagged, {c['flagged_judged_dropped']} of them judged dropped "
                  f"({100 * c['flagged_judged_dropped'] / max(c['flagged'], 1):.0f}%); judged drops flagged "
                  f"{c['judged_dropped_flagged']} / {c['judged_dropped']} "
                  f"({100 * c['judged_dropped_flagged'] / max(c['judged_dropped'], 1):.0f}%)")
    if args.json_out:
        with open(args.json_out, "a", encoding="utf-8") as f:
            f.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
