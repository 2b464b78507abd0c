"""Omission rate of the ENGINE's translations: the share of source content words that the word alignment links to no
target word, over a whole split (default: the Tatoeba dev split of general.py), with the BLEU of the same run.

  /usr/bin/python3 omissions.py --bundle /tmp/int8/de-en-general --beam 4 --cli ../../../build/attnlens-cli
  /usr/bin/python3 omissions.py --bundle B --beam 4 --alpha 1.0 --coverage-beta 0.2     # a decoding setting
  /usr/bin/python3 omissions.py --bundle B --lines examples.de --sentences-out -       # any German lines, no BLEU

How: `attnlens-cli translate --json` decodes every source line (beam, alpha, coverage penalty as given, else the
bundle's defaults) and returns the source words (pieces merged, punctuation separate) and the word alignment of the
bundle's alignment head. --extraction argmax (the default here) links every target word to the source word its
attention row peaks on; a source word that no target word peaks on is unlinked. (gdfa, the bundle's default for
display, grows links into the neighbourhood of other links and adds every remaining argmax link whose two words are
both still free, so it links a dropped word to a neighbour of what was translated: on the three dropped-clause examples of the
model card it leaves no content word unlinked. It is reported with --extraction gdfa for comparison.)

A content word is a source word that has a letter or digit and is not in STOP_WORDS (closed classes: articles,
pronouns of every kind, the auxiliaries sein/haben/werden and the modal verbs, prepositions and their contractions,
conjunctions and subjunctions, modal particles, infinitive "zu", the pronominal adverbs da/dort/hier/so).
Negation (nicht, kein, nie, nichts) counts as content: dropping it inverts the meaning. Names and numbers count as
content.

omission rate = unlinked content words / content words (over the whole split); also reported: the share of
sentences with at least one unlinked content word, hypothesis/reference length in words, and — because a search can
lower the rate by adding words — the share of hypotheses that repeat a word (4+ letters) more often than the reference
does ("The chairs of a plastic chairs.").
--references measures the references instead of the engine's translations: each source is force-decoded through its
human translation (`attnlens-cli align --json`, teacher forcing, the same head and extraction), so the rate is that of
the human translation — in effect the floor of this measure for the bundle's alignment head: what the head's own
misses, the idioms it links elsewhere ("noch nie" → "never") and free renderings add to any translation's rate.
Because that floor is high (the references of Tatoeba dev leave about as many content words unlinked as the engine's
translations do), every run on a split also force-decodes its references and reports relative_omission_rate: the
content words unlinked in the translation that the same head links when it reads the reference ("dropped against the
reference"), over all content words. A word the reference itself leaves unlinked (an idiom, a head miss) does not
count; a word the reference renders and the translation does not, does.
--sentences-out FILE writes one JSON line per sentence (source, hypothesis, reference, content words, unlinked
words) for reading examples. Decoding with --json computes the attention maps; the text is the same as without.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import REPO, append_jsonl, bleu_fields, bleu_tokens  # noqa: E402
from evaluate_engine import find_engine_cli, run_translate  # noqa: E402

# German closed-class words, lowercased (see the module docstring for what is deliberately left out).
STOP_WORDS = frozenset("""
der die das den dem des ein eine einen einem einer eines
ich du er sie es wir ihr mich mir dich dir ihn ihm uns euch sich ihnen man
mein meine meinen meinem meiner meines dein deine deinen deinem deiner deines
sein seine seinen seinem seiner seines ihre ihren ihrem ihrer ihres
unser unsere unseren unserem unserer unseres euer eure euren eurem eurer eures
dieser diese dieses diesen diesem jener jene jenes jenen jenem
welcher welche welches welchen welchem wer wen wem wessen was wo wann warum wie wohin woher womit worüber
derjenige dasselbe dieselbe derselbe selbst selber einander
bin bist ist sind seid war warst waren wart gewesen wäre wären wärst sei
habe hast hat haben habt hatte hattest hatten hattet gehabt hätte hätten hättest
werde wirst wird werden werdet wurde wurdest wurden worden würde würdest würden
kann kannst können könnt konnte konntest konnten könnte könntest könnten gekonnt
muss musst müssen müsst musste musstest mussten müsste müssten
darf darfst dürfen dürft durfte durften dürfte dürften
soll sollst sollen sollt sollte solltest sollten
will willst wollen wollt wollte wolltest wollten
mag magst mögen mögt mochte mochten möchte möchtest möchten
in im ins an am ans auf aufs aus bei beim mit nach von vom zu zum zur über unter vor hinter neben zwischen
durch für gegen ohne um bis seit während wegen trotz statt außer gegenüber entlang innerhalb außerhalb
und oder aber denn sondern dass daß weil wenn ob als falls damit obwohl bevor nachdem sobald solange während
mal ja doch eben halt wohl etwa schon eigentlich nun
zu da dort hier so
""".split())

_HAS_WORD_CHAR = re.compile(r"\w", re.UNICODE)


def is_content(word):
    """A source word that carries content: has a letter or digit and is not a stop word (case-insensitive)."""
    return bool(_HAS_WORD_CHAR.search(word)) and word.lower() not in STOP_WORDS


def translate_json(cli, bundle, lines, beam=None, alpha=None, coverage_beta=None, extraction="argmax",
                   candidates_per_beam=None):
    """One parsed JSON result per line from `attnlens-cli translate --json`, and the seconds it took."""
    flags = ["--json", "--extraction", extraction]
    for flag, value in (("--beams", beam), ("--alpha", alpha), ("--coverage-beta", coverage_beta),
                        ("--candidates-per-beam", candidates_per_beam)):
        if value is not None:
            flags += [flag, value]
    outputs, seconds = run_translate(cli, bundle, lines, flags)
    results = [json.loads(o) for o in outputs]
    for line, r in zip(lines, results):
        if "error" in r:
            raise RuntimeError(f"attnlens-cli translate failed on {line!r}: {r['error']}")
    return results, seconds


def align_json(cli, bundle, lines, refs, extraction="argmax"):
    """One parsed `attnlens-cli align --json` result per (German, English) pair: the references force-decoded."""
    pairs = [f"{de.replace(chr(9), ' ')}\t{en.replace(chr(9), ' ')}" for de, en in zip(lines, refs)]
    cmd = [cli, "align", "--model", bundle, "--json", "--extraction", extraction]
    t0 = time.time()
    out = subprocess.run(cmd, input="".join(p.replace("\n", " ") + "\n" for p in pairs).encode("utf-8"),
                         stdout=subprocess.PIPE, check=False).stdout
    seconds = time.time() - t0
    results = [json.loads(o) for o in out.decode("utf-8").splitlines()]
    if len(results) != len(pairs):
        raise RuntimeError(f"attnlens-cli align returned {len(results)} lines for {len(pairs)} pairs")
    for pair, r in zip(pairs, results):
        if "error" in r:
            raise RuntimeError(f"attnlens-cli align failed on {pair!r}: {r['error']}")
    return results, seconds


def unlinked_content(result):
    """(content words, the content words no alignment link touches) of one translate --json result."""
    words = [w["text"] for w in result["source_words"]]
    linked = {link[0] for link in result["alignment"]}
    content = [i for i, w in enumerate(words) if is_content(w)]
    return [words[i] for i in content], [words[i] for i in content if i not in linked]


def dropped_against_reference(result, ref_result):
    """The content words unlinked in a translation that the same head links when it reads the human reference
    (counted with multiplicity: a word twice in the source and once dropped counts once)."""
    hyp_unlinked = unlinked_content(result)[1]
    excess = Counter(hyp_unlinked) - Counter(unlinked_content(ref_result)[1])
    dropped = []
    for w in hyp_unlinked:  # in source order
        if excess[w] > 0:
            dropped.append(w)
            excess[w] -= 1
    return dropped


def repeats_word(hypothesis, reference):
    """Does the hypothesis hold a word of 4+ letters more often than the reference does (lowercased)?"""
    ref = Counter(bleu_tokens(reference))
    hyp = Counter(w for w in bleu_tokens(hypothesis) if len(w) >= 4)
    return any(c > 1 and c > ref[w] for w, c in hyp.items())


def summarize(results, refs=None, ref_results=None):
    """The omission figures of a list of translate results (and BLEU when references are given; with the references'
    force-decoded results, also the words dropped against the reference)."""
    n_content = n_unlinked = n_sent_with = n_dropped = n_sent_dropped = 0
    per_sentence = []
    for k, r in enumerate(results):
        content, unlinked = unlinked_content(r)
        n_content += len(content)
        n_unlinked += len(unlinked)
        n_sent_with += bool(unlinked)
        rec = {"index": k, "source": " ".join(w["text"] for w in r["source_words"]), "hypothesis": r["text"],
               "content_words": content, "unlinked": unlinked}
        if refs is not None:
            rec["reference"] = refs[k]
        if ref_results is not None:
            dropped = dropped_against_reference(r, ref_results[k])
            n_dropped += len(dropped)
            n_sent_dropped += bool(dropped)
            rec["dropped_against_reference"] = dropped
        per_sentence.append(rec)
    hyps = [r["text"] for r in results]
    summary = {"sentences": len(results), "content_words": n_content, "unlinked_content_words": n_unlinked,
               "omission_rate": round(100.0 * n_unlinked / max(n_content, 1), 2),
               "sentences_with_unlinked": round(100.0 * n_sent_with / max(len(results), 1), 2),
               "hypothesis_words": sum(len(bleu_tokens(h)) for h in hyps)}
    if ref_results is not None:
        summary["dropped_against_reference"] = n_dropped
        summary["relative_omission_rate"] = round(100.0 * n_dropped / max(n_content, 1), 2)
        summary["sentences_with_dropped"] = round(100.0 * n_sent_dropped / max(len(results), 1), 2)
    if refs is not None:
        summary.update(bleu_fields(hyps, refs))
        summary["reference_words"] = sum(len(bleu_tokens(r)) for r in refs)
        summary["repeating_hypotheses"] = round(100.0 * sum(map(repeats_word, hyps, refs)) / max(len(hyps), 1), 2)
    return summary, per_sentence


def read_split(split, data_dir=None):
    """(German lines, English references) of a split: tatoeba_dev (general.py) or a Multi30k split."""
    if split == "tatoeba_dev":
        from general import read_tatoeba, split_tatoeba
        pairs = read_tatoeba()
        dev = split_tatoeba(pairs)[1]
        return [pairs[i][0] for i in dev], [pairs[i][1] for i in dev]
    from common import DEFAULT_DATA_DIR, read_lines
    d = data_dir or DEFAULT_DATA_DIR
    return read_lines(d, split, "de"), read_lines(d, split, "en")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bundle", default=os.path.join(REPO, "models", "de-en-general"))
    p.add_argument("--split", default="tatoeba_dev", choices=["tatoeba_dev", "val", "test_2016_flickr"])
    p.add_argument("--data-dir", help="the Multi30k folder (default: ../shared/data/multi30k)")
    p.add_argument("--lines", help="translate this file's German lines instead of a split (no references, no BLEU)")
    p.add_argument("--cli", help="attnlens-cli binary (default: $ATTNLENS_CLI or build*/attnlens-cli)")
    p.add_argument("--beam", type=int, help="beam width (default: the bundle's)")
    p.add_argument("--alpha", type=float, help="GNMT length penalty exponent (default: the bundle's)")
    p.add_argument("--coverage-beta", type=float, help="GNMT coverage penalty weight (default: the bundle's)")
    p.add_argument("--candidates-per-beam", type=int,
                   help="finished hypotheses collected per beam for the final choice (default: the bundle's)")
    p.add_argument("--extraction", default="argmax", choices=["argmax", "gdfa"],
                   help="how the alignment head's links are read (argmax: see above)")
    p.add_argument("--references", action="store_true",
                   help="force-decode the references instead of translating: the measure's floor (see above)")
    p.add_argument("--no-reference-check", action="store_true",
                   help="skip force-decoding the references (no relative_omission_rate)")
    p.add_argument("--limit", type=int, help="first N sentences only: code checks, never a reported number")
    p.add_argument("--sentences-out", help="one JSON line per sentence here ('-' = stdout)")
    p.add_argument("--json-out", help="append the summary as one JSON line here")
    args = p.parse_args()
    cli = find_engine_cli(args.cli)
    if args.lines:
        with open(args.lines, encoding="utf-8") as f:
            src, refs = [l.rstrip("\n") for l in f if l.strip()], None
    else:
        src, refs = read_split(args.split, args.data_dir)
    if args.limit:
        src, refs = src[:args.limit], (refs[:args.limit] if refs is not None else None)
    if args.references:
        if refs is None:
            p.error("--references needs a split with references, not --lines")
        results, seconds = align_json(cli, args.bundle, src, refs, args.extraction)
    else:
        results, seconds = translate_json(cli, args.bundle, src, args.beam, args.alpha, args.coverage_beta,
                                          args.extraction, args.candidates_per_beam)
    ref_results = None
    if refs is not None and not args.references and not args.no_reference_check:
        ref_results, _ = align_json(cli, args.bundle, src, refs, args.extraction)
    summary, per_sentence = summarize(results, refs, ref_results)
    with open(os.path.join(args.bundle, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    decoding = config.get("decoding", {})
    bundle = os.path.abspath(args.bundle)
    res = {"model": os.path.relpath(bundle, REPO) if bundle.startswith(REPO + os.sep) else bundle,
           "weights": config.get("weight_precision", config.get("weights_dtype")),
           "split": args.lines or args.split,
           "translations": "references, force-decoded" if args.references else "engine",
           "beam": args.beam if args.beam is not None else decoding.get("num_beams"),
           "alpha": args.alpha if args.alpha is not None else decoding.get("alpha"),
           "coverage_beta": args.coverage_beta if args.coverage_beta is not None
           else decoding.get("coverage_penalty_beta", 0.0),
           "candidates_per_beam": args.candidates_per_beam if args.candidates_per_beam is not None
           else decoding.get("candidates_per_beam", 1),
           "alignment": results[0]["alignment_method"] if results else None,
           **summary, "decode_seconds": round(seconds, 1), "limited": bool(args.limit)}
    if args.references:  # no search ran
        res.update(beam=None, alpha=None, coverage_beta=None, candidates_per_beam=None)
    if args.sentences_out:
        text = "".join(json.dumps(s, ensure_ascii=False) + "\n" for s in per_sentence)
        if args.sentences_out == "-":
            sys.stdout.write(text)
        else:
            with open(args.sentences_out, "w", encoding="utf-8") as f:
                f.write(text)
    print(json.dumps(res), flush=True)
    append_jsonl(args.json_out, [res])


if __name__ == "__main__":
    main()
