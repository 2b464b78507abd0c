"""Pointer network that sorts numbers (Vinyals, Fortunato & Jaitly 2015, "Pointer Networks"), shared by train.py,
export.py and evaluate.py. The C++ port is src/models/pointer_net.{h,cpp}; every step below has its twin there.

Preprocessing (documented in the bundle's config.json, done identically in C++):
  values v_1..v_n: finite real numbers, 1 <= n <= max_length
  x_j = (v_j - min v) / (max v - min v)  in float64, then rounded to float32;  all x_j = 0 when max v == min v
  (when max v - min v overflows, both sides are halved first: x_j = (v_j/2 - min/2) / (max/2 - min/2))

Model (shapes for one list of n numbers; d = d_model, H = hidden, A = att_hidden):
  e = embed(x[:, None])                                   (n, d)    Linear(1, d)
  for each encoder layer (post-norm Transformer layer, no positional encoding: a set encoder):
    a, maps = MHA(e, e, e)                                (n, d), (heads, n, n)
    e = LN1(e + a);  e = LN2(e + W2 relu(W1 e + b1) + b2)
  decoder: LSTMCell(d, H), h = c = 0; step 0 reads the learned vector `start` (d), step i > 0 reads e[p_{i-1}]
  pointer at step i:  u_j = v^T tanh(W_k e_j + W_q h_i + b_q),  p_i = softmax(u over j not yet pointed)
  output position:    argmax_j p_i (lowest index on equal probabilities), then the first not-yet-pointed
                      position holding the same input value (equal numbers cannot be told apart; this keeps
                      their input order: a stable sort)
"""
import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from safetensors_io import read_safetensors, write_safetensors  # noqa: E402,F401

DEFAULT_CONFIG = dict(d_model=64, heads=4, d_ff=128, enc_layers=2, hidden=64, att_hidden=64, max_length=50)


def preprocess(values):
    """values: sequence of Python floats (finite) -> float32 numpy array x in [0, 1]."""
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1 or v.size == 0:
        raise ValueError("preprocess: expected a non-empty list of numbers")
    if not np.all(np.isfinite(v)):
        raise ValueError("preprocess: every number must be finite")
    lo, hi = float(v.min()), float(v.max())
    if hi == lo:
        return np.zeros(v.size, dtype=np.float32)
    span = hi - lo
    if math.isfinite(span):
        x = (v - lo) / span
    else:
        x = (v / 2 - lo / 2) / (hi / 2 - lo / 2)
    return x.astype(np.float32)


class EncoderLayer(nn.Module):
    def __init__(self, d, heads, d_ff):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, heads, dropout=0.0, batch_first=True)
        self.ln1 = nn.LayerNorm(d)
        self.ff1 = nn.Linear(d, d_ff)
        self.ff2 = nn.Linear(d_ff, d)
        self.ln2 = nn.LayerNorm(d)

    def forward(self, e, key_padding_mask=None):
        a, w = self.attn(e, e, e, key_padding_mask=key_padding_mask, need_weights=True,
                         average_attn_weights=False)
        e = self.ln1(e + a)
        e = self.ln2(e + self.ff2(F.relu(self.ff1(e))))
        return e, w


class PointerSorter(nn.Module):
    def __init__(self, d_model, heads, d_ff, enc_layers, hidden, att_hidden, **_):
        super().__init__()
        self.embed = nn.Linear(1, d_model)
        self.layers = nn.ModuleList([EncoderLayer(d_model, heads, d_ff) for _ in range(enc_layers)])
        self.start = nn.Parameter(torch.randn(d_model) * 0.1)
        self.decoder = nn.LSTMCell(d_model, hidden)
        self.ptr_k = nn.Linear(d_model, att_hidden, bias=False)  # W_k (keys: encoder states)
        self.ptr_q = nn.Linear(hidden, att_hidden)                 # W_q, b_q (query: decoder state)
        self.ptr_v = nn.Linear(att_hidden, 1, bias=False)          # v

    def encode(self, x, pad=None):
        """x (B, n) float, pad (B, n) bool True = padding or None -> e (B, n, d), [maps (B, heads, n, n)]."""
        e = self.embed(x.unsqueeze(-1))
        maps = []
        for layer in self.layers:
            e, w = layer(e, key_padding_mask=pad)
            maps.append(w)
        return e, maps

    def step_scores(self, keys_proj, h, visited):
        """keys_proj (B, n, A), h (B, H), visited (B, n) bool -> masked scores u (B, n)."""
        u = self.ptr_v(torch.tanh(keys_proj + self.ptr_q(h).unsqueeze(1))).squeeze(-1)
        return u.masked_fill(visited, float("-inf"))

    def decoder_start(self, e):
        """Decoding state before the first pointer step, from the encoder outputs e (B, n, H): the projected keys,
        zero LSTM state h, c, the learned start input, nothing visited, and the batch row indices."""
        b, n = e.shape[:2]
        h = e.new_zeros(b, self.decoder.hidden_size)
        return (self.ptr_k(e), h, torch.zeros_like(h), self.start.expand(b, -1),
                torch.zeros(b, n, dtype=torch.bool), torch.arange(b))

    def forward_teacher(self, x, target):
        """Training: x (B, n), target (B, n) long (a permutation per row) -> mean cross-entropy."""
        b, n = x.shape
        e, _ = self.encode(x)
        keys_proj, h, c, inp, visited, rows = self.decoder_start(e)
        loss = 0.0
        for i in range(n):
            h, c = self.decoder(inp, (h, c))
            u = self.step_scores(keys_proj, h, visited)
            loss = loss + F.cross_entropy(u, target[:, i])
            ptr = target[:, i]
            visited = visited.clone()
            visited[rows, ptr] = True
            inp = e[rows, ptr]
        return loss / n

    @torch.no_grad()
    def sort_batch(self, x, raw=None):
        """Greedy decoding of a batch of lists of one length: x (B, n) float32 -> order (B, n) long, probs
        (B, n, n). raw (B, n) float64 numpy: the original values, for the equal-value rule (default: x)."""
        b, n = x.shape
        raw = x.double().numpy() if raw is None else np.asarray(raw, dtype=np.float64)
        e, maps = self.encode(x)
        keys_proj, h, c, inp, visited, rows = self.decoder_start(e)
        order = torch.zeros(b, n, dtype=torch.long)
        probs = torch.zeros(b, n, n)
        for i in range(n):
            h, c = self.decoder(inp, (h, c))
            p = torch.softmax(self.step_scores(keys_proj, h, visited), dim=-1)
            probs[:, i] = p
            best = torch.argmax(p, dim=-1).numpy()  # first maximal index (torch documents this)
            # the first unvisited position holding the pointed value (best itself qualifies, so one always does)
            same = (raw == raw[np.arange(b), best][:, None]) & ~visited.numpy()
            ptr_t = torch.from_numpy(np.argmax(same, axis=1).astype(np.int64))
            order[:, i] = ptr_t
            visited = visited.clone()
            visited[rows, ptr_t] = True
            inp = e[rows, ptr_t]
        return order, probs, maps


def build_model(cfg):
    return PointerSorter(**cfg)


# ------------------------------------------------------------------------------------------------- data

DISTRIBUTIONS = ("uniform", "int100", "normal", "logspread", "ints_small")


def sample_values(rng, dist, b, n):
    """b lists of n raw values from one named distribution (float64)."""
    if dist == "uniform":        # the standard sorting benchmark: U[0, 1)
        return rng.random((b, n))
    if dist == "int100":         # integers 0..99: ties happen
        return rng.integers(0, 100, (b, n)).astype(np.float64)
    if dist == "ints_small":     # integers 0..k-1, k in 2..12: many ties
        k = rng.integers(2, 13, (b, 1))
        return np.floor(rng.random((b, n)) * k)
    if dist == "normal":
        return rng.normal(0, 1, (b, n)) * 10 ** rng.uniform(-2, 4, (b, 1))
    if dist == "logspread":      # magnitudes over six decades ("1 2 3 1000"): clustered after scaling
        return np.sign(rng.random((b, n)) - 0.2) * 10 ** rng.uniform(-3, 3, (b, n))
    raise ValueError(dist)


def batch(rng, b, n, dist):
    """-> x (B, n) float32 tensor, target (B, n) long tensor (stable argsort), raw values (B, n) float64."""
    raw = sample_values(rng, dist, b, n)
    x = np.stack([preprocess(r) for r in raw])
    target = np.argsort(raw, axis=1, kind="stable")
    return torch.from_numpy(x), torch.from_numpy(target), raw


def load_bundle(bundle_dir):
    import json
    with open(os.path.join(bundle_dir, "config.json")) as f:
        cfg = json.load(f)
    tensors, _ = read_safetensors(os.path.join(bundle_dir, cfg["weights"]))
    keys = {k: cfg[k] for k in DEFAULT_CONFIG}
    model = build_model(keys)
    state = {k: torch.from_numpy(v) for k, v in tensors.items()}
    model.load_state_dict(state, strict=True)
    model.eval()
    return model, cfg
