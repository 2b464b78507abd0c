"""BLEU of the attnlens ENGINE (not PyTorch) over a whole Multi30k split: runs `attnlens-cli translate` on every
source line and scores the output with the same BLEU functions as evaluate.py (common.py, docs/DESIGN.md §13).
No torch needed.

  /usr/bin/python3 evaluate_engine.py --bundle ../../de-en-transformer            # beam 4 and greedy, test2016
  /usr/bin/python3 evaluate_engine.py --bundle ../../de-en-rnn-general --beam 4 --data-dir /path/to/multi30k

Metrics: BLEU-4 = nltk corpus_bleu, default weights, no smoothing, x100, one hypothesis per source line.
  bleu_lc_tok:       hypothesis and reference lowercased and split by the regex \\w+|[^\\w\\s]
  bleu_cased_detok:  the engine's detokenized output against the raw reference, case kept, same split
--beam 1 is greedy decoding.
--no-final-punct: input as people type it in chat, without the final . ? ! … — the source lines lose their final
punctuation; hypotheses and references lose theirs too before scoring, and the same split with the punctuated input
is scored the same way beside it (rows "input": "no-final-punct" and "as-is"), so the two numbers compare. Decoding settings not given (alpha, max length) come from the bundle's config.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import DEFAULT_DATA_DIR, REPO, append_jsonl, bleu_fields, read_lines, report_result  # noqa: E402


def find_engine_cli(explicit=None):
    candidates = [explicit, os.environ.get("ATTNLENS_CLI")]
    for build in ("build", "build-tr", "build-translation"):
        candidates.append(os.path.join(REPO, build, "attnlens-cli"))
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            usage = subprocess.run([c, "--help"], stdout=subprocess.PIPE).stdout.decode("utf-8", "replace")
            if "translate --model" in usage:  # an older build may predate the translate command
                return c
    raise SystemExit("attnlens-cli not found: build it with `cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && "
                     "cmake --build build -j2 --target attnlens-cli`, or pass --cli PATH / set ATTNLENS_CLI")


def run_translate(cli, bundle, lines, flags):
    """`attnlens-cli translate --model BUNDLE FLAGS...` over the lines: (one output line per input, seconds)."""
    cmd = [cli, "translate", "--model", bundle] + [str(f) for f in flags]
    text = "".join(line.replace("\n", " ") + "\n" for line in lines)
    t0 = time.time()
    out = subprocess.run(cmd, input=text.encode("utf-8"), stdout=subprocess.PIPE, check=True).stdout
    seconds = time.time() - t0
    outputs = out.decode("utf-8").split("\n")
    if outputs and outputs[-1] == "":
        outputs = outputs[:-1]
    if len(outputs) != len(lines):
        raise RuntimeError(f"attnlens-cli translate returned {len(outputs)} lines for {len(lines)} inputs")
    return outputs, seconds


def translate(cli, bundle, lines, beam, alpha=None, max_new_tokens=None, copy_numbers=True):
    flags = ["--beams", beam]
    if not copy_numbers:
        flags += ["--no-copy-numbers"]
    if alpha is not None:
        flags += ["--alpha", alpha]
    if max_new_tokens is not None:
        flags += ["--max-new-tokens", max_new_tokens]
    return run_translate(cli, bundle, lines, flags)


_FINAL_PUNCT = re.compile(r"\s*[.?!…]+[\"'“”»«]*\s*$")


def strip_final_punct(line):
    """'Wie geht es dir?' -> 'Wie geht es dir'; a line that is only punctuation is kept as it is."""
    out = _FINAL_PUNCT.sub("", line)
    return out if out.strip() else line


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_WORD = re.compile(r"\w+")


def english_numbers(number):
    """The English spellings a German number may take: '2,50' -> {'2.50'}; '1.000' -> {'1,000', '1000'}; '3' -> {'3'}."""
    if "," in number and "." not in number:
        return {number.replace(",", ".")}  # decimal comma
    if "." in number and "," not in number and all(len(g) == 3 for g in number.split(".")[1:]):
        return {number.replace(".", ","), number.replace(".", "")}  # thousands dots: 1.000 → 1,000 or 1000
    return {number, number.replace(",", "#").replace(".", ",").replace("#", ".")}


def passthrough(srcs, refs, hyps):
    """Do numbers and names come through? numbers: every number of a source line (digits, with . or , inside) whose
    English spelling (english_numbers) is in the reference — counted as passed when the hypothesis has it too.
    names: source words written with a capital that are not the line's first word and appear verbatim (same case) in
    the reference — German nouns are capitalised too, but they rarely appear unchanged in English, so what is left
    is mostly names (Tom, Berlin)."""
    n_num = ok_num = n_name = ok_name = 0
    for s, r, h in zip(srcs, refs, hyps):
        h_nums = set(_NUMBER.findall(h))
        for num in _NUMBER.findall(s):
            forms = english_numbers(num) | {num}
            if forms & set(_NUMBER.findall(r)):
                n_num += 1
                ok_num += bool(forms & h_nums)
        words = _WORD.findall(s)
        r_words, h_words = set(_WORD.findall(r)), set(_WORD.findall(h))
        for w in words[1:]:
            if w[:1].isupper() and w in r_words:
                n_name += 1
                ok_name += w in h_words
    return {"numbers": n_num, "numbers_passed": round(100.0 * ok_num / max(n_num, 1), 1),
            "names": n_name, "names_passed": round(100.0 * ok_name / max(n_name, 1), 1)}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bundle", default=os.path.join(REPO, "models", "de-en-transformer"))
    p.add_argument("--split", default="test_2016_flickr", choices=["val", "test_2016_flickr", "tatoeba_dev"],
                   help="tatoeba_dev: the everyday development split of general.py (2,000 Tatoeba pairs)")
    p.add_argument("--data-dir", default=DEFAULT_DATA_DIR)
    p.add_argument("--cli", help="attnlens-cli binary (default: $ATTNLENS_CLI or build*/attnlens-cli)")
    p.add_argument("--beam", type=int, nargs="+", default=[4, 1], help="beam widths to run (1 = greedy)")
    p.add_argument("--alpha", type=float, help="GNMT length penalty exponent (default: the bundle's)")
    p.add_argument("--max-new-tokens", type=int)
    p.add_argument("--limit", type=int, help="first N sentences only: code checks, never a reported number")
    p.add_argument("--hyps-out", help="write the hypotheses of the first beam width here")
    p.add_argument("--json-out", help="append each result as one JSON line here")
    p.add_argument("--no-final-punct", action="store_true",
                   help="also translate the sources without their final punctuation; score both without it")
    p.add_argument("--no-copy-numbers", action="store_true",
                   help="the model's own text: without the engine's number copy by alignment (its default)")
    args = p.parse_args()
    cli = find_engine_cli(args.cli)
    if args.split == "tatoeba_dev":
        from general import read_tatoeba, split_tatoeba
        pairs = read_tatoeba()
        dev = split_tatoeba(pairs)[1]
        src, refs = [pairs[i][0] for i in dev], [pairs[i][1] for i in dev]
    else:
        src = read_lines(args.data_dir, args.split, "de")
        refs = read_lines(args.data_dir, args.split, "en")
    if args.limit:
        src, refs = src[:args.limit], refs[:args.limit]
    with open(os.path.join(args.bundle, "config.json"), encoding="utf-8") as f:
        decoding = json.load(f).get("decoding", {})
    alpha = args.alpha if args.alpha is not None else decoding.get("alpha")
    results = []
    inputs = [("as-is", src)]
    if args.no_final_punct:
        refs = [strip_final_punct(r) for r in refs]
        inputs.append(("no-final-punct", [strip_final_punct(s) for s in src]))
    for k, (beam, (variant, lines)) in enumerate((b, v) for b in args.beam for v in inputs):
        hyps, seconds = translate(cli, args.bundle, lines, beam, args.alpha, args.max_new_tokens,
                                  copy_numbers=not args.no_copy_numbers)
        if args.no_final_punct:
            hyps = [strip_final_punct(h) for h in hyps]
        res = {"model": os.path.relpath(os.path.abspath(args.bundle), REPO), "split": args.split,
               "sentences": len(hyps), "beam": beam, "alpha": alpha if beam > 1 else None,
               **bleu_fields(hyps, refs),
               "decode_seconds": round(seconds, 1), "sentences_per_second": round(len(hyps) / seconds, 1),
               "limited": bool(args.limit), "engine": "attnlens-cli (native)",
               "copy_numbers": not args.no_copy_numbers,
               "passthrough": passthrough(lines, refs, hyps)}
        if args.no_final_punct:
            res["input"] = variant
            res["scored"] = "final punctuation stripped from hypotheses and references"
        report_result(results, res, hyps, args.hyps_out if k == 0 else None)
    append_jsonl(args.json_out, results)


if __name__ == "__main__":
    main()
