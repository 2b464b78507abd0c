"""The two VQA models over the shapes scenes: hierarchical co-attention (Lu et al. 2016) and attention-over-attention
(Cui et al. 2017) over the same inputs. The C++ port is src/models/vqa.cpp; each line below has its twin there.

Inputs (batch b, question length T, the same T within a batch; N = 49 grid cells):
  grid  [b, N, 1285]   the shapes captioner's cells: MobileNetV2 1280 channels, mean RGB, centre xy
  ids   [b, T]         question word ids (questions.VOCAB)

Shared trunk:
  V   = tanh(grid W_regionᵀ + b_region)                       regions [b, N, d]
  Q_w = embedding[ids]                                         word level [b, T, d]
  Q_s = LSTM(Q_w)                                              question level [b, T, d] (one layer, forward)

Attention, once per level l ∈ {w, s} (separate weights per level), variant "coattn" (Lu 2016 eq. 3-4, parallel
co-attention, exactly the catalogue op parallel_co_attention):
  C_l   = tanh(Q_l W_b Vᵀ)                                     word × region affinity [b, T, N]
  H^v   = tanh(V W_vᵀ + C_lᵀ (Q_l W_qᵀ)),  H^q = tanh(Q_l W_qᵀ + C_l (V W_vᵀ))
  a^v_l = softmax_N(H^v w_hv)  (region attention),  a^q_l = softmax_T(H^q w_hq)  (word attention)
  v̂_l = a^v_l V,  q̂_l = a^q_l Q_l
variant "aoa" (Cui 2017 §3, the catalogue op attention_over_attention with the regions as the document):
  M_l   = V Q_lᵀ [b, N, T];  α = softmax over N (per word);  β = softmax over T (per region);  β̄ = mean_N β
  s_l   = α β̄  (region attention [b, N]),  word attention β̄_l [b, T]
  v̂_l = s_l V,  q̂_l = β̄_l Q_l

Count (both variants; a density readout of the question-level affinity, so that counts survive the softmax):
  coattn: m_n = Σ_t a^q_s,t relu(C_s[t, n]);   aoa: m_n = Σ_t β̄_s,t relu(tanh(M_s[n, t]))
  count = Σ_n m_n   (trained towards the number of counted objects: m towards each object's box-area share per cell)

Where the two levels look (position readout, `where=True`; relations need it): with pos_n the centre of cell n in
cell units (x = column + 0.5, y = row + 0.5, image y downwards),
  where = Σ_n a^v_s,n pos_n − Σ_n a^v_w,n pos_n      [b, 2]
The question level attends to the relation's subject A and the word level to A and B, so `where` points from B
towards A (about (pos_A − pos_B) / 2 cells): the answer network reads the relation off the attention maps
themselves. A small relation readout combines it with the question's words, the mean of their embeddings (the
attended words alone often miss the relation word: "is the square below the triangle ?" attends to "square"):
  r = tanh(W_r [where ; mean_t Q_w,t] + b_r)                  [b, R]
(In cell units `where` has a spread of about 1.5; in [-1, 1] coordinates, ~0.4, the readout stayed at chance in
training: the yes/no of a relation is an XOR of direction and relation word, which small inputs to tanh cannot
start to separate.)

Answer (Lu 2016 eq. 7 with two levels):
  h_w = tanh(W_w (q̂_w + v̂_w) + b_w)
  h_s = tanh(W_s [q̂_s + v̂_s ; h_w ; count] + b_s)
  logits = W_o [h_s ; r] + b_o  over questions.ANSWERS           (W_o h_s + b_o when where=False)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

import questions as Q

GRID_DIM = 1285
SIDE = 7


def cell_centres(side=SIDE):
    """[side², 2] cell centres (x, y) in cell units (column + 0.5, row + 0.5), row-major cells."""
    r, c = torch.meshgrid(torch.arange(side), torch.arange(side), indexing="ij")
    return torch.stack([c.reshape(-1) + 0.5, r.reshape(-1) + 0.5], 1).float()


class CoAttentionLevel(nn.Module):
    """Lu 2016 parallel co-attention, with the weight names of the catalogue op."""

    def __init__(self, d, k):
        super().__init__()
        self.w_b = nn.Parameter(torch.randn(d, d) * (1.0 / d ** 0.5))
        self.w_v = nn.Parameter(torch.randn(k, d) * (1.0 / d ** 0.5))
        self.w_q = nn.Parameter(torch.randn(k, d) * (1.0 / d ** 0.5))
        self.w_hv = nn.Parameter(torch.randn(k) * (1.0 / k ** 0.5))
        self.w_hq = nn.Parameter(torch.randn(k) * (1.0 / k ** 0.5))

    def forward(self, v, q):
        c = torch.tanh(q @ self.w_b @ v.transpose(1, 2))             # [b, T, N]
        vw, qw = v @ self.w_v.t(), q @ self.w_q.t()                   # [b, N, k], [b, T, k]
        hv = torch.tanh(vw + c.transpose(1, 2) @ qw)                  # [b, N, k]
        hq = torch.tanh(qw + c @ vw)                                  # [b, T, k]
        a_v = torch.softmax(hv @ self.w_hv, dim=1)                    # [b, N]
        a_q = torch.softmax(hq @ self.w_hq, dim=1)                    # [b, T]
        return dict(affinity=c, a_v=a_v, a_q=a_q)


def attention_over_attention(v, q):
    m = v @ q.transpose(1, 2)                                         # [b, N, T]
    alpha = torch.softmax(m, dim=1)
    beta = torch.softmax(m, dim=2)
    beta_avg = beta.mean(dim=1)                                       # [b, T]
    s = (alpha @ beta_avg.unsqueeze(2)).squeeze(2)                    # [b, N]
    return dict(matching=m, alpha=alpha, beta=beta, beta_avg=beta_avg, s=s)


class VQAModel(nn.Module):
    def __init__(self, variant, d=128, k=128, hidden=256, vocab=len(Q.VOCAB), answers=len(Q.ANSWERS),
                 region_in=GRID_DIM, where=True, relation_units=64):
        super().__init__()
        assert variant in ("coattn", "aoa")
        self.variant, self.d, self.k, self.hidden, self.where = variant, d, k, hidden, where
        self.register_buffer("centres", cell_centres(), persistent=False)
        self.region = nn.Linear(region_in, d)
        self.embedding = nn.Embedding(vocab, d)
        self.lstm = nn.LSTM(d, d, batch_first=True)
        if variant == "coattn":
            self.co_w, self.co_s = CoAttentionLevel(d, k), CoAttentionLevel(d, k)
        self.fc_w = nn.Linear(d, hidden)
        self.fc_s = nn.Linear(d + hidden + 1, hidden)
        self.relation = nn.Linear(2 + d, relation_units) if where else None
        self.out = nn.Linear(hidden + (relation_units if where else 0), answers)

    def forward(self, grid, ids, drop=0.0):
        v = torch.tanh(self.region(grid))                             # [b, N, d]
        if drop:
            v = F.dropout(v, drop, self.training)
        q_w = self.embedding(ids)                                     # [b, T, d]
        q_s, _ = self.lstm(q_w)                                       # [b, T, d]
        out = {}
        hats = []
        for level, q in (("w", q_w), ("s", q_s)):
            if self.variant == "coattn":
                r = (self.co_w if level == "w" else self.co_s)(v, q)
                region, words = r["a_v"], r["a_q"]
            else:
                r = attention_over_attention(v, q)
                region, words = r["s"], r["beta_avg"]
            for key, val in r.items():
                out["%s/%s" % (level, key)] = val
            out["%s/region" % level], out["%s/words" % level] = region, words
            hats.append(((region.unsqueeze(1) @ v).squeeze(1), (words.unsqueeze(1) @ q).squeeze(1)))
        if self.variant == "coattn":
            dens = (F.relu(out["s/affinity"]) * out["s/a_q"].unsqueeze(2)).sum(1)        # [b, N]
        else:
            dens = (F.relu(torch.tanh(out["s/matching"])) * out["s/beta_avg"].unsqueeze(1)).sum(2)
        count = dens.sum(1, keepdim=True)                             # [b, 1]
        (v_w, q_w_hat), (v_s, q_s_hat) = hats
        h_w = torch.tanh(self.fc_w(q_w_hat + v_w))
        h_s = torch.tanh(self.fc_s(torch.cat([q_s_hat + v_s, h_w, count], 1)))
        if self.where:
            where = out["s/region"] @ self.centres - out["w/region"] @ self.centres          # [b, 2]
            r = torch.tanh(self.relation(torch.cat([where, q_w.mean(1)], 1)))                # [b, R]
            out["where"], out["relation"] = where, r
            h_s = torch.cat([h_s, r], 1)
        out["density"], out["count"] = dens, count.squeeze(1)
        out["logits"] = self.out(h_s)
        return out
