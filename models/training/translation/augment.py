"""Training-time augmentations that teach the translator input as people type it (train.py flags):

  --drop-final-punct P   a pair whose source AND target end in . ? ! loses that final piece on both sides
                         (chat-style input without final punctuation gets a translation without it);
  --swap-numbers P       a pair whose source and target contain the same number (digits, in the same pieces on both
                         sides) gets another random number in its place on both sides, so that the model learns to
                         copy numbers it has never seen (Tatoeba has digits in < 1% of its pairs, mostly small).

Both work on BPE ids, decide per pair with the given rng (train.py seeds it by epoch and batch, so a resumed run sees
the same data), and keep the guided-alignment links consistent: links to removed pieces are dropped, links after a
replaced span are shifted, and a swapped number is linked piece by piece on the diagonal.
"""
import random

from common import bpe_encode_ids

_SEP = "\u2581"  # the BPE's word-start mark


def load_pieces(prefix):
    with open(prefix + ".vocab", encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def final_punct_ids(pieces):
    """Vocabulary ids of the sentence-final pieces . ? ! (looked up by piece, not assumed)."""
    return {i for i, piece in enumerate(pieces) if piece in (".", "?", "!")}


def drop_final_punct(src_rows, tgt_rows, link_rows, punct, p, rng):
    """With probability p per pair, remove the final . ? ! piece of a pair whose source and target end in one."""
    out_s, out_t, out_l = [], [], [] if link_rows is not None else None
    for r, (s, t) in enumerate(zip(src_rows, tgt_rows)):
        links = link_rows[r] if link_rows is not None else None
        if len(s) > 1 and len(t) > 1 and s[-1] in punct and t[-1] in punct and rng.random() < p:
            s, t = s[:-1], t[:-1]
            if links is not None:
                links = [(a, b) for a, b in links if a < len(s) and b < len(t)]
        out_s.append(s)
        out_t.append(t)
        if out_l is not None:
            out_l.append(links)
    return out_s, out_t, out_l


class NumberSwapper:
    """Replaces a number that a pair has on both sides by a random other number (same pieces on both sides)."""

    def __init__(self, prefix, cli, seed=0, table_size=3000):
        pieces = self._pieces = load_pieces(prefix)
        self.start = {i for i, x in enumerate(pieces) if x.startswith(_SEP) and x[1:].isdigit()}  # '▁19'
        self.cont = {i for i, x in enumerate(pieces) if x.isdigit()}  # '9', '00'
        self.word_start = {i for i, x in enumerate(pieces) if x.startswith(_SEP)}
        rng = random.Random(seed)
        # Replacement numbers: small counts, prices, years, large numbers — each encoded once by the project's BPE.
        numbers = set()
        while len(numbers) < table_size:
            kind = rng.random()
            if kind < 0.35:
                numbers.add(str(rng.randint(0, 99)))
            elif kind < 0.6:
                numbers.add(str(rng.randint(1900, 2039)))
            elif kind < 0.85:
                numbers.add(str(rng.randint(100, 9999)))
            else:
                numbers.add(str(rng.randint(10000, 999999)))
        self.numbers = sorted(numbers)
        encoded = bpe_encode_ids(cli, prefix, self.numbers)
        # Keep only encodings that are one number span by the rule of spans() below.
        self.table = [ids for ids in encoded if ids and self._span_at(ids, 0) == len(ids)]

    def _span_at(self, ids, i):
        """End of the number span starting at ids[i] ('▁19' then digit pieces), or i when none starts there."""
        if ids[i] not in self.start:
            return i
        j = i + 1
        while j < len(ids) and ids[j] in self.cont:
            j += 1
        if j < len(ids) and ids[j] not in self.word_start and ids[j] not in self.cont:
            # '▁19 th', '▁3 er': the digits are part of a longer word; commas and dots ('2 , 5 0') still end a span
            # (the pieces ',' '.' are not word-starts, but they are not letters either)
            return i if any(c.isalpha() for c in self._pieces[ids[j]]) else j
        return j

    def spans(self, ids):
        out, i = [], 0
        while i < len(ids):
            j = self._span_at(ids, i)
            if j > i:
                out.append((i, j))
                i = j
            else:
                i += 1
        return out

    def __call__(self, src_rows, tgt_rows, link_rows, p, rng):
        out_s, out_t, out_l = [], [], [] if link_rows is not None else None
        for r, (s, t) in enumerate(zip(src_rows, tgt_rows)):
            links = link_rows[r] if link_rows is not None else None
            s_spans, t_spans = self.spans(s), self.spans(t)
            if s_spans and t_spans and rng.random() < p:
                # One number that the two sides share (the same pieces), chosen at random among them.
                shared = [(a, b) for a in s_spans for b in t_spans if s[a[0]:a[1]] == t[b[0]:b[1]]]
                if shared:
                    (s0, s1), (t0, t1) = shared[rng.randrange(len(shared))]
                    new = self.table[rng.randrange(len(self.table))]
                    s = s[:s0] + new + s[s1:]
                    t = t[:t0] + new + t[t1:]
                    if links is not None:
                        ds, dt = len(new) - (s1 - s0), len(new) - (t1 - t0)
                        kept = [(a + (ds if a >= s1 else 0), b + (dt if b >= t1 else 0)) for a, b in links
                                if not (s0 <= a < s1) and not (t0 <= b < t1)]
                        links = kept + [(s0 + k, t0 + k) for k in range(len(new))]
            out_s.append(s)
            out_t.append(t)
            if out_l is not None:
                out_l.append(links)
        return out_s, out_t, out_l
