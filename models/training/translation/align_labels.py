"""Guided alignment (Garg et al. 2019, "Jointly Learning to Align and Translate with Transformer Models"): one
cross-attention head is trained to match word alignments of the training data (aligner.py).

  labels[row] = [(source position p, output position t), ...]   output position t predicts target piece t
  target distribution  G[t, :] = uniform over the source positions linked to t (rows without links are ignored)
  loss = - sum_t sum_p G[t, p] log A[t, p]  /  (number of output positions with a link)
where A is the supervised head's cross attention (B, T, S) of the chosen decoder layer.
"""
import json

import torch


def load_labels(path, origin, n_rows):
    """Per training row (general.load_general's order, Multi30k repeated) its piece links, or [] when unknown."""
    with open(path) as f:
        by_corpus = json.load(f)
    if origin is None:
        raise SystemExit("--align-labels needs --corpus general (labels are indexed by corpus sentence)")
    rows = [by_corpus[name][i] for name, i in origin]
    assert len(rows) == n_rows, (len(rows), n_rows)
    return rows


def alignment_loss(attn, label_rows):
    """attn (B, T, S) attention of the supervised head; label_rows: B lists of (p, t). Mean CE over linked t."""
    b, t_len, s_len = attn.shape
    index = [(r, t, p) for r, links in enumerate(label_rows) for p, t in links if p < s_len and t < t_len]
    target = torch.zeros(b, t_len, s_len)
    if index:
        r, t, p = torch.tensor(index, dtype=torch.long).unbind(1)
        target[r, t, p] = 1.0
    target = target.to(attn.device)
    mass = target.sum(-1, keepdim=True)
    linked = mass.squeeze(-1) > 0
    if not bool(linked.any()):
        return attn.sum() * 0.0
    target = target / mass.clamp(min=1.0)
    ce = -(target * torch.log(attn.clamp(min=1e-9))).sum(-1)  # (B, T)
    return ce[linked].mean()
