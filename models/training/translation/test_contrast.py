"""contrast.py on hand-made pieces (no data, no model): negatives remove whole words and never leave only
punctuation; the sequence log-probability and the hinge.

  /usr/bin/python3 models/training/translation/test_contrast.py
"""
import os
import random
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from contrast import (contrast_loss, loss_and_sequence_log_probs, negative, omission_negative,  # noqa: E402
                      repetition_negative, unlikelihood_loss, unlikelihood_targets, words)


def main():
    pieces = ["<pad>", "<s>", "</s>", "<unk>", "\u2581The", "\u2581dog", "\u2581run", "s", "\u2581in", "\u2581the",
              "\u2581park", "."]
    row = [4, 5, 6, 7, 8, 9, 10, 11]  # The dog runs in the park .
    assert words(row, pieces) == [(0, 1), (1, 2), (2, 4), (4, 5), (5, 6), (6, 7), (7, 8)]
    seen = set()
    for seed in range(200):
        neg = omission_negative(row, pieces, random.Random(seed))
        assert neg is not None and len(neg) < len(row)
        text = "".join(pieces[p] for p in neg)
        assert not text.startswith("s"), text  # never starts inside a word
        seen.add(text)
    assert "\u2581The\u2581runs\u2581in\u2581the\u2581park." in seen  # one content word ("dog") removed
    assert "\u2581The\u2581dog\u2581runs\u2581in\u2581the." in seen  # "park" removed
    assert all(t.endswith(".") for t in seen)  # the final punctuation stays
    assert all("s\u2581in" in t or "\u2581run" not in t for t in seen)  # "run"+"s" go together
    assert omission_negative([4, 11], pieces, random.Random(0)) is None  # no content word
    longer = set()
    for seed in range(200):
        neg = repetition_negative(row, pieces, random.Random(seed))
        longer.add("".join(pieces[p] for p in neg))
    assert "\u2581The\u2581dog\u2581dog\u2581runs\u2581in\u2581the\u2581park." in longer
    assert "\u2581The\u2581dog\u2581runs\u2581in\u2581the\u2581park\u2581dog." in longer
    assert "\u2581The\u2581dog\u2581runs\u2581runs\u2581in\u2581the\u2581park." in longer  # "run"+"s" copied whole
    assert all(t.endswith("park.") or t.endswith("park\u2581dog.") or t.endswith("park\u2581runs.")
               or t.endswith("park\u2581park.") for t in longer)  # inserted before the final punctuation
    shares = [len(negative(row, pieces, random.Random(seed), repeat_share=0.5)) > len(row) for seed in range(400)]
    assert 150 < sum(shares) < 250
    logits = torch.zeros(2, 3, 5)
    logits[:, :, 1] = 5.0
    tgt = torch.tensor([[1, 1, 0], [1, 0, 0]])
    _, lp = loss_and_sequence_log_probs(logits, tgt, 2, pad=0, label_smoothing=0.0)
    assert lp[1] > lp[0] > -1.0  # one piece fewer: higher log-probability
    loss, share = contrast_loss(lp[:1], lp[1:], margin=1.0)
    assert float(loss) > 1.0 and share == 1.0
    torch.manual_seed(0)  # the shared log-softmax equals cross_entropy and the per-row sums
    logits = torch.randn(5, 4, 7)
    tgt = torch.randint(1, 7, (5, 4))
    tgt[1, 2:] = 0
    tgt[4, 1:] = 0
    ce, lp = loss_and_sequence_log_probs(logits, tgt, 3, pad=0, label_smoothing=0.1)
    ref = F.cross_entropy(logits[:3].reshape(-1, 7), tgt[:3].reshape(-1), ignore_index=0, label_smoothing=0.1)
    assert abs(float(ce - ref)) < 1e-6, (float(ce), float(ref))
    token = F.log_softmax(logits, dim=-1).gather(-1, tgt.unsqueeze(-1)).squeeze(-1)
    assert torch.allclose(lp, (token * (tgt != 0)).sum(-1))
    # token-level unlikelihood: where "dog" starts, not "run" (the skip); where "runs" starts, not "dog" again
    assert unlikelihood_targets(row, pieces) == [(1, 6), (2, 5), (2, 8), (4, 6), (6, 11), (7, 10)]
    assert unlikelihood_targets([4, 5], pieces) == [(1, None), (2, 5)]  # "The dog": skipping "dog" is EOS
    assert unlikelihood_targets([5, 5, 11], pieces) == [(1, 11), (2, 5)]  # "dog dog .": no pair equals the reference
    logits = torch.zeros(1, 3, 4)
    logits[0, 1, 2] = 3.0  # p(piece 2 at position 1) = e^3 / (e^3 + 3)
    p2 = 1.0 / (1.0 + 3.0 * float(torch.exp(torch.tensor(-3.0))))
    ul = unlikelihood_loss(logits, [(0, 1, 2), (0, 0, None)], eos=3)  # position 0 is uniform: p(EOS) = 1/4
    want = (-torch.log(torch.tensor(1.0 - p2)) - torch.log(torch.tensor(0.75))) / 2
    assert abs(float(ul) - float(want)) < 1e-5, (float(ul), float(want))
    assert float(unlikelihood_loss(logits, [], eos=3)) == 0.0
    print("test_contrast.py: ok")


if __name__ == "__main__":
    main()
