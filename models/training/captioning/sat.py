"""Show, Attend and Tell soft-attention LSTM decoder (Xu et al. 2015, arXiv:1502.03044), written so that the C++
engine can port the forward pass line by line. Shared by the flickr8k-mobilenet and shapes captioners.

Notation (per image; the code is batched): a = grid features [L, D] (L = 49 cells of the 7x7 MobileNetV2 grid,
row-major y*7+x, D = 1280), E = word embedding, h/c = LSTM state [H].

  p     = a W_p^T + b_p                                   feat_proj          [L, P]   (P = proj_dim)
  mean  = (1/L) sum_i p_i                                                    [P]
  h_0   = tanh(W_ih0 mean + b), c_0 = tanh(W_ic0 mean + b) init_h, init_c     (SAT sec. 3.1.2, "f_init")
  keys  = p W_k^T + b_k                                   att_feat           [L, A]   (computed once per image)
For every step t = 1..T with previous word y_{t-1} (y_0 = <start>):
  e_ti  = w^T tanh(keys_i + W_q h_{t-1} + b_q) + b_w      att_hidden, att_score (f_att, additive; SAT eq. 4)
  (score_smooth = k > 0, a g x g grid: e_ti <- the mean of e_t over the cells of the k x k window centred on cell i
   that lie inside the grid; see smooth_scores)
  alpha = softmax_i(e_t)                                                     [L]      (SAT eq. 5)
  z     = sum_i alpha_i p_i                                                  [P]      (soft attention, eq. 6/13)
  beta  = sigmoid(w_b^T h_{t-1} + b_b)                    gate   (scalar)             (gating scalar, sec. 4.2.1)
  z~    = beta * z
  x     = concat(E[y_{t-1}], z~)                          embed              [M + P]
  LSTMCell (PyTorch gate order i, f, g, o; both biases added):
    g4  = W_ih x + b_ih + W_hh h_{t-1} + b_hh             lstm.weight_ih [4H, M+P], lstm.weight_hh [4H, H]
    i = sigmoid(g4[0:H]); f = sigmoid(g4[H:2H]); g = tanh(g4[2H:3H]); o = sigmoid(g4[3H:4H])
    c_t = f*c_{t-1} + i*g;  h_t = o*tanh(c_t)
  logits_t = W_o h_t + b_o                                fc                 [V]      (dropout on h_t in training)
With context="output" (config.json "decoder.context": "output"; the default "lstm" is the paper's model above),
the LSTM reads the words alone and the image reaches a word only through that word's own attention:
  h_t, c_t = LSTMCell(E[y_{t-1}], (h_{t-1}, c_{t-1}))    lstm.weight_ih [4H, M]
  e_ti  = w^T tanh(keys_i + W_q h_t + b_q) + b_w           the query is the state after the word (Luong et al.
                                                           2015's order), alpha, z as above
  beta  = sigmoid(w_b^T h_t + b_b)
  logits_t = W_o [h_t ; beta * z] + b_o                   fc [V, H + P]    (dropout on [h_t ; beta z])
Why: in the paper's model the LSTM carries what earlier steps saw, so a word can be said from memory while alpha
has already moved on (on the dev boxes the shipped model's alpha_{t-2} points at word t's object more often than
alpha_t). Here h_t never sees the image (h_0 and c_0 must be constants), so the only visual evidence for word t is
z_t: alpha_t is, by construction, where that word was read from.
Training loss (sec. 4.2.1): CE(logits, y_t) summed over real tokens / number of tokens
  + lambda * sum_i (1 - sum_t alpha_ti)^2 averaged over the batch (doubly stochastic regularisation, eq. 14).

The projection W_p (not in the paper) shrinks MobileNetV2's 1280 channels to P so that the bundle stays small and
CPU training is fast: it is fixed, not learned, set to the top-P principal components of the training grid
features (W_p = U^T, b_p = -U^T mu; see pca_projection), so training can read projected features precomputed once.
The attention context is taken over the projected features p.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

PAD, START, END, UNK = 0, 1, 2, 3
SPECIALS = ["<pad>", "<start>", "<end>", "<unk>"]


def smooth_scores(e, k):
    """e [B, L] attention scores over a g x g grid (L = g*g, row-major) -> each cell's score replaced by the mean of
    the scores in the k x k window centred on it, over the window's cells inside the grid (k odd). Moving every
    score by one constant moves every mean by it, so softmax(smooth_scores(e)) ignores the scorer's bias as
    softmax(e) does. Why: a peak of the attention then needs support from its neighbours, so α peaks
    on a region of high scores rather than on an isolated cell (dev-box pointing, MODEL_CARD)."""
    B, L = e.shape
    g = math.isqrt(L)
    assert g * g == L and k % 2 == 1, (L, k)
    return F.avg_pool2d(e.view(B, 1, g, g), k, stride=1, padding=k // 2, count_include_pad=False).view(B, L)


class ShowAttendTell(nn.Module):
    def __init__(self, vocab_size, feat_dim=1280, proj_dim=512, embed_dim=256, hidden_dim=512, att_dim=256,
                 dropout=0.5, score_smooth=0, context="lstm"):
        super().__init__()
        assert context in ("lstm", "output"), context
        self.vocab_size = vocab_size
        self.context = context  # "lstm": z_t is an LSTM input (the paper); "output": z_t goes to the output layer
        self.score_smooth = score_smooth  # k > 0: smooth_scores(e, k) before the softmax
        self.feat_proj = nn.Linear(feat_dim, proj_dim)
        self.feat_proj.requires_grad_(False)  # fixed PCA projection, see pca_projection()
        self.init_h = nn.Linear(proj_dim, hidden_dim)
        self.init_c = nn.Linear(proj_dim, hidden_dim)
        self.att_feat = nn.Linear(proj_dim, att_dim)
        self.att_hidden = nn.Linear(hidden_dim, att_dim)
        self.att_score = nn.Linear(att_dim, 1)
        self.gate = nn.Linear(hidden_dim, 1)
        self.embed = nn.Embedding(vocab_size, embed_dim)
        into_lstm = context == "lstm"
        self.lstm = nn.LSTMCell(embed_dim + (proj_dim if into_lstm else 0), hidden_dim)
        self.fc = nn.Linear(hidden_dim + (0 if into_lstm else proj_dim), vocab_size)
        self.drop = nn.Dropout(dropout)
        self.embed.weight.data.uniform_(-0.1, 0.1)
        self.fc.weight.data.uniform_(-0.1, 0.1)
        self.fc.bias.data.zero_()

    # ---- pieces of the forward pass, each one engine function ----
    def encode(self, feats):
        """feats [B, L, D] -> p [B, L, P], keys [B, L, A], h0, c0 [B, H]."""
        return self.encode_projected(self.feat_proj(feats))

    def encode_projected(self, p):
        mean = p.mean(dim=1)
        h = torch.tanh(self.init_h(mean))
        c = torch.tanh(self.init_c(mean))
        keys = self.att_feat(p)
        return p, keys, h, c

    def step(self, p, keys, h, c, prev_word):
        """One decoder step. Returns logits [B, V], alpha [B, L], beta [B, 1], new h, c."""
        if self.context == "output":
            h, c = self.lstm(self.embed(prev_word), (h, c))
            alpha, z, beta = self.attend(p, keys, h)
            logits = self.fc(self.drop(torch.cat([h, beta * z], dim=1)))
            return logits, alpha, beta, h, c
        alpha, z, beta = self.attend(p, keys, h)
        x = torch.cat([self.embed(prev_word), beta * z], dim=1)
        h, c = self.lstm(x, (h, c))
        logits = self.fc(self.drop(h))
        return logits, alpha, beta, h, c

    def attend(self, p, keys, h):
        """alpha [B, L], z [B, P] and beta [B, 1] for the query state h [B, H]."""
        e = self.att_score(torch.tanh(keys + self.att_hidden(h).unsqueeze(1))).squeeze(2)  # [B, L]
        if self.score_smooth:
            e = smooth_scores(e, self.score_smooth)
        alpha = torch.softmax(e, dim=1)
        z = torch.bmm(alpha.unsqueeze(1), p).squeeze(1)  # [B, P]
        beta = torch.sigmoid(self.gate(h))  # [B, 1]
        return alpha, z, beta

    def forward(self, proj_feats, captions):
        """Teacher forcing on projected features p [B, L, P] (feat_proj already applied).
        captions [B, T+1] = <start> w_1 .. w_n <end> <pad>...; returns logits [B, T, V] for targets
        captions[:, 1:] and alphas [B, T, L]."""
        p, keys, h, c = self.encode_projected(proj_feats)
        T = captions.size(1) - 1
        logits, alphas = [], []
        for t in range(T):
            lg, a, _, h, c = self.step(p, keys, h, c, captions[:, t])
            logits.append(lg)
            alphas.append(a)
        return torch.stack(logits, 1), torch.stack(alphas, 1)


@torch.no_grad()
def pca_projection(feats, dim, max_rows=20000, seed=0):
    """Top-`dim` principal directions of grid feature vectors. feats: float array [N, L, D]; a seeded sample of
    up to max_rows cell vectors is used. Returns (weight [dim, D], bias [dim]) with p = weight a + bias =
    U^T (a - mu). Each direction's sign is fixed so that its largest-magnitude entry is positive (determinism)."""
    import numpy as np
    rows = feats.reshape(-1, feats.shape[-1])
    rng = np.random.default_rng(seed)
    pick = np.sort(rng.choice(rows.shape[0], size=min(max_rows, rows.shape[0]), replace=False))
    x = torch.from_numpy(rows[pick].astype(np.float64))
    mu = x.mean(0)
    cov = (x - mu).T @ (x - mu) / (x.shape[0] - 1)
    evals, evecs = torch.linalg.eigh(cov)  # ascending
    u = evecs[:, -dim:].flip(1)  # [D, dim], largest variance first
    sign = torch.sign(u.gather(0, u.abs().argmax(0, keepdim=True)))
    u = u * sign
    explained = float(evals[-dim:].sum() / evals.sum())
    w = u.T.contiguous()
    return w.float(), (-(w @ mu)).float(), explained


def caption_loss(logits, alphas, captions, lam):
    """Cross entropy over real target tokens + lam * doubly stochastic penalty (SAT eq. 14)."""
    targets = captions[:, 1:]
    mask = (targets != PAD).float()
    ce = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1), ignore_index=PAD)
    att_sum = (alphas * mask.unsqueeze(2)).sum(dim=1)  # [B, L], only steps that predict a real token
    reg = ((1.0 - att_sum) ** 2).sum(dim=1).mean()
    return ce + lam * reg, ce, reg


@torch.no_grad()
def greedy_decode(model, feats, max_len=30, projected=False):
    """Batched greedy decoding. Returns per image: token ids (without <end>), alphas [T, L], logits [T, V],
    betas [T] (T includes the <end> step if one was produced)."""
    model.eval()
    B = feats.size(0)
    p, keys, h, c = model.encode_projected(feats) if projected else model.encode(feats)
    prev = torch.full((B,), START, dtype=torch.long)
    out = [[] for _ in range(B)]
    alphas = [[] for _ in range(B)]
    logits_all = [[] for _ in range(B)]
    betas = [[] for _ in range(B)]
    done = torch.zeros(B, dtype=torch.bool)
    for _ in range(max_len):
        lg, a, beta, h, c = model.step(p, keys, h, c, prev)
        nxt = lg.argmax(dim=1)
        for b in range(B):
            if done[b]:
                continue
            alphas[b].append(a[b])
            logits_all[b].append(lg[b])
            betas[b].append(float(beta[b, 0]))
            if int(nxt[b]) == END:
                done[b] = True
            else:
                out[b].append(int(nxt[b]))
        if bool(done.all()):
            break
        prev = nxt
    return [dict(tokens=out[b], alphas=torch.stack(alphas[b]), logits=torch.stack(logits_all[b]), betas=betas[b])
            for b in range(B)]


@torch.no_grad()
def forced_decode(model, feats1, words, projected=False):
    """Teacher forcing of a given caption for one image (feats1 [L, D]): words = token ids w_1..w_n (no <start> or
    <end>). Feeds <start>, w_1, ..., w_n; step t scores w_{t+1}, and the last step scores <end>, by log-softmax of
    its logits. Returns dict(alphas [n+1, L], betas [n+1], logprobs [n+1], score = sum of logprobs)."""
    model.eval()
    f = feats1.unsqueeze(0)
    p, keys, h, c = model.encode_projected(f) if projected else model.encode(f)
    prev = torch.tensor([START], dtype=torch.long)
    alphas, betas, logprobs = [], [], []
    for target in list(words) + [END]:
        lg, a, beta, h, c = model.step(p, keys, h, c, prev)
        logprobs.append(float(torch.log_softmax(lg, dim=1)[0, target]))
        alphas.append(a[0])
        betas.append(float(beta[0, 0]))
        prev = torch.tensor([target], dtype=torch.long)
    return dict(alphas=torch.stack(alphas), betas=betas, logprobs=logprobs, score=sum(logprobs))


@torch.no_grad()
def beam_decode(model, feats1, beam=3, max_len=30, length_norm=0.0, projected=False):
    """Beam search for one image (feats1 [L, D]).

    Each step extends every active hypothesis by every word and keeps the `beam` best extensions overall (score =
    sum of log-softmax of the logits; ties in torch.topk order over the flattened [active, V] scores). Kept
    extensions that end in <end> are finished and leave the active set, so fewer than `beam` hypotheses may stay
    active. The search stops when `beam` hypotheses have finished, none is active, or max_len steps are done.
    The result is the finished hypothesis with the best score / len^length_norm (len counts the <end> token;
    length_norm=0 is the plain sum); only when none finished does the best active hypothesis win.
    feats1 are raw grid features, or already projected ones when projected=True.
    Returns dict(tokens, alphas [T, L], score).
    """
    model.eval()
    f = feats1.unsqueeze(0)
    p, keys, h, c = model.encode_projected(f) if projected else model.encode(f)
    hyps = [dict(tokens=[], alphas=[], score=0.0, h=h[0], c=c[0])]
    finished = []
    for _ in range(max_len):
        logp, step_state = beam_step(model, p, keys, hyps)
        top_s, top_i = logp.view(-1).topk(beam)
        new = []
        for s, i in zip(top_s.tolist(), top_i.tolist()):
            src, w = divmod(i, model.vocab_size)
            hyp = extend(hyps, src, w, s, step_state)
            if w == END:
                finished.append(hyp)
            else:
                new.append(hyp)
        if len(finished) >= beam or not new:
            break
        hyps = new
    return best_caption(finished or hyps, length_norm)


def beam_step(model, p, keys, hyps):
    """One decoder step for every hypothesis (dicts with tokens, alphas, score, h, c): the scores of every extension
    [k, V] (the hypothesis' score + the word's log-softmax) and what extend() needs (alphas, new h, new c)."""
    k = len(hyps)
    H = torch.stack([x["h"] for x in hyps])
    C = torch.stack([x["c"] for x in hyps])
    prev = torch.tensor([x["tokens"][-1] if x["tokens"] else START for x in hyps], dtype=torch.long)
    lg, a, _, H2, C2 = model.step(p.expand(k, -1, -1), keys.expand(k, -1, -1), H, C, prev)
    return torch.log_softmax(lg, dim=1) + torch.tensor([x["score"] for x in hyps]).unsqueeze(1), (a, H2, C2)


def extend(hyps, src, w, score, step_state, **extra):
    """Hypothesis `src` extended by word w (step_state from beam_step); extra fields are added as given."""
    a, H2, C2 = step_state
    return dict(tokens=hyps[src]["tokens"] + [w], alphas=hyps[src]["alphas"] + [a[src]], score=score,
                h=H2[src], c=C2[src], **extra)


def best_caption(hyps, length_norm):
    """The hypothesis with the best score / len^length_norm (len counts <end>; 0: the plain sum) as
    dict(tokens without <end>, alphas [T, L], score)."""
    def norm(x):
        return x["score"] / (len(x["tokens"]) ** length_norm if length_norm else 1.0)

    best = max(hyps, key=norm)
    return dict(tokens=[t for t in best["tokens"] if t != END], alphas=torch.stack(best["alphas"]),
                score=best["score"])


def param_count(model):
    return sum(p.numel() for p in model.parameters())


def cosine_lr(step, total, base, warmup=200):
    if step < warmup:
        return base * (step + 1) / warmup
    return base * 0.5 * (1 + math.cos(math.pi * min(1.0, (step - warmup) / max(1, total - warmup))))


def load_checkpoint(path):
    """A train.py checkpoint as (decoder in eval mode, itos, the checkpoint dict)."""
    ck = torch.load(path)
    itos = ck["itos"]
    dec = ShowAttendTell(len(itos), **ck["hp"])
    dec.load_state_dict(ck["model"])
    dec.eval()
    return dec, itos, ck
