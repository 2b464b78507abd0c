"""The three de->en translators, written so that each forward pass can be ported line by line to C++ (src/models).

Every model offers the same interface to training and decoding:
  forward(src, tgt_in) -> (logits (B,T,V), attentions dict)        teacher forcing
  encode(src)          -> enc (dict of tensors, batch first)
  init_state(enc)      -> decoder state before the first step
  step(enc, state, y_prev (N,)) -> (logits (N,V), new state, attn (N,S))   one decoding step
  select(enc_or_state, idx)     -> rows `idx` of every tensor (beam reordering)
Masks: source positions equal to <pad> (id 0) get score -inf before every softmax over source positions.

PyTorch cell conventions the C++ port must follow exactly (torch 1.13 docs):
  GRU  (gates r, z, n in that order in weight_ih/weight_hh/bias_ih/bias_hh, rows [0:H], [H:2H], [2H:3H]):
      r = sigmoid(W_ir x + b_ir + W_hr h + b_hr)
      z = sigmoid(W_iz x + b_iz + W_hz h + b_hz)
      n = tanh(W_in x + b_in + r * (W_hn h + b_hn))
      h' = (1 - z) * n + z * h
  LSTM (gates i, f, g, o in that order):
      i = sigmoid(W_ii x + b_ii + W_hi h + b_hi),  f = sigmoid(W_if x + b_if + W_hf h + b_hf)
      g = tanh(W_ig x + b_ig + W_hg h + b_hg),      o = sigmoid(W_io x + b_io + W_ho h + b_ho)
      c' = f * c + i * g,   h' = o * tanh(c')
  Linear: y = x W^T + b.   LayerNorm: (x - mean) / sqrt(var_biased + eps) * weight + bias, eps = 1e-5.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from common import PAD

NEG_INF = float("-inf")


def select_rows(obj, idx):
    if isinstance(obj, torch.Tensor):
        return obj.index_select(0, idx)
    if isinstance(obj, dict):
        return {k: select_rows(v, idx) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(select_rows(v, idx) for v in obj)
    return obj


def rnn_teacher_forced(model, src, tgt_in):
    """The RNN translators' forward: encode, then one decoder step per target position on the gold previous token;
    (logits [B, T, V], {"cross": alpha [B, T, S]})."""
    enc = model.encode(src)
    state = model.init_state(enc)
    logits, alphas = [], []
    for t in range(tgt_in.shape[1]):
        lg, state, a = model.step(enc, state, tgt_in[:, t])
        logits.append(lg)
        alphas.append(a)
    return torch.stack(logits, 1), {"cross": torch.stack(alphas, 1)}


# ====================================================================== Transformer (Vaswani et al. 2017)
def sinusoid_table(max_positions, d_model):
    """PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(pos / 10000^(2i/d)) (Vaswani 2017, sec. 3.5).
    Not a weight: the engine computes the same table (positions start at 0)."""
    pos = torch.arange(max_positions, dtype=torch.float64)[:, None]
    i2 = torch.arange(0, d_model, 2, dtype=torch.float64)[None, :]
    angle = pos / torch.pow(10000.0, i2 / d_model)
    pe = torch.zeros(max_positions, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe.float()


class MultiHeadAttention(nn.Module):
    """MultiHead(Q,K,V) = Concat(head_1..h) W_O, head_i = softmax(Q_i K_i^T / sqrt(d_h) + mask) V_i,
    with Q = x_q W_Q^T + b_Q, K = x_kv W_K^T + b_K, V = x_kv W_V^T + b_V split into h heads of d_h = d/h
    (head i = columns [i*d_h, (i+1)*d_h))."""

    def __init__(self, d_model, heads, dropout):
        super().__init__()
        assert d_model % heads == 0
        self.heads, self.d_head = heads, d_model // heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def split_heads(self, x):
        """(B,T,d) -> (B,h,T,d_h)"""
        b, t, _ = x.shape
        return x.view(b, t, self.heads, self.d_head).transpose(1, 2)

    def attend(self, q, k, v, keep):
        """q (B,h,Tq,d_h), k/v (B,h,Tk,d_h); keep: bool broadcastable to (B,Tq,Tk) or None (all allowed).
        Returns (out (B,Tq,d) after W_O, attn (B,h,Tq,Tk))."""
        b, _, tq, _ = q.shape
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.d_head)
        if keep is not None:
            scores = scores.masked_fill(~keep.unsqueeze(1), NEG_INF)
        attn = torch.softmax(scores, dim=-1)
        ctx = torch.matmul(self.dropout(attn), v).transpose(1, 2).reshape(b, tq, self.heads * self.d_head)
        return self.out_proj(ctx), attn

    def forward(self, x_q, x_kv, keep):
        """x_q (B,Tq,d), x_kv (B,Tk,d), keep: bool broadcastable to (B,Tq,Tk), True where attention is allowed."""
        return self.attend(self.split_heads(self.q_proj(x_q)), self.split_heads(self.k_proj(x_kv)),
                           self.split_heads(self.v_proj(x_kv)), keep)


class FeedForward(nn.Module):
    """FFN(x) = W_2 relu(W_1 x + b_1) + b_2."""

    def __init__(self, d_model, d_ff, dropout):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.linear2(self.dropout(F.relu(self.linear1(x))))


class EncoderLayer(nn.Module):
    """Pre-norm (Wang et al. 2019; Nguyen & Salazar 2019): x += SelfAttn(LN1(x)); x += FFN(LN2(x))."""

    def __init__(self, d_model, heads, d_ff, dropout):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.self_attn = MultiHeadAttention(d_model, heads, dropout)
        self.norm2 = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff, dropout)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, keep):
        h = self.norm1(x)
        a, attn = self.self_attn(h, h, keep)
        x = x + self.dropout(a)
        x = x + self.dropout(self.ffn(self.norm2(x)))
        return x, attn


class DecoderLayer(nn.Module):
    """Pre-norm: y += SelfAttn(LN1(y), causal); y += CrossAttn(LN2(y), memory); y += FFN(LN3(y))."""

    def __init__(self, d_model, heads, d_ff, dropout):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.self_attn = MultiHeadAttention(d_model, heads, dropout)
        self.norm2 = nn.LayerNorm(d_model)
        self.cross_attn = MultiHeadAttention(d_model, heads, dropout)
        self.norm3 = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff, dropout)
        self.dropout = nn.Dropout(dropout)

    def forward(self, y, memory, self_keep, cross_keep):
        h = self.norm1(y)
        a, self_attn = self.self_attn(h, h, self_keep)
        y = y + self.dropout(a)
        a, cross_attn = self.cross_attn(self.norm2(y), memory, cross_keep)
        y = y + self.dropout(a)
        y = y + self.dropout(self.ffn(self.norm3(y)))
        return y, self_attn, cross_attn


class TransformerSeq2Seq(nn.Module):
    """Encoder-decoder Transformer with ONE embedding matrix shared by source, target and the output projection
    (Press & Wolf 2017): x = embed[id] * sqrt(d) + PE[pos]; logits = LN_dec(y) embed^T (no output bias)."""

    architecture = "transformer-seq2seq"

    def __init__(self, vocab, d_model=256, heads=4, d_ff=512, enc_layers=3, dec_layers=3, dropout=0.1,
                 max_positions=256):
        super().__init__()
        self.cfg = dict(vocab_size=vocab, d_model=d_model, heads=heads, d_ff=d_ff, encoder_layers=enc_layers,
                        decoder_layers=dec_layers, dropout=dropout, max_positions=max_positions)
        self.d_model = d_model
        self.max_positions = max_positions
        self.embed = nn.Embedding(vocab, d_model, padding_idx=PAD)
        self.register_buffer("pe", sinusoid_table(max_positions, d_model), persistent=False)
        self.encoder_layers = nn.ModuleList(EncoderLayer(d_model, heads, d_ff, dropout) for _ in range(enc_layers))
        self.encoder_norm = nn.LayerNorm(d_model)
        self.decoder_layers = nn.ModuleList(DecoderLayer(d_model, heads, d_ff, dropout) for _ in range(dec_layers))
        self.decoder_norm = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.reset_parameters()

    def reset_parameters(self):
        for name, p in self.named_parameters():
            if p.dim() == 2 and name != "embed.weight":
                nn.init.xavier_uniform_(p)
            elif name.endswith("bias"):
                nn.init.zeros_(p)
        # Scaled by sqrt(d) on input, so N(0, d^-1/2) gives unit-variance inputs and sane initial logits.
        nn.init.normal_(self.embed.weight, 0.0, self.d_model ** -0.5)
        with torch.no_grad():
            self.embed.weight[PAD].zero_()

    def embed_tokens(self, ids, offset=0):
        x = self.embed(ids) * math.sqrt(self.d_model) + self.pe[offset:offset + ids.shape[1]]
        return self.dropout(x)

    def encode(self, src):
        keep = (src != PAD)[:, None, :]  # (B,1,S)
        x = self.embed_tokens(src)
        attns = []
        for layer in self.encoder_layers:
            x, a = layer(x, keep)
            attns.append(a)
        return {"memory": self.encoder_norm(x), "src_keep": keep, "encoder_self": attns}

    def decode(self, enc, tgt_in):
        t = tgt_in.shape[1]
        causal = torch.ones(t, t, dtype=torch.bool, device=tgt_in.device).tril()[None]  # (1,T,T)
        y = self.embed_tokens(tgt_in)
        self_attns, cross_attns = [], []
        for layer in self.decoder_layers:
            y, sa, ca = layer(y, enc["memory"], causal, enc["src_keep"])
            self_attns.append(sa)
            cross_attns.append(ca)
        logits = torch.matmul(self.decoder_norm(y), self.embed.weight.t())
        return logits, self_attns, cross_attns

    def forward(self, src, tgt_in):
        enc = self.encode(src)
        logits, sa, ca = self.decode(enc, tgt_in)
        return logits, {"encoder_self": enc["encoder_self"], "decoder_self": sa, "cross": ca}

    # Incremental decoding with a KV cache (what the engine does): the state holds, per decoder layer, the
    # self-attention keys/values of every earlier position and the cross-attention keys/values of the memory
    # (computed once). Causal masking makes this equal to re-running the decoder over the whole prefix.
    def init_state(self, enc):
        mem = enc["memory"]
        n = mem.shape[0]
        state = {"pos": 0, "self_k": [], "self_v": [], "cross_k": [], "cross_v": []}
        for layer in self.decoder_layers:
            ca = layer.cross_attn
            state["cross_k"].append(ca.split_heads(ca.k_proj(mem)))
            state["cross_v"].append(ca.split_heads(ca.v_proj(mem)))
            empty = mem.new_zeros(n, ca.heads, 0, ca.d_head)
            state["self_k"].append(empty)
            state["self_v"].append(empty)
        return state

    def step(self, enc, state, y_prev):
        pos = state["pos"]
        y = self.embed_tokens(y_prev[:, None], offset=pos)  # (N,1,d)
        new = {"pos": pos + 1, "self_k": [], "self_v": [], "cross_k": state["cross_k"], "cross_v": state["cross_v"]}
        cross_last = None
        for i, layer in enumerate(self.decoder_layers):
            sa, ca = layer.self_attn, layer.cross_attn
            h = layer.norm1(y)
            k = torch.cat([state["self_k"][i], sa.split_heads(sa.k_proj(h))], dim=2)
            v = torch.cat([state["self_v"][i], sa.split_heads(sa.v_proj(h))], dim=2)
            new["self_k"].append(k)
            new["self_v"].append(v)
            a, _ = sa.attend(sa.split_heads(sa.q_proj(h)), k, v, None)
            y = y + layer.dropout(a)
            a, attn = ca.attend(ca.split_heads(ca.q_proj(layer.norm2(y))), state["cross_k"][i],
                                state["cross_v"][i], enc["src_keep"])
            y = y + layer.dropout(a)
            y = y + layer.dropout(layer.ffn(layer.norm3(y)))
            cross_last = attn
        logits = torch.matmul(self.decoder_norm(y[:, 0]), self.embed.weight.t())
        # Coverage signal: last decoder layer's cross-attention of the new position, averaged over heads.
        return logits, new, cross_last[:, :, 0].mean(dim=1)

    select = staticmethod(select_rows)


def uniform_init(module, r):
    """OpenNMT-style initialisation: every LSTM and linear parameter (weights and biases) drawn from U(-r, r) instead
    of PyTorch's U(-1/sqrt(hidden), 1/sqrt(hidden)); embeddings and the output bias keep their own init. Training
    only: the architecture (and so the engine) is unchanged."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            if not name.startswith("embed.") and name != "out_bias":
                p.uniform_(-r, r)


# ====================================================================== RNN + additive attention (Bahdanau 2015)
def masked_softmax(scores, keep):
    return torch.softmax(scores.masked_fill(~keep, NEG_INF), dim=-1)


def run_birnn(rnn, emb, lengths):
    """Packed bidirectional RNN: the backward direction starts at each sentence's real last token, so padding
    never enters the states. Returns (outputs (B,S,2H) with zeros at padding, final states)."""
    packed = nn.utils.rnn.pack_padded_sequence(emb, lengths.cpu(), batch_first=True, enforce_sorted=False)
    out, final = rnn(packed)
    out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=emb.shape[1])
    return out, final


class RnnAdditive(nn.Module):
    """Bidirectional GRU encoder, GRU decoder, Bahdanau additive attention (Bahdanau, Cho & Bengio 2015, app. A).
    One embedding matrix E (joint BPE vocabulary) serves source, target and the output layer (Press & Wolf 2017):
      h_i = [GRU_fwd(E x)_i ; GRU_bwd(E x)_i]                  (B,S,2H)
      s_0 = tanh(W_init h<-_1 + b_init)                       h<-_1 = backward state at the first token
      e_ti = v^T tanh(W_q s_{t-1} + b_q + U h_i)               (U h_i precomputed once, no bias)
      a_t = softmax(e_t) over non-pad positions;  c_t = sum_i a_ti h_i
      s_t = GRUCell([E y_{t-1}; c_t], s_{t-1})
      o_t = tanh(W_r [s_t; c_t; E y_{t-1}] + b_r)              readout (deep output without maxout), dim = emb
      logits_t = o_t E^T + b_out
    """

    architecture = "rnn-seq2seq"

    def __init__(self, vocab, emb=256, hidden=256, dec_hidden=512, attn=512, dropout=0.3):
        super().__init__()
        self.cfg = dict(vocab_size=vocab, attention="additive", embedding_dim=emb, encoder_hidden=hidden,
                        encoder_cell="gru", decoder_cell="gru", decoder_hidden=dec_hidden, decoder_layers=1,
                        attention_dim=attn, input_feeding=False, dropout=dropout)
        self.embed = nn.Embedding(vocab, emb, padding_idx=PAD)
        self.encoder = nn.GRU(emb, hidden, batch_first=True, bidirectional=True)
        self.init_proj = nn.Linear(hidden, dec_hidden)
        self.attn_key = nn.Linear(2 * hidden, attn, bias=False)  # U
        self.attn_query = nn.Linear(dec_hidden, attn)            # W_q, b_q
        self.attn_v = nn.Linear(attn, 1, bias=False)              # v
        self.decoder = nn.GRUCell(emb + 2 * hidden, dec_hidden)
        self.readout = nn.Linear(dec_hidden + 2 * hidden + emb, emb)
        self.out_bias = nn.Parameter(torch.zeros(vocab))
        self.dropout = nn.Dropout(dropout)
        nn.init.normal_(self.embed.weight, 0.0, emb ** -0.5)
        with torch.no_grad():
            self.embed.weight[PAD].zero_()

    def encode(self, src):
        keep = src != PAD
        out, final = run_birnn(self.encoder, self.dropout(self.embed(src)), keep.sum(1))
        # final: (2,B,H); index 1 = backward direction, whose last state is the one at the first token.
        s0 = torch.tanh(self.init_proj(final[1]))
        return {"memory": out, "keys": self.attn_key(out), "src_keep": keep, "s0": s0}

    def init_state(self, enc):
        return enc["s0"]

    def step(self, enc, state, y_prev):
        e_y = self.dropout(self.embed(y_prev))
        scores = self.attn_v(torch.tanh(self.attn_query(state)[:, None, :] + enc["keys"])).squeeze(-1)
        alpha = masked_softmax(scores, enc["src_keep"])
        ctx = torch.bmm(alpha[:, None, :], enc["memory"]).squeeze(1)
        s = self.decoder(torch.cat([e_y, ctx], dim=-1), state)
        o = torch.tanh(self.readout(torch.cat([s, ctx, e_y], dim=-1)))
        return torch.matmul(self.dropout(o), self.embed.weight.t()) + self.out_bias, s, alpha

    forward = rnn_teacher_forced
    select = staticmethod(select_rows)


# ====================================================================== Luong global attention, general score
class RnnGeneral(nn.Module):
    """Bidirectional LSTM encoder, stacked LSTM decoder with input feeding, Luong global attention with the
    'general' score (Luong, Pham & Manning 2015, sec. 3.1 and 3.3). One embedding matrix E serves source, target
    and the output layer, so the attentional vector htilde has the embedding size:
      hbar_i = [LSTM_fwd(E x)_i ; LSTM_bwd(E x)_i]             (B,S,D), D = 2H = decoder hidden size
      (h_0, c_0) of every decoder layer = ([h_fwd_last; h_bwd_first], [c_fwd_last; c_bwd_first])
      x_t = [E y_{t-1}; htilde_{t-1}]      input feeding, htilde_0 = 0
      h_t = top layer of stacked LSTMCells(x_t)   (layer l > 0 takes layer l-1's new h)
      score(h_t, hbar_i) = h_t^T W_a hbar_i       (W_a hbar_i precomputed once, no bias)
      a_t = softmax(score) over non-pad positions;  c_t = sum_i a_ti hbar_i
      htilde_t = tanh(W_c [c_t; h_t])      (no bias), dim = emb
      logits_t = htilde_t E^T + b_out
    """

    architecture = "rnn-seq2seq"

    def __init__(self, vocab, emb=256, hidden=256, dec_layers=2, dropout=0.3, init_range=0.0):
        super().__init__()
        d = 2 * hidden
        self.cfg = dict(vocab_size=vocab, attention="general", embedding_dim=emb, encoder_hidden=hidden,
                        encoder_cell="lstm", decoder_cell="lstm", decoder_hidden=d, decoder_layers=dec_layers,
                        input_feeding=True, dropout=dropout)
        self.d, self.emb = d, emb
        self.embed = nn.Embedding(vocab, emb, padding_idx=PAD)
        self.encoder = nn.LSTM(emb, hidden, batch_first=True, bidirectional=True)
        self.decoder = nn.ModuleList(nn.LSTMCell((emb + emb) if i == 0 else d, d) for i in range(dec_layers))
        self.attn_w = nn.Linear(d, d, bias=False)            # W_a
        self.attn_combine = nn.Linear(2 * d, emb, bias=False)  # W_c over [c_t; h_t]
        self.out_bias = nn.Parameter(torch.zeros(vocab))
        self.dropout = nn.Dropout(dropout)
        if init_range > 0:
            uniform_init(self, init_range)
        nn.init.normal_(self.embed.weight, 0.0, emb ** -0.5)
        with torch.no_grad():
            self.embed.weight[PAD].zero_()

    def encode(self, src):
        keep = src != PAD
        out, (h, c) = run_birnn(self.encoder, self.dropout(self.embed(src)), keep.sum(1))
        h0 = torch.cat([h[0], h[1]], dim=-1)
        c0 = torch.cat([c[0], c[1]], dim=-1)
        return {"memory": out, "keys": self.attn_w(out), "src_keep": keep, "h0": h0, "c0": c0}

    def init_state(self, enc):
        n = enc["h0"].shape[0]
        layers = [(enc["h0"], enc["c0"]) for _ in self.decoder]
        return {"layers": layers, "feed": enc["h0"].new_zeros(n, self.emb)}

    def step(self, enc, state, y_prev):
        x = torch.cat([self.dropout(self.embed(y_prev)), state["feed"]], dim=-1)
        new_layers = []
        for i, cell in enumerate(self.decoder):
            h, c = cell(x, state["layers"][i])
            new_layers.append((h, c))
            x = self.dropout(h)  # dropout between layers only acts in training
        h_top = new_layers[-1][0]
        scores = torch.bmm(enc["keys"], h_top[:, :, None]).squeeze(-1)
        alpha = masked_softmax(scores, enc["src_keep"])
        ctx = torch.bmm(alpha[:, None, :], enc["memory"]).squeeze(1)
        htilde = torch.tanh(self.attn_combine(torch.cat([ctx, h_top], dim=-1)))
        logits = torch.matmul(self.dropout(htilde), self.embed.weight.t()) + self.out_bias
        return logits, {"layers": new_layers, "feed": htilde}, alpha

    forward = rnn_teacher_forced
    select = staticmethod(select_rows)


def build_model(kind, vocab, args):
    if kind == "transformer":
        return TransformerSeq2Seq(vocab, d_model=args.get("d_model", 256), heads=args.get("heads", 4),
                                  d_ff=args.get("d_ff", 512), enc_layers=args.get("layers", 3),
                                  dec_layers=args.get("layers", 3), dropout=args.get("dropout", 0.1))
    if kind == "rnn-additive":
        return RnnAdditive(vocab, emb=args.get("emb", 256), hidden=args.get("hidden", 256),
                           dec_hidden=args.get("dec_hidden", 512), attn=args.get("attn_dim", 512),
                           dropout=args.get("dropout", 0.3))
    if kind == "rnn-general":
        return RnnGeneral(vocab, emb=args.get("emb", 256), hidden=args.get("hidden", 256),
                          dec_layers=args.get("dec_layers", 2), dropout=args.get("dropout", 0.3),
                          init_range=args.get("init_range", 0.0))
    raise ValueError(f"unknown model kind {kind!r}")
