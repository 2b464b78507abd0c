"""Greedy and beam search, specified exactly so that the engine (src/decode) implements the same algorithm and
returns the same tokens.

Common rules
  * Decoding starts from y_0 = <s> (id 2); the source is bpe(src) + [</s>].
  * max_new_tokens(n) = max_len_a * n + max_len_b (defaults 2 and 10), n = number of source ids including the
    final </s>; never more than max_positions - 1 for the Transformer (positions 0..max_positions-1).
    A hypothesis that has not produced </s> after max_new_tokens tokens ends there, without </s>.
  * Scores are log-probabilities: log_softmax(logits) over the whole vocabulary, accumulated as float32 sums.

Greedy: y_t = argmax_w logits_t[w]; ties go to the lowest id. Stops at </s> (which is part of the output)
  or at max_new_tokens.

Beam search (width k), one sentence:
  alive = [(tokens=[], score=0, coverage=0)], finished = []
  for t = 1 .. max_new_tokens:
    cand[i, w] = alive[i].score + log p(w | alive[i])            (float32)
    walk the candidates by descending cand; equal values by ascending flat index i * V + w
      (i = row of alive, in the order alive was built; V = vocab size):
        if w == </s>:  finished.append(hyp_i + [w])              ; stop the walk when |finished| == n
        else:          next_alive.append(hyp_i + [w])            ; stop the walk when |next_alive| == k
      except at t == max_new_tokens, where every walked candidate goes to finished (</s> or not) until
      |finished| == n. The walk reads the 2k best candidates only; when it runs out first, the step keeps what it
      found (possible only with n > k).
    if |finished| >= n or t == max_new_tokens: stop;  alive = next_alive
  n = c * k finished hypotheses are collected (c = candidates_per_beam, 1 = the classic rule, the default).
  Final choice: the finished hypothesis with the highest normalised score, ties -> the earliest appended.
    normalised(h) = h.score / lp(|h|) + cp(h)
    lp(L) = ((5 + L) / 6) ** alpha        GNMT length penalty (Wu et al. 2016, eq. 14); L counts </s> if present
    cp(h) = beta * sum_i log(min(sum_t a_{t,i}, 1.0))   GNMT coverage penalty over the source positions i that are
            not padding, a_t = the attention of the step that produced token t (for the Transformer: the last
            decoder layer's cross-attention averaged over heads). beta = 0 disables it (default).
  The output is the chosen hypothesis' tokens including its final </s> if it has one.
"""
import torch
import torch.nn.functional as F

from common import BOS, EOS, PAD


def max_new_tokens(n_src, max_len_a=2, max_len_b=10, cap=None):
    m = int(max_len_a * n_src + max_len_b)
    return min(m, cap) if cap is not None else m


def _cap(model):
    mp = getattr(model, "max_positions", None)
    return mp - 1 if mp is not None else None


@torch.no_grad()
def greedy_batch(model, src, max_len_a=2, max_len_b=10):
    """Greedy decoding of a padded batch (B,S). Returns a list of id lists (</s> included when produced)."""
    model.eval()
    enc = model.encode(src)
    state = model.init_state(enc)
    n = src.shape[0]
    lengths = (src != PAD).sum(1).tolist()
    limits = [max_new_tokens(s, max_len_a, max_len_b, _cap(model)) for s in lengths]
    y = torch.full((n,), BOS, dtype=torch.long, device=src.device)
    out = [[] for _ in range(n)]
    done = [False] * n
    for t in range(max(limits)):
        logits, state, _ = model.step(enc, state, y)
        y = logits.argmax(-1)  # first maximum = lowest id on ties
        ys = y.tolist()
        for i in range(n):
            if done[i]:
                continue
            out[i].append(ys[i])
            if ys[i] == EOS or len(out[i]) >= limits[i]:
                done[i] = True
        if all(done):
            break
    return out


@torch.no_grad()
def beam_search(model, src_ids, beam=4, alpha=0.6, beta=0.0, max_len_a=2, max_len_b=10, return_details=False,
                candidates_per_beam=1):
    """Beam search for one sentence (src_ids: list of ids ending with </s>). Returns the chosen id list."""
    finished = beam_finished(model, src_ids, beam, max_len_a, max_len_b, candidates_per_beam)
    return choose_finished(finished, alpha, beta, return_details)


def choose_finished(finished, alpha=0.6, beta=0.0, return_details=False):
    """The final choice among finished hypotheses (alpha and beta act only here, so one search serves many)."""
    def normalised(h):
        tokens, score, cov = h
        lp = ((5.0 + len(tokens)) / 6.0) ** alpha
        value = score / lp
        if beta != 0.0:
            value += beta * float(torch.log(torch.clamp(cov, max=1.0)).sum())
        return value

    best, best_value = None, None
    for h in finished:
        v = normalised(h)
        if best is None or v > best_value:
            best, best_value = h, v
    if return_details:
        return best[0], {"score": best[1], "normalised": best_value, "finished": len(finished)}
    return best[0]


@torch.no_grad()
def beam_finished(model, src_ids, beam=4, max_len_a=2, max_len_b=10, candidates_per_beam=1):
    """The search itself: returns the finished hypotheses [(tokens, score, coverage)] in order of appending."""
    pool = beam * candidates_per_beam
    model.eval()
    src = torch.tensor([src_ids], dtype=torch.long)
    enc1 = model.encode(src)
    limit = max_new_tokens(len(src_ids), max_len_a, max_len_b, _cap(model))
    rows = torch.zeros(1, dtype=torch.long)
    enc = enc1
    state = model.init_state(enc1)
    alive_tokens = [[]]
    alive_scores = torch.zeros(1)
    alive_cov = torch.zeros(1, len(src_ids))
    y = torch.full((1,), BOS, dtype=torch.long)
    finished = []  # (tokens, score, coverage)
    for t in range(1, limit + 1):
        logits, state, attn = model.step(enc, state, y)
        logp = F.log_softmax(logits.float(), dim=-1)
        cov = alive_cov + attn
        cand = (alive_scores[:, None] + logp).reshape(-1)
        vocab = logp.shape[1]
        take = min(2 * beam, cand.numel())
        kth = torch.topk(cand, take).values[-1]
        idx = (cand >= kth).nonzero().squeeze(1)  # ascending flat index
        order = torch.sort(cand[idx], descending=True, stable=True).indices
        last = t == limit
        nxt_rows, nxt_tokens, nxt_scores = [], [], []
        for o in order.tolist():
            flat = int(idx[o])
            i, w = divmod(flat, vocab)
            score = float(cand[flat])
            if w == EOS or last:
                finished.append((alive_tokens[i] + [w], score, cov[i]))
                if len(finished) == pool:
                    break
            else:
                nxt_rows.append(i)
                nxt_tokens.append(alive_tokens[i] + [w])
                nxt_scores.append(score)
                if len(nxt_rows) == beam:
                    break
        if len(finished) >= pool or last or not nxt_rows:
            break
        sel = torch.tensor(nxt_rows, dtype=torch.long)
        rows = rows.index_select(0, sel)
        enc = model.select(enc1, rows)
        state = model.select(state, sel)
        alive_tokens = nxt_tokens
        alive_scores = torch.tensor(nxt_scores, dtype=torch.float32)
        alive_cov = cov.index_select(0, sel)
        y = torch.tensor([tk[-1] for tk in nxt_tokens], dtype=torch.long)
    return finished


def strip_specials(ids):
    """Drop the final </s> (and anything a model might emit after it) before detokenizing."""
    out = []
    for i in ids:
        if i == EOS:
            break
        out.append(i)
    return out
