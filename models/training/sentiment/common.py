"""Shared pieces of the SST-2 sentiment recipes: data, vocabulary, the two models, safetensors I/O.

The two models are written so that their forward passes can be ported line by line to the C++ engine
(src/models): every step states its exact maths, shapes and masking in a comment.

Conventions used by both models (and by the bundle's config.json):
  * Input text is already tokenized (SST-2 is lowercased and PTB-tokenized); we split on single spaces.
  * Token ids: 0 = <pad>, 1 = <unk>, then the training vocabulary by descending count (ties: alphabetical).
  * One sentence at inference = no padding at all; padding only exists in training batches and is masked.
  * Labels: 0 = NEGATIVE, 1 = POSITIVE.
"""

import json
import os
import sys
from collections import Counter

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from safetensors_io import load_float32_state, read_safetensors, write_safetensors  # noqa: E402,F401  (models/training/)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sst2 import read_sst2_sentences  # noqa: E402

PAD, UNK = "<pad>", "<unk>"
PAD_ID, UNK_ID = 0, 1
LABELS = ["NEGATIVE", "POSITIVE"]
REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
DEFAULT_DATA_DIR = os.path.join(REPO_ROOT, "..", "shared", "data")


# ----------------------------------------------------------------------------------------------- data

def read_sst2(path):
    """Rows of `sentence<TAB>label` after a header line -> list of (tokens, label)."""
    return [(sentence.split(), label) for sentence, label in read_sst2_sentences(path)]


def build_vocab(rows, min_count):
    counts = Counter(tok for toks, _ in rows for tok in toks)
    words = sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w))
    return [PAD, UNK] + words


def encode(tokens, stoi):
    return [stoi.get(t, UNK_ID) for t in tokens]


def make_batches(encoded, batch_size, shuffle, generator=None):
    """Batches of similar length (less padding, less wasted LSTM work). encoded: list of (ids, label).

    Sort by length inside chunks of 50 batches, then shuffle the batch order: the usual bucketing trick."""
    idx = list(range(len(encoded)))
    if shuffle:
        idx = torch.randperm(len(encoded), generator=generator).tolist()
    chunk = batch_size * 50
    batches = []
    for s in range(0, len(idx), chunk):
        part = sorted(idx[s:s + chunk], key=lambda i: len(encoded[i][0]))
        batches += [part[b:b + batch_size] for b in range(0, len(part), batch_size)]
    if shuffle:
        order = torch.randperm(len(batches), generator=generator).tolist()
        batches = [batches[i] for i in order]
    return batches


def collate(encoded, batch):
    """-> ids (B, T) padded with PAD_ID, lengths (B,), labels (B,). Empty sentences become a single <unk>."""
    seqs = [encoded[i][0] or [UNK_ID] for i in batch]
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    ids = torch.full((len(seqs), int(lengths.max())), PAD_ID, dtype=torch.long)
    for r, s in enumerate(seqs):
        ids[r, :len(s)] = torch.tensor(s, dtype=torch.long)
    labels = torch.tensor([encoded[i][1] for i in batch], dtype=torch.long)
    return ids, lengths, labels


# --------------------------------------------------------------------------------------------- models

class SelfAttnClassifier(nn.Module):
    """BiLSTM + structured self-attention (Lin et al. 2017, "A Structured Self-attentive Sentence Embedding",
    arXiv:1703.03130), with its MLP classifier.

    Forward for one sentence of T tokens (no padding), E = emb_dim, u = lstm_hidden, r = hops:
      X = embedding[ids]                                    (T, E)
      H = BiLSTM(X) = [h_fwd ; h_bwd]                       (T, 2u)   one layer, zero initial states
          nn.LSTM cell, gate order i, f, g, o (PyTorch):
            z = W_ih x_t + b_ih + W_hh h_{t-1} + b_hh       (4u,) split as [i | f | g | o]
            i = σ(z_i), f = σ(z_f), g = tanh(z_g), o = σ(z_o)
            c_t = f ⊙ c_{t-1} + i ⊙ g,  h_t = o ⊙ tanh(c_t)
          forward direction: t = 0..T-1 with weights *_l0; backward: t = T-1..0 with weights *_l0_reverse
      A = softmax_over_T( W_s2 tanh(W_s1 Hᵀ) )              (r, T)    W_s1 (d_a, 2u), W_s2 (r, d_a), no biases
                                                                      (as in the paper, eq. 6)
      M = A H                                               (r, 2u)
      m = flatten(M) (row-major: hop 0 first)               (r·2u,)
      z = relu(W_fc m + b_fc)                               (mlp_hidden,)
      logits = W_out z + b_out                              (2,)      probabilities = softmax(logits)
    Training adds the penalty P = ‖A Aᵀ − I‖²_F (eq. 8) times a coefficient; dropout is training-only.
    """

    def __init__(self, vocab_size, emb_dim, lstm_hidden, att_hidden, hops, mlp_hidden, dropout=0.5,
                 emb_dropout=0.3):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=PAD_ID)
        self.lstm = nn.LSTM(emb_dim, lstm_hidden, num_layers=1, batch_first=True, bidirectional=True)
        self.ws1 = nn.Linear(2 * lstm_hidden, att_hidden, bias=False)
        self.ws2 = nn.Linear(att_hidden, hops, bias=False)
        self.fc = nn.Linear(hops * 2 * lstm_hidden, mlp_hidden)
        self.out = nn.Linear(mlp_hidden, 2)
        self.hops = hops
        self.drop = nn.Dropout(dropout)
        self.emb_drop = nn.Dropout(emb_dropout)

    def forward(self, ids, lengths, embedded=None):
        """ids (B, T) padded with PAD_ID, lengths (B,) -> logits (B, 2), attention A (B, r, T) (0 at padding).
        embedded (B, T, E), training only: used in place of embedding[ids] (adversarial training perturbs it)."""
        B, T = ids.shape
        x = self.emb_drop(self.embedding(ids) if embedded is None else embedded)    # (B, T, E)
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        h, _ = self.lstm(packed)
        h, _ = pad_packed_sequence(h, batch_first=True, total_length=T)              # (B, T, 2u)
        scores = self.ws2(torch.tanh(self.ws1(h))).transpose(1, 2)                   # (B, r, T)
        mask = torch.arange(T, device=ids.device)[None, :] < lengths[:, None]        # (B, T)
        scores = scores.masked_fill(~mask[:, None, :], float("-inf"))
        att = torch.softmax(scores, dim=2)                                           # (B, r, T)
        m = torch.bmm(att, h).reshape(B, -1)                                         # (B, r·2u)
        z = torch.relu(self.fc(self.drop(m)))
        logits = self.out(self.drop(z))
        return logits, att

    @staticmethod
    def penalty(att):
        """Lin et al. eq. 8: ‖A Aᵀ − I‖²_F per sentence, averaged over the batch."""
        eye = torch.eye(att.shape[1], device=att.device)[None]
        return ((torch.bmm(att, att.transpose(1, 2)) - eye) ** 2).sum(dim=(1, 2)).mean()


class RelationClassifier(nn.Module):
    """Relation-network self-attention over word pairs (seed 003: Kion Kim, "what is self-attention", the
    Gluon `Sentence_Representation`), with separate networks for pair features and pair attention.

    Forward for one sentence of T tokens (no padding), E = emb_dim, h = rel_hidden, d_a = att_hidden:
      X = embedding[ids]                                    (T, E)
      for every ordered pair (i, j), i, j in 0..T-1 (including i == j, as the seed does):
        p_ij = [x_i ; x_j]                                  (2E,)
        g_ij = relu(W_g2 relu(W_g1 p_ij + b_g1) + b_g2)     (h,)     feature network ("g_fc1", "g_fc2")
        s_ij = w_a2ᵀ tanh(W_a1 p_ij + b_a1) + b_a2          scalar   attention network
      α_ij = softmax_over_j( σ(s_ij) )                      (T, T)   seed: sigmoid, then softmax; row i sums to 1
      r_i = Σ_j α_ij g_ij                                   (h,)     representation of word i
      s = (1/T) Σ_i r_i                                     (h,)     sentence = mean over words
      z = relu(W_fc s + b_fc)                               (mlp_hidden,)
      logits = W_out z + b_out                              (2,)
    Implementation note: W_g1 p_ij = W_g1[:, :E] x_i + W_g1[:, E:] x_j (same for W_a1), so the first layers
    are computed per word and broadcast over pairs; the maths is exactly the concatenation above.
    The seed averages α·g over all T² pairs, i.e. our s divided by T; we drop that 1/T so long and short
    sentences give representations of the same scale.
    """

    def __init__(self, vocab_size, emb_dim, rel_hidden, att_hidden, mlp_hidden, dropout=0.5, emb_dropout=0.3):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=PAD_ID)
        self.g_fc1 = nn.Linear(2 * emb_dim, rel_hidden)
        self.g_fc2 = nn.Linear(rel_hidden, rel_hidden)
        self.att_fc1 = nn.Linear(2 * emb_dim, att_hidden)
        self.att_fc2 = nn.Linear(att_hidden, 1)
        self.fc = nn.Linear(rel_hidden, mlp_hidden)
        self.out = nn.Linear(mlp_hidden, 2)
        self.emb_dim = emb_dim
        self.drop = nn.Dropout(dropout)
        self.emb_drop = nn.Dropout(emb_dropout)

    def forward(self, ids, lengths, embedded=None):
        """ids (B, T), lengths (B,) -> logits (B, 2), attention α (B, T, T) (0 in padded rows/columns).
        embedded (B, T, E), training only: used in place of embedding[ids] (adversarial training perturbs it)."""
        B, T = ids.shape
        E = self.emb_dim
        x = self.emb_drop(self.embedding(ids) if embedded is None else embedded)    # (B, T, E)
        mask = torch.arange(T, device=ids.device)[None, :] < lengths[:, None]        # (B, T)
        # first layers split into the x_i half and the x_j half (see class comment)
        w1, b1 = self.g_fc1.weight, self.g_fc1.bias
        gi = x @ w1[:, :E].t() + b1                                                  # (B, T, h) term of x_i
        gj = x @ w1[:, E:].t()                                                       # (B, T, h) term of x_j
        g = torch.relu(gi[:, :, None, :] + gj[:, None, :, :])                        # (B, Ti, Tj, h)
        g = torch.relu(self.g_fc2(self.drop(g)))                                     # (B, Ti, Tj, h)
        a1, ab1 = self.att_fc1.weight, self.att_fc1.bias
        ai = x @ a1[:, :E].t() + ab1
        aj = x @ a1[:, E:].t()
        s = self.att_fc2(torch.tanh(ai[:, :, None, :] + aj[:, None, :, :]))[..., 0]  # (B, Ti, Tj)
        s = torch.sigmoid(s).masked_fill(~mask[:, None, :], float("-inf"))
        att = torch.softmax(s, dim=2) * mask[:, :, None]                             # (B, Ti, Tj)
        r = (att[..., None] * g).sum(dim=2)                                          # (B, Ti, h)
        sent = r.sum(dim=1) / lengths[:, None].to(r.dtype)                           # (B, h) mean over words
        z = torch.relu(self.fc(self.drop(sent)))
        logits = self.out(self.drop(z))
        return logits, att


def build_model(cfg):
    if cfg["architecture"] == "selfattn-classifier":
        return SelfAttnClassifier(cfg["vocab_size"], cfg["emb_dim"], cfg["lstm_hidden"], cfg["att_hidden"],
                                  cfg["hops"], cfg["mlp_hidden"])
    if cfg["architecture"] == "relation-classifier":
        return RelationClassifier(cfg["vocab_size"], cfg["emb_dim"], cfg["rel_hidden"], cfg["att_hidden"],
                                  cfg["mlp_hidden"])
    raise ValueError(f"unknown architecture {cfg['architecture']}")


@torch.no_grad()
def accuracy(model, encoded, batch_size=256):
    """Batched accuracy, on the device of the model's weights."""
    model.eval()
    device = next(model.parameters()).device
    correct = 0
    for batch in make_batches(encoded, batch_size, shuffle=False):
        ids, lengths, labels = collate(encoded, batch)
        logits, _ = model(ids.to(device), lengths.to(device))
        labels = labels.to(device)
        correct += int((logits.argmax(1) == labels).sum())
    return correct / len(encoded)


# ----------------------------------------------------------------------------------------- safetensors

# write_safetensors, read_safetensors: models/training/safetensors_io.py (re-exported above)


# ---------------------------------------------------------------------------------------------- bundles

def read_vocab(path):
    with open(path, encoding="utf-8") as f:
        vocab = f.read().split("\n")
    if vocab and vocab[-1] == "":
        vocab.pop()
    if vocab[:2] != [PAD, UNK]:
        raise ValueError(f"{path}: must start with {PAD}, {UNK}")
    return vocab


def load_bundle(bundle_dir):
    """Read models/<name>/ back into the PyTorch model (the export-side loader that verifies a bundle):
    config.json + weights.safetensors (F16 tensors are widened to F32, as the engine does) + vocabulary."""
    with open(os.path.join(bundle_dir, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    if cfg.get("format") != "attnlens-bundle" or cfg.get("version") != 1:
        raise ValueError(f"{bundle_dir}: not an attnlens bundle v1")
    vocab = read_vocab(os.path.join(bundle_dir, cfg["tokenizer"]["vocab"]))
    if len(vocab) != cfg["vocab_size"]:
        raise ValueError(f"{bundle_dir}: vocab has {len(vocab)} entries, config says {cfg['vocab_size']}")
    model = build_model(cfg)
    tensors, _ = read_safetensors(os.path.join(bundle_dir, cfg["weights"]))
    return cfg, vocab, load_float32_state(model, tensors, bundle_dir)
