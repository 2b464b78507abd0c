"""Caption text conventions shared by training, evaluation and export (docs/DESIGN.md §13).

tokenize: lowercase, then the regex \\w+|[^\\w\\s] (so "dog." -> ["dog", "."]); the same split is used for the
model vocabulary and for BLEU. Vocabulary = <pad>, <start>, <end>, <unk>, then training-caption words with count
>= min_count sorted by (-count, word). Detokenisation joins tokens with single spaces.
"""
import collections
import re

from sat import SPECIALS, START, END, PAD, UNK

TOKEN_RE = re.compile(r"\w+|[^\w\s]")


def tokenize(s):
    return TOKEN_RE.findall(s.lower())


def build_vocab(token_lists, min_count):
    cnt = collections.Counter(w for toks in token_lists for w in toks)
    words = sorted((w for w, n in cnt.items() if n >= min_count), key=lambda w: (-cnt[w], w))
    return SPECIALS + words


def encode(tokens, stoi, max_len):
    ids = [stoi.get(w, UNK) for w in tokens[:max_len]]
    return [START] + ids + [END]


def decode(ids, itos):
    return " ".join(itos[i] for i in ids if i not in (PAD, START, END))


def bleu_scores(hyps, refs):
    """hyps: list of strings; refs: list of lists of strings. Returns BLEU-1..4 in percent (nltk corpus_bleu,
    no smoothing; BLEU-n uses uniform weights over 1..n-grams)."""
    from nltk.translate.bleu_score import corpus_bleu  # here, not at the top: tokenize/build_vocab need no nltk
    h = [tokenize(x) for x in hyps]
    r = [[tokenize(y) for y in rs] for rs in refs]
    out = {}
    for n in range(1, 5):
        w = tuple([1.0 / n] * n)
        out["bleu%d" % n] = 100.0 * corpus_bleu(r, h, weights=w)
    return out
