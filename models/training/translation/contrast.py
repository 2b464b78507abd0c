"""Omission contrast (after Yang et al. 2019, "Reducing Word Omission Errors in Neural Machine Translation: A
Contrastive Learning Approach"): besides the usual loss, the model is taught to give the reference a higher
log-probability than the same reference with content left out.

  negative(y)  = y with one content word removed, or (half of the time) a run of two to four words starting at one
  loss         = mean over rows with a negative of  max(0, margin - (log p(y | x) - log p(negative(y) | x)))
where log p is the sum over the row's target pieces (and EOS) of the model's log-probabilities. A translator that
drops a clause prefers the shorter sentence; this term pushes the full one above it by at least `margin` nats.

With --contrast-repeat-share P, a share P of the negatives are instead the reference with one of its content words
repeated (inserted again after itself or a later word): contrasting only shorter negatives teaches the model that
longer is better, and it then repeats words.

train.py --omission-contrast W adds W times this loss (negatives decoded in the same forward as the references, so
a batch costs about twice as much).

train.py --token-unlikelihood W adds the token-level counterpart (unlikelihood_targets, unlikelihood_loss): single
steps of the reference at which a skip or a stutter would begin are pushed down, from the same logits as the
cross-entropy (no extra forward).
"""
import torch
import torch.nn.functional as F

_SEP = "\u2581"  # the BPE's word-start mark

# English closed-class words (lowercased): never the word a negative removes first.
STOP_WORDS = frozenset("""
a an the this that these those some any each every no
i you he she it we they me him her us them my your his its our their mine yours hers ours theirs myself yourself
himself herself itself ourselves themselves who whom whose which what where when why how
am is are was were be been being do does did done have has had having will would shall should can could may might
must of in on at to for with from by about as into onto over under up down out off than then there here so
and or but if because while although though since until after before not
""".split())


def words(row, pieces):
    """The target words of a row of piece ids: (start, end) piece spans; a word starts at a ▁ piece, and a piece of
    punctuation is a word of its own."""
    spans = []
    for i, pid in enumerate(row):
        if i == 0 or pieces[pid].startswith(_SEP) or _is_punct(pieces[pid]) or _is_punct(pieces[row[i - 1]]):
            spans.append([i, i + 1])
        else:
            spans[-1][1] = i + 1
    return [tuple(s) for s in spans]


def _is_punct(piece):
    """A piece with no letter or digit (". , ? !" are pieces of their own, attached without a ▁)."""
    return not any(ch.isalnum() for ch in piece)


def is_content(text):
    return (len(text) >= 3 and any(ch.isalpha() for ch in text) and text.lower() not in STOP_WORDS) or text.isdigit()


def _content_words(row, pieces, spans, word_initial=False):
    """Indices of the word `spans` of `row` that are content words (`word_initial`: only those starting with a ▁ piece)."""
    return [k for k, (a, b) in enumerate(spans) if (pieces[row[a]].startswith(_SEP) or not word_initial)
            and is_content("".join(pieces[p] for p in row[a:b]).replace(_SEP, ""))]


def _pick(row, pieces, rng, word_initial=False):
    """The word spans of `row`, a random content word k among them (None when there is none; `word_initial`: only
    words that start with a ▁ piece) and the last word before the final punctuation (>= k)."""
    spans = words(row, pieces)
    content = _content_words(row, pieces, spans, word_initial)
    if not content:
        return spans, None, None
    k = rng.choice(content)
    end = len(spans) - 1
    while end > k and _is_punct(pieces[row[spans[end][0]]]):
        end -= 1
    return spans, k, end


def omission_negative(row, pieces, rng):
    """`row` with one content word (or a run of 2-4 words from one, stopping before the final punctuation) removed;
    None when it has no content word or would become empty."""
    spans, k, end = _pick(row, pieces, rng)
    if k is None:
        return None
    last = k if rng.random() < 0.5 else min(end, k + rng.randint(1, 3))
    a, b = spans[k][0], spans[last][1]
    if a == 0 and all(_is_punct(pieces[p]) for p in row[b:]):
        return None  # nothing but punctuation would be left
    out = list(row[:a]) + list(row[b:])
    if a == 0 and out and not pieces[out[0]].startswith(_SEP):
        return None  # would start inside a word
    return out or None


def repetition_negative(row, pieces, rng):
    """`row` with a copy of one of its content words inserted after that word or a later one, before the final
    punctuation (the translator's other failure: "The chairs of a plastic chairs."); None when it has no
    word-initial content word."""
    spans, k, end = _pick(row, pieces, rng, word_initial=True)
    if k is None:
        return None
    at = spans[rng.randint(k, end)][1]
    a, b = spans[k]
    return list(row[:at]) + list(row[a:b]) + list(row[at:])


def negative(row, pieces, rng, repeat_share=0.0):
    """A negative for the contrast: with probability `repeat_share` a repetition negative, else an omission one.
    Contrasting both keeps length out of the signal: the reference must beat a shorter and a longer variant."""
    if repeat_share > 0 and rng.random() < repeat_share:
        return repetition_negative(row, pieces, rng)
    return omission_negative(row, pieces, rng)


def loss_and_sequence_log_probs(logits, target, n_rows, pad, label_smoothing):
    """One log-softmax for both terms of a batch whose first `n_rows` rows are the references and the rest their
    negatives: the label-smoothed cross-entropy of the references (equal to F.cross_entropy(..., ignore_index=pad,
    label_smoothing=...) on those rows) and every row's sequence log-probability: the sum of log p(target piece)
    over its pieces that are not `pad`."""
    logp = F.log_softmax(logits.float(), dim=-1)  # (B, T, V)
    token = logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)  # (B, T)
    keep = target != pad
    ce = -(1.0 - label_smoothing) * token[:n_rows] - label_smoothing * logp[:n_rows].mean(-1)  # (n_rows, T)
    return ce[keep[:n_rows]].mean(), (token * keep).sum(-1)


def contrast_loss(lp_pos, lp_neg, margin):
    """Mean hinge on the log-probability gap; also the share of rows whose gap is below the margin."""
    gap = lp_pos - lp_neg
    return F.relu(margin - gap).mean(), float((gap < margin).float().mean())


def unlikelihood_targets(row, pieces):
    """Token-level version of the two failures (after Welleck et al. 2019, "Neural Text Generation with Unlikelihood
    Training"), as (position, piece) pairs of one reference row (its pieces then EOS, as the decoder predicts them):
      skip:   where a content word starts, the first piece of the word after it (or EOS): the step that drops it;
      repeat: where the word after a content word starts, that content word's first piece again: the step that
              stutters.
    A piece None stands for EOS. Pairs whose piece is the reference's own piece at that position are left out."""
    spans = words(row, pieces)
    out = []
    for k in _content_words(row, pieces, spans, word_initial=True):
        a = spans[k][0]
        nxt = spans[k + 1][0] if k + 1 < len(spans) else len(row)  # len(row): the EOS position
        skip = row[nxt] if nxt < len(row) else None  # None: EOS
        if skip != row[a]:
            out.append((a, skip))
        if nxt == len(row) or row[nxt] != row[a]:
            out.append((nxt, row[a]))
    return out


def unlikelihood_loss(logits, targets, eos):
    """Mean of -log(1 - p(piece)) over the (row, position, piece) triples (a piece None stands for EOS); 0 without
    any. Only the selected positions are normalised."""
    if not targets:
        return logits.new_zeros(())
    t = torch.tensor([(r, p, eos if piece is None else piece) for r, p, piece in targets], device=logits.device)
    prob = F.softmax(logits[t[:, 0], t[:, 1]].float(), dim=-1).gather(-1, t[:, 2:]).squeeze(-1)  # (n,)
    return -torch.log((1.0 - prob).clamp_min(1e-6)).mean()
