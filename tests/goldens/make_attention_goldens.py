#!/usr/bin/python3
"""Writes tests/goldens/attention/<op>.json: PyTorch reference outputs for every op of the attention catalogue.

Run:  /usr/bin/python3 tests/goldens/make_attention_goldens.py
Deterministic (a fixed seed per op). The references are computed with torch functional ops / nn modules in
float64 from float32 inputs and stored as float32 (shortest repr that round-trips), in the format of
tests/goldens/README.md. C++ (tests/cpp/test_attention_golden.cpp) and the JS package tests read the same files.

Conventions for every file: all tensors (inputs, weights, outputs) are row-major float32 under "inputs" /
"outputs"; scalars and flags are under "params". Masks are float tensors of 0/1 with 1 = attend, 0 = masked
(the opposite of PyTorch's boolean masks). Indices (argmax, pointers, samples) are stored as floats. Linear weights
use PyTorch's [out, in] layout. A tensor named in brackets below is optional (absent in some cases).

op                          params                      inputs                                          outputs
score_dot                   -                           q [nq,d], keys [nk,d]                           scores [nq,nk]
score_scaled_dot            -                           q [nq,d], keys [nk,d]                           scores [nq,nk]
score_general               -                           q [nq,dq], w [dq,dk], keys [nk,dk]              scores [nq,nk]
score_additive              -                           q [nq,dq], keys [nk,dk], w [da,dq], u [da,dk],  scores [nq,nk],
                                                        [bias [da]], v [da]                             keys_proj [nk,da]
score_cosine                eps                         q [nq,d], keys [nk,d]                           scores [nq,nk]
score_location              -                           q [nq,dq], w_a [nk,dq]                          scores [nq,nk], weights [nq,nk]
align_soft                  causal (bool)               scores [nq,nk], [key_keep [nk]], [keep [nq,nk]] weights [nq,nk]
align_local_m               t, D                        scores [nk], [key_keep [nk]]                    weights [nk]
align_local_p               D                           q [dq], scores [nk], w_p [da,dq], v_p [da]      p [1], weights [nk]
                                                        (source length S = nk)
align_hard_argmax           -                           weights [n]                                     index [1], one_hot [n]
align_hard_sample           seed, draws                 weights [n]                                     samples [draws]
                            (SplitMix64(seed), one next_double() per draw, inverse CDF in float64)
key_value_attention         score ("dot"|"scaled_dot"), q [nq,dk], keys [nk,dk], values [nk,dv],        weights [nq,nk], context [nq,dv]
                            causal                      [key_keep [nk]]
multi_head_attention        num_heads, causal           query [nq,E], key [nk,E], value [nk,E],         out [nq,E], weights [H,nq,nk]
                                                        in_proj_weight [3E,E], [in_proj_bias [3E]],     (per head, not averaged)
                                                        out_proj_weight [E,E], [out_proj_bias [E]],
                                                        [key_keep [nk]], [keep [nq,nk]]
structured_self_attention   -                           h [T,dh], w_s1 [da,dh], w_s2 [r,da],            a [r,T], m [r,dh], penalty [1]
                                                        [key_keep [T]]
relation_self_attention     -                           x [T,d], w_f1 [df,2d], b_f1 [df], w_f2 [df,df], a [T,T], word [T,df], sentence [df]
                                                        b_f2 [df], then w_g [2d], b_g [1] (single-layer
                                                        score) or w_a1 [da,2d], b_a1 [da], w_a2 [da],
                                                        b_a2 [1] (MLP score, cases mlp_*)
co_attention_parallel       -                           v [N,d], q [T,d], w_b [d,d], w_v [k,d],         affinity [T,N], a_v [N], a_q [T],
                                                        w_q [k,d], w_hv [k], w_hq [k]                   v_hat [d], q_hat [d]
co_attention_max_pooled     -                           v [N,d], q [T,d], w_b [d,d]                     affinity [T,N], a_v [N], a_q [T],
                                                                                                        v_hat [d], q_hat [d]
co_attention_alternating    -                           v [N,d], q [T,d], w_x1 [k,d], w_hx1 [k],        a_s [T], s_hat [d], a_v [N], v_hat [d],
                                                        w_x2, w_g2 [k,d], w_hx2, w_x3, w_g3, w_hx3      a_q [T], q_hat [d]
attention_over_attention    -                           doc [n,d], query [m,d]                          matching [n,m], alpha [n,m], beta [n,m],
                                                                                                        beta_avg [m], s [n]
hierarchical_attention      sentence_lengths (list)     words [sum,d], w_word [da,d], b_word [da],      word_alpha [sum], sentence_vectors [L,d],
                                                        u_word [da], w_sent [da,d], b_sent [da],        sentence_alpha [L], document [d]
                                                        u_sent [da]
pointer_attention           -                           decoder [nq,dq], encoder [n,dk], w [da,dq]      probs [nq,n], pointers [nq]
                                                        (W_2), u [da,dk] (W_1), v [da], [key_keep [n]]
coverage_attention          -                           queries [T,dq], keys [nk,dk], w [da,dq],        weights [T,nk], coverage [nk]
                                                        u [da,dk], bias [da], v [da], w_c [da]
coverage_penalty            beta                        weights [T,S]                                   penalty [1]
position_weighted_memory    model (1-4), hop, b_att     embeddings [T,d], [locations [T]],              memory [T,d], alpha [T], out [d]
                                                        [location_vectors [T,d]], aspect [d], w_att [2d]
visual_soft_attention       b_beta                      features [N,da], h [dh], w [dt,dh], u [dt,da],  alpha [N], beta [1], context [da]
                                                        bias [dt], v [dt], w_beta [dh]
doubly_stochastic_penalty   lambda                      alphas [T,N]                                    penalty [1]
attention_rollout           residual                    maps [L,n,n] or [L,H,n,n]                       rollout [L,n,n]
attention_flow              residual                    maps [L,n,n] or [L,H,n,n]                       flow [n,n]
"""
import json
import math
import os

import numpy as np
import torch
import torch.nn.functional as F

torch.set_num_threads(2)
OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "attention")
GENERATOR = "tests/goldens/make_attention_goldens.py"
D = torch.float64


def tensor_json(t):
    a = np.asarray(t.detach().to(torch.float32).cpu().numpy(), dtype=np.float32)
    # repr of a numpy float32 is the shortest string that reads back to the same float32.
    return {"dims": list(a.shape), "data": [float(repr(x)) for x in a.reshape(-1)]}


class Op:
    def __init__(self, name, seed):
        self.name = name
        self.cases = []
        self.gen = torch.Generator().manual_seed(seed)

    def randn(self, *shape, scale=1.0):
        # float32 inputs (what the engine sees), promoted to float64 for the reference computation.
        return (torch.randn(*shape, generator=self.gen, dtype=torch.float32) * scale).to(D)

    def rand(self, *shape):
        return torch.rand(*shape, generator=self.gen, dtype=torch.float32).to(D)

    def add(self, name, params, inputs, outputs):
        self.cases.append({
            "name": name,
            "params": params,
            "inputs": {k: tensor_json(v) for k, v in inputs.items()},
            "outputs": {k: tensor_json(v) for k, v in outputs.items()},
        })

    def write(self):
        path = os.path.join(OUT_DIR, self.name + ".json")
        doc = {"op": self.name, "generator": GENERATOR, "torch": torch.__version__, "cases": self.cases}
        with open(path, "w") as f:
            json.dump(doc, f, separators=(",", ":"))
            f.write("\n")


def scalar(x):
    return torch.tensor([float(x)], dtype=D)


def masked_softmax(scores, keep, dim=-1):
    """softmax over positions where keep is true; keep is a bool tensor broadcastable to scores."""
    return torch.softmax(scores.masked_fill(~keep, float("-inf")), dim=dim)


# ---------------------------------------------------------------- scores
def gen_scores():
    op = Op("score_dot", 1)
    for nq, nk, d in [(1, 5, 4), (3, 7, 6), (2, 1, 3)]:
        q, k = op.randn(nq, d), op.randn(nk, d)
        op.add(f"nq{nq}_nk{nk}_d{d}", {}, {"q": q, "keys": k}, {"scores": q @ k.T})
    op.write()

    op = Op("score_scaled_dot", 2)
    for nq, nk, d in [(1, 5, 4), (3, 7, 16), (4, 4, 9)]:
        q, k = op.randn(nq, d), op.randn(nk, d)
        op.add(f"nq{nq}_nk{nk}_d{d}", {}, {"q": q, "keys": k}, {"scores": q @ k.T / math.sqrt(d)})
    op.write()

    op = Op("score_general", 3)
    for nq, nk, dq, dk in [(1, 5, 4, 4), (3, 6, 5, 3), (2, 4, 2, 7)]:
        q, k, w = op.randn(nq, dq), op.randn(nk, dk), op.randn(dq, dk, scale=0.5)
        # F.bilinear(x1, x2, A) = x1ᵀ A x2 for paired rows: pair every query with every key.
        x1 = q[:, None, :].expand(nq, nk, dq).reshape(-1, dq)
        x2 = k[None, :, :].expand(nq, nk, dk).reshape(-1, dk)
        s = F.bilinear(x1, x2, w[None]).reshape(nq, nk)
        op.add(f"nq{nq}_nk{nk}_dq{dq}_dk{dk}", {}, {"q": q, "w": w, "keys": k}, {"scores": s})
    op.write()

    op = Op("score_additive", 4)
    for nq, nk, dq, dk, da, bias in [(1, 5, 4, 6, 8, True), (3, 7, 5, 3, 4, False), (2, 1, 3, 3, 5, True)]:
        q, k = op.randn(nq, dq), op.randn(nk, dk)
        W = torch.nn.Linear(dq, da, bias=False).to(D)
        U = torch.nn.Linear(dk, da, bias=bias).to(D)
        V = torch.nn.Linear(da, 1, bias=False).to(D)
        with torch.no_grad():
            for lin in (W, U, V):
                lin.weight.copy_(op.randn(*lin.weight.shape, scale=0.6))
                if lin.bias is not None:
                    lin.bias.copy_(op.randn(*lin.bias.shape, scale=0.3))
            keys_proj = U(k)
            s = V(torch.tanh(W(q)[:, None, :] + keys_proj[None, :, :])).squeeze(-1)
        inputs = {"q": q, "keys": k, "w": W.weight, "u": U.weight, "v": V.weight.reshape(-1)}
        if bias:
            inputs["bias"] = U.bias
        op.add(f"nq{nq}_nk{nk}_da{da}{'_bias' if bias else ''}", {}, inputs,
               {"scores": s, "keys_proj": keys_proj})
    op.write()

    op = Op("score_cosine", 5)
    for nq, nk, d, eps, zero in [(1, 5, 4, 1e-8, False), (3, 6, 8, 1e-8, True), (2, 3, 3, 0.5, False)]:
        q, k = op.randn(nq, d), op.randn(nk, d)
        if zero:
            k[2] = 0.0  # a zero key scores 0, not NaN
        s = F.cosine_similarity(q[:, None, :], k[None, :, :], dim=-1, eps=eps)
        op.add(f"nq{nq}_nk{nk}_d{d}{'_zero' if zero else ''}_eps{eps:g}", {"eps": eps}, {"q": q, "keys": k},
               {"scores": s})
    op.write()

    op = Op("score_location", 6)
    for nq, nk, dq in [(1, 5, 4), (3, 8, 6)]:
        q, wa = op.randn(nq, dq), op.randn(nk, dq, scale=0.5)
        s = F.linear(q, wa)
        op.add(f"nq{nq}_nk{nk}_dq{dq}", {}, {"q": q, "w_a": wa}, {"scores": s, "weights": torch.softmax(s, -1)})
    op.write()


# ---------------------------------------------------------------- alignments
def gen_alignments():
    op = Op("align_soft", 10)
    cases = [("plain", 3, 6, False, False, False), ("padding", 3, 6, False, True, False),
             ("causal_square", 5, 5, True, False, False), ("causal_cached", 2, 6, True, False, False),
             ("causal_padding", 4, 4, True, True, False), ("full_mask", 3, 5, False, False, True)]
    for name, nq, nk, causal, pad, full in cases:
        s = op.randn(nq, nk, scale=2.0)
        keep = torch.ones(nq, nk, dtype=torch.bool)
        inputs = {"scores": s}
        if pad:
            kk = torch.ones(nk, dtype=torch.bool)
            kk[-1] = False
            kk[1] = False if nk > 4 else True
            keep &= kk[None, :]
            inputs["key_keep"] = kk.to(D)
        if full:
            full_keep = torch.tensor([[1, 0, 1, 1, 0], [0, 0, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=torch.bool)
            keep &= full_keep
            inputs["keep"] = full_keep.to(D)
        if causal:
            # query i is position (nk - nq + i): torch.triu of the "future" part
            future = torch.triu(torch.ones(nq, nk, dtype=torch.bool), diagonal=nk - nq + 1)
            keep &= ~future
        op.add(name, {"causal": causal}, inputs, {"weights": masked_softmax(s, keep)})
    op.write()

    op = Op("align_local_m", 11)
    for nk, t, dwin, pad in [(9, 4, 2, False), (9, 0, 2, False), (9, 8, 3, True), (5, 2, 0, False), (6, 3, 10, False)]:
        s = op.randn(nk, scale=2.0)
        pos = torch.arange(nk)
        keep = (pos - t).abs() <= dwin
        inputs = {"scores": s}
        if pad:
            kk = torch.ones(nk, dtype=torch.bool)
            kk[-1] = False
            keep &= kk
            inputs["key_keep"] = kk.to(D)
        op.add(f"nk{nk}_t{t}_D{dwin}{'_pad' if pad else ''}", {"t": t, "D": dwin}, inputs,
               {"weights": masked_softmax(s, keep)})
    op.write()

    op = Op("align_local_p", 12)
    made = 0
    while made < 4:
        nk, dq, da, dwin = [(10, 4, 6, 2), (7, 5, 3, 1), (12, 6, 8, 3), (6, 3, 4, 2)][made]
        q, s = op.randn(dq), op.randn(nk, scale=2.0)
        wp, vp = op.randn(da, dq), op.randn(da)
        p = nk * torch.sigmoid(vp @ torch.tanh(wp @ q))
        pos = torch.arange(nk, dtype=D)
        dist = (pos - p).abs()
        if ((dist - dwin).abs() < 1e-3).any():
            continue  # a position on the window edge would make the test depend on rounding: draw again
        keep = dist <= dwin
        sigma = dwin / 2.0
        weights = masked_softmax(s, keep) * torch.exp(-((pos - p) ** 2) / (2 * sigma * sigma))
        op.add(f"nk{nk}_D{dwin}", {"D": dwin}, {"q": q, "scores": s, "w_p": wp, "v_p": vp},
               {"p": p.reshape(1), "weights": weights})
        made += 1
    op.write()

    op = Op("align_hard_argmax", 13)
    for n in [1, 5, 9]:
        w = torch.softmax(op.randn(n, scale=2.0), 0)
        idx = int(torch.argmax(w))
        op.add(f"n{n}", {}, {"weights": w}, {"index": scalar(idx), "one_hot": F.one_hot(torch.tensor(idx), n).to(D)})
    op.write()

    op = Op("align_hard_sample", 14)
    for n, seed, draws, zero in [(5, 42, 64, False), (8, 7, 64, True), (1, 3, 4, False)]:
        w = torch.softmax(op.randn(n, scale=1.5), 0)
        if zero:
            w[3] = 0.0
        w32 = w.to(torch.float32).to(D)  # the engine samples from the float32 weights
        samples = sample_inverse_cdf(w32.numpy(), seed, draws)
        op.add(f"n{n}_seed{seed}{'_zero' if zero else ''}", {"seed": seed, "draws": draws}, {"weights": w32},
               {"samples": torch.tensor(samples, dtype=D)})
    op.write()


MASK64 = (1 << 64) - 1


def splitmix64_doubles(seed, count):
    """SplitMix64 (Steele, Lea, Flood 2014) as published, then the top 53 bits scaled by 2^-53."""
    state = seed & MASK64
    out = []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        z ^= z >> 31
        out.append((z >> 11) * (1.0 / 9007199254740992.0))
    return out


def sample_inverse_cdf(weights, seed, draws):
    cdf = np.cumsum(weights.astype(np.float64))
    return [int(np.searchsorted(cdf, u * cdf[-1], side="right")) for u in splitmix64_doubles(seed, draws)]


# ---------------------------------------------------------------- context, multi-head
def gen_context_and_heads():
    op = Op("key_value_attention", 20)
    for nq, nk, dk, dv, score, causal, pad in [(1, 6, 4, 3, "scaled_dot", False, False),
                                               (3, 5, 6, 2, "dot", False, True),
                                               (4, 4, 8, 5, "scaled_dot", True, False)]:
        q, k, v = op.randn(nq, dk), op.randn(nk, dk), op.randn(nk, dv)
        s = q @ k.T
        if score == "scaled_dot":
            s = s / math.sqrt(dk)
        keep = torch.ones(nq, nk, dtype=torch.bool)
        inputs = {"q": q, "keys": k, "values": v}
        if pad:
            kk = torch.tensor([1, 1, 0, 1, 0], dtype=torch.bool)
            keep &= kk
            inputs["key_keep"] = kk.to(D)
        if causal:
            keep &= ~torch.triu(torch.ones(nq, nk, dtype=torch.bool), diagonal=nk - nq + 1)
        a = masked_softmax(s, keep)
        op.add(f"nq{nq}_nk{nk}_{score}{'_causal' if causal else ''}{'_pad' if pad else ''}",
               {"score": score, "causal": causal}, inputs, {"weights": a, "context": a @ v})
    op.write()

    op = Op("multi_head_attention", 21)
    cases = [("self_causal", 5, 5, 8, 2, True, False, False, True),
             ("cross_padding", 3, 6, 8, 4, False, True, False, True),
             ("self_nobias", 4, 4, 6, 3, False, False, False, False),
             ("cross_full_mask", 3, 4, 4, 1, False, False, True, True),
             ("self_causal_h4", 6, 6, 12, 4, True, False, False, True)]
    for name, nq, nk, e, h, causal, pad, full, bias in cases:
        mha = torch.nn.MultiheadAttention(e, h, bias=bias, batch_first=True).to(D)
        with torch.no_grad():
            mha.in_proj_weight.copy_(op.randn(3 * e, e, scale=0.5))
            mha.out_proj.weight.copy_(op.randn(e, e, scale=0.5))
            if bias:
                mha.in_proj_bias.copy_(op.randn(3 * e, scale=0.2))
                mha.out_proj.bias.copy_(op.randn(e, scale=0.2))
        mha.eval()
        query = op.randn(nq, e)
        if name.startswith("self"):
            key = value = query
        else:
            key, value = op.randn(nk, e), op.randn(nk, e)
        kwargs = {}
        inputs = {"query": query, "key": key, "value": value, "in_proj_weight": mha.in_proj_weight,
                  "out_proj_weight": mha.out_proj.weight}
        if bias:
            inputs["in_proj_bias"] = mha.in_proj_bias
            inputs["out_proj_bias"] = mha.out_proj.bias
        if causal:
            kwargs["attn_mask"] = torch.triu(torch.ones(nq, nk, dtype=torch.bool), diagonal=1)
        if pad:
            kk = torch.tensor([1, 1, 1, 0, 1, 0], dtype=torch.bool)
            kwargs["key_padding_mask"] = ~kk[None, :]
            inputs["key_keep"] = kk.to(D)
        if full:
            keep = torch.tensor([[1, 0, 1, 1], [0, 1, 0, 0], [1, 1, 1, 0]], dtype=torch.bool)
            kwargs["attn_mask"] = ~keep
            inputs["keep"] = keep.to(D)
        with torch.no_grad():
            out, weights = mha(query[None], key[None], value[None], need_weights=True,
                               average_attn_weights=False, **kwargs)
        op.add(name, {"num_heads": h, "causal": causal}, inputs, {"out": out[0], "weights": weights[0]})
    op.write()


# ---------------------------------------------------------------- self-attention
def gen_self_attention():
    op = Op("structured_self_attention", 30)
    for t, dh, da, r, pad in [(6, 8, 5, 3, False), (7, 4, 6, 2, True), (1, 3, 2, 4, False)]:
        h, ws1, ws2 = op.randn(t, dh), op.randn(da, dh, scale=0.7), op.randn(r, da)
        logits = ws2 @ torch.tanh(ws1 @ h.T)  # [r, T]
        keep = torch.ones(r, t, dtype=torch.bool)
        inputs = {"h": h, "w_s1": ws1, "w_s2": ws2}
        if pad:
            kk = torch.ones(t, dtype=torch.bool)
            kk[-2:] = False
            keep &= kk
            inputs["key_keep"] = kk.to(D)
        a = masked_softmax(logits, keep)
        penalty = torch.linalg.matrix_norm(a @ a.T - torch.eye(r, dtype=D), ord="fro") ** 2
        op.add(f"T{t}_r{r}{'_pad' if pad else ''}", {}, inputs, {"a": a, "m": a @ h, "penalty": penalty.reshape(1)})
    op.write()

    op = Op("relation_self_attention", 31)
    for t, d, df in [(4, 3, 5), (6, 4, 3), (1, 2, 2)]:
        x = op.randn(t, d)
        f1, f2 = torch.nn.Linear(2 * d, df).to(D), torch.nn.Linear(df, df).to(D)
        g = torch.nn.Linear(2 * d, 1).to(D)
        with torch.no_grad():
            for lin in (f1, f2, g):
                lin.weight.copy_(op.randn(*lin.weight.shape, scale=0.7))
                lin.bias.copy_(op.randn(*lin.bias.shape, scale=0.3))
            # pairs[i, j] = [x_i ; x_j]
            pairs = torch.cat([x[:, None, :].expand(t, t, d), x[None, :, :].expand(t, t, d)], dim=-1)
            a = torch.softmax(torch.sigmoid(torch.tanh(g(pairs).squeeze(-1))), dim=1)  # [T, T], rows over j
            feats = F.relu(f2(F.relu(f1(pairs))))  # [T, T, df]
            word = torch.einsum("ij,ijf->if", a, feats)
            sentence = word.mean(0)
        op.add(f"T{t}_d{d}_df{df}", {},
               {"x": x, "w_f1": f1.weight, "b_f1": f1.bias, "w_f2": f2.weight, "b_f2": f2.bias,
                "w_g": g.weight.reshape(-1), "b_g": g.bias},
               {"a": a, "word": word, "sentence": sentence})
    # The MLP pair score (sst2-relation, models/training/sentiment/common.py): s = a2(tanh(a1(pairs))), no outer tanh.
    for t, d, df, da in [(5, 3, 4, 6), (3, 4, 3, 2), (1, 2, 2, 3)]:
        x = op.randn(t, d)
        f1, f2 = torch.nn.Linear(2 * d, df).to(D), torch.nn.Linear(df, df).to(D)
        a1, a2 = torch.nn.Linear(2 * d, da).to(D), torch.nn.Linear(da, 1).to(D)
        with torch.no_grad():
            for lin in (f1, f2, a1, a2):
                lin.weight.copy_(op.randn(*lin.weight.shape, scale=0.7))
                lin.bias.copy_(op.randn(*lin.bias.shape, scale=0.3))
            pairs = torch.cat([x[:, None, :].expand(t, t, d), x[None, :, :].expand(t, t, d)], dim=-1)
            a = torch.softmax(torch.sigmoid(a2(torch.tanh(a1(pairs))).squeeze(-1)), dim=1)
            feats = F.relu(f2(F.relu(f1(pairs))))
            word = torch.einsum("ij,ijf->if", a, feats)
            sentence = word.mean(0)
        op.add(f"mlp_T{t}_d{d}_df{df}_da{da}", {},
               {"x": x, "w_f1": f1.weight, "b_f1": f1.bias, "w_f2": f2.weight, "b_f2": f2.bias,
                "w_a1": a1.weight, "b_a1": a1.bias, "w_a2": a2.weight.reshape(-1), "b_a2": a2.bias},
               {"a": a, "word": word, "sentence": sentence})
    op.write()


# ---------------------------------------------------------------- co-attention, AoA, hierarchical
def gen_co_attention():
    op = Op("co_attention_parallel", 40)
    for n, t, d, k in [(5, 4, 6, 3), (9, 6, 4, 5), (1, 2, 3, 2)]:
        v, q = op.randn(n, d), op.randn(t, d)
        wb, wv, wq = op.randn(d, d, scale=0.4), op.randn(k, d, scale=0.5), op.randn(k, d, scale=0.5)
        whv, whq = op.randn(k), op.randn(k)
        # Lu 2016 eq. 3-4 in the paper's column convention: V ∈ R^{d×N}, Q ∈ R^{d×T}.
        Vc, Qc = v.T, q.T
        C = torch.tanh(Qc.T @ wb @ Vc)                      # [T, N]
        Hv = torch.tanh(wv @ Vc + (wq @ Qc) @ C)            # [k, N]
        Hq = torch.tanh(wq @ Qc + (wv @ Vc) @ C.T)          # [k, T]
        av = torch.softmax(whv @ Hv, 0)
        aq = torch.softmax(whq @ Hq, 0)
        op.add(f"N{n}_T{t}_d{d}_k{k}", {},
               {"v": v, "q": q, "w_b": wb, "w_v": wv, "w_q": wq, "w_hv": whv, "w_hq": whq},
               {"affinity": C, "a_v": av, "a_q": aq, "v_hat": Vc @ av, "q_hat": Qc @ aq})
    op.write()

    op = Op("co_attention_max_pooled", 44)
    for n, t, d in [(5, 4, 6), (7, 3, 4), (1, 1, 3)]:
        v, q, wb = op.randn(n, d), op.randn(t, d), op.randn(d, d, scale=0.6)
        C = torch.tanh(q @ wb @ v.T)  # [T, N]
        av = torch.softmax(C.max(dim=0).values, 0)  # pooled over question words, one value per region
        aq = torch.softmax(C.max(dim=1).values, 0)
        op.add(f"N{n}_T{t}_d{d}", {}, {"v": v, "q": q, "w_b": wb},
               {"affinity": C, "a_v": av, "a_q": aq, "v_hat": av @ v, "q_hat": aq @ q})
    op.write()

    op = Op("co_attention_alternating", 41)
    for n, t, d, k in [(5, 4, 6, 3), (8, 7, 4, 5)]:
        v, q = op.randn(n, d), op.randn(t, d)
        w = {}
        for s in (1, 2, 3):
            w[f"w_x{s}"] = op.randn(k, d, scale=0.5)
            if s > 1:
                w[f"w_g{s}"] = op.randn(k, d, scale=0.5)
            w[f"w_hx{s}"] = op.randn(k)

        def attend(X, g, s):  # Lu eq. 5 with X ∈ R^{d×n}
            H = torch.tanh(w[f"w_x{s}"] @ X + (0 if g is None else (w[f"w_g{s}"] @ g)[:, None]))
            a = torch.softmax(w[f"w_hx{s}"] @ H, 0)
            return a, X @ a

        a_s, s_hat = attend(q.T, None, 1)
        a_v, v_hat = attend(v.T, s_hat, 2)
        a_q, q_hat = attend(q.T, v_hat, 3)
        op.add(f"N{n}_T{t}_d{d}_k{k}", {}, dict(v=v, q=q, **w),
               {"a_s": a_s, "s_hat": s_hat, "a_v": a_v, "v_hat": v_hat, "a_q": a_q, "q_hat": q_hat})
    op.write()

    op = Op("attention_over_attention", 42)
    for n, m, d in [(7, 3, 4), (5, 5, 6), (1, 2, 3)]:
        doc, query = op.randn(n, d), op.randn(m, d)
        M = torch.bmm(doc[None], query[None].transpose(1, 2))[0]  # [n, m]
        alpha = torch.softmax(M, dim=0)
        beta = torch.softmax(M, dim=1)
        beta_avg = beta.mean(0)
        op.add(f"n{n}_m{m}_d{d}", {}, {"doc": doc, "query": query},
               {"matching": M, "alpha": alpha, "beta": beta, "beta_avg": beta_avg, "s": alpha @ beta_avg})
    op.write()

    op = Op("hierarchical_attention", 43)
    for lengths, d, da in [([3, 5, 2], 4, 6), ([4], 5, 3), ([1, 2, 6, 3], 3, 4)]:
        words = op.randn(sum(lengths), d)
        word_lin, sent_lin = torch.nn.Linear(d, da).to(D), torch.nn.Linear(d, da).to(D)
        with torch.no_grad():
            for lin in (word_lin, sent_lin):
                lin.weight.copy_(op.randn(da, d, scale=0.6))
                lin.bias.copy_(op.randn(da, scale=0.3))
            u_w, u_s = op.randn(da), op.randn(da)
            word_alpha, sent_vecs = [], []
            for chunk in torch.split(words, lengths):  # Yang eq. 5-7 per sentence
                a = torch.softmax(torch.tanh(word_lin(chunk)) @ u_w, 0)
                word_alpha.append(a)
                sent_vecs.append(a @ chunk)
            sent_vecs = torch.stack(sent_vecs)
            sent_alpha = torch.softmax(torch.tanh(sent_lin(sent_vecs)) @ u_s, 0)  # eq. 8-10
        op.add(f"L{len(lengths)}_d{d}_da{da}", {"sentence_lengths": lengths},
               {"words": words, "w_word": word_lin.weight, "b_word": word_lin.bias, "u_word": u_w,
                "w_sent": sent_lin.weight, "b_sent": sent_lin.bias, "u_sent": u_s},
               {"word_alpha": torch.cat(word_alpha), "sentence_vectors": sent_vecs, "sentence_alpha": sent_alpha,
                "document": sent_alpha @ sent_vecs})
    op.write()


# ---------------------------------------------------------------- pointer, coverage
def gen_pointer_coverage():
    op = Op("pointer_attention", 50)
    for nq, n, dq, dk, da, pad in [(3, 6, 4, 5, 6, False), (4, 5, 3, 3, 4, True)]:
        dec, enc = op.randn(nq, dq), op.randn(n, dk)
        w2, w1, v = op.randn(da, dq, scale=0.7), op.randn(da, dk, scale=0.7), op.randn(da)
        u = torch.tanh(F.linear(enc, w1)[None, :, :] + F.linear(dec, w2)[:, None, :]) @ v  # Vinyals eq. 3
        keep = torch.ones(nq, n, dtype=torch.bool)
        inputs = {"decoder": dec, "encoder": enc, "w": w2, "u": w1, "v": v}
        if pad:
            kk = torch.tensor([1, 0, 1, 1, 0], dtype=torch.bool)
            keep &= kk
            inputs["key_keep"] = kk.to(D)
        probs = masked_softmax(u, keep)
        op.add(f"nq{nq}_n{n}{'_pad' if pad else ''}", {}, inputs,
               {"probs": probs, "pointers": probs.argmax(-1).to(D)})
    op.write()

    op = Op("coverage_attention", 51)
    for t, nk, dq, dk, da in [(4, 6, 5, 4, 6), (6, 3, 3, 3, 4)]:
        queries, keys = op.randn(t, dq), op.randn(nk, dk)
        W, U = torch.nn.Linear(dq, da, bias=False).to(D), torch.nn.Linear(dk, da).to(D)
        with torch.no_grad():
            W.weight.copy_(op.randn(da, dq, scale=0.6))
            U.weight.copy_(op.randn(da, dk, scale=0.6))
            U.bias.copy_(op.randn(da, scale=0.3))
            v, wc = op.randn(da), op.randn(da)
            coverage = torch.zeros(nk, dtype=D)
            rows = []
            for i in range(t):  # Tu 2016 eq. 6, coverage = running sum of earlier weights
                e = torch.tanh(W(queries[i])[None, :] + U(keys) + coverage[:, None] * wc[None, :]) @ v
                a = torch.softmax(e, 0)
                rows.append(a)
                coverage = coverage + a
        op.add(f"T{t}_nk{nk}", {}, {"queries": queries, "keys": keys, "w": W.weight, "u": U.weight,
                                    "bias": U.bias, "v": v, "w_c": wc},
               {"weights": torch.stack(rows), "coverage": coverage})
    op.write()

    op = Op("coverage_penalty", 52)
    for t, s, beta, sharp in [(4, 5, 0.2, 1.0), (6, 4, 1.0, 4.0), (2, 7, 0.5, 3.0)]:
        w = torch.softmax(op.randn(t, s, scale=sharp), -1)
        w32 = w.to(torch.float32).to(D)
        penalty = beta * torch.log(torch.clamp(w32.sum(0), max=1.0)).sum()  # GNMT eq. 14
        op.add(f"T{t}_S{s}_beta{beta:g}", {"beta": beta}, {"weights": w32}, {"penalty": penalty.reshape(1)})
    op.write()


# ---------------------------------------------------------------- Tang memories, visual
def gen_tang_visual():
    op = Op("position_weighted_memory", 60)
    for model, t, d, hop in [(1, 6, 4, 1), (1, 5, 3, 3), (2, 6, 4, 1), (3, 5, 4, 1), (4, 7, 3, 1)]:
        e, aspect, w_att, b_att = op.randn(t, d), op.randn(d), op.randn(2 * d), float(op.randn(1)[0])
        inputs = {"embeddings": e, "aspect": aspect, "w_att": w_att}
        if model in (1, 2):
            aspect_at = 2
            L = (torch.arange(t) - aspect_at).abs().to(D)  # distance to the aspect word
            inputs["locations"] = L
            if model == 1:
                lk = (1 - L / t) - (hop / d) * (1 - 2 * L / t)  # eq. 10, one value per word at hop k
            else:
                lk = 1 - L / t  # eq. 11
            memory = e * lk[:, None]
        else:
            lv = op.randn(t, d)
            inputs["location_vectors"] = lv
            memory = e + lv if model == 3 else e * torch.sigmoid(lv)  # eq. 12 / 13
        g = torch.tanh(torch.cat([memory, aspect[None, :].expand(t, d)], -1) @ w_att + b_att)
        alpha = torch.softmax(g, 0)
        b_att32 = float(np.float32(b_att))
        op.add(f"model{model}_T{t}_d{d}_hop{hop}", {"model": model, "hop": hop, "b_att": b_att32}, inputs,
               {"memory": memory, "alpha": alpha, "out": alpha @ memory})
    op.write()

    op = Op("visual_soft_attention", 61)
    for n, da, dh, dt in [(9, 6, 5, 4), (16, 4, 3, 6), (1, 3, 2, 2)]:
        feats, h = op.randn(n, da), op.randn(dh)
        W, U = torch.nn.Linear(dh, dt, bias=False).to(D), torch.nn.Linear(da, dt).to(D)
        f_beta = torch.nn.Linear(dh, 1).to(D)
        with torch.no_grad():
            W.weight.copy_(op.randn(dt, dh, scale=0.6))
            U.weight.copy_(op.randn(dt, da, scale=0.6))
            U.bias.copy_(op.randn(dt, scale=0.3))
            v = op.randn(dt)
            f_beta.weight.copy_(op.randn(1, dh))
            f_beta.bias.copy_(op.randn(1).to(torch.float32).to(D))
            alpha = torch.softmax(torch.tanh(U(feats) + W(h)[None, :]) @ v, 0)
            beta = torch.sigmoid(f_beta(h))
            context = beta * (alpha @ feats)
        op.add(f"N{n}_da{da}_dh{dh}", {"b_beta": float(f_beta.bias[0])},
               {"features": feats, "h": h, "w": W.weight, "u": U.weight, "bias": U.bias, "v": v,
                "w_beta": f_beta.weight.reshape(-1)},
               {"alpha": alpha, "beta": beta, "context": context})
    op.write()

    op = Op("doubly_stochastic_penalty", 62)
    for t, n, lam in [(5, 9, 1.0), (3, 4, 0.5), (12, 6, 2.0)]:
        alphas = torch.softmax(op.randn(t, n, scale=2.0), -1).to(torch.float32).to(D)
        penalty = lam * ((1 - alphas.sum(0)) ** 2).sum()  # Xu 2015 eq. 14
        op.add(f"T{t}_N{n}_lambda{lam:g}", {"lambda": lam}, {"alphas": alphas}, {"penalty": penalty.reshape(1)})
    op.write()


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    gen_scores()
    gen_alignments()
    gen_context_and_heads()
    gen_self_attention()
    gen_co_attention()
    gen_pointer_coverage()
    gen_tang_visual()
    gen_rollout_flow()


# ---------------------------------------------------------------- analysis: rollout and flow (Abnar & Zuidema 2020)
def max_flow_dinic(cap, s, t):
    """Maximum flow value by Dinic's algorithm (level graph + blocking flows), float64, on a dense capacity matrix.
    Written independently of the engine's Edmonds-Karp: the value of a maximum flow is unique, the flows are not."""
    n = len(cap)
    res = [row[:] for row in cap]
    total = 0.0
    while True:
        level = [-1] * n
        level[s] = 0
        queue = [s]
        for u in queue:
            for v in range(n):
                if level[v] < 0 and res[u][v] > 1e-12:
                    level[v] = level[u] + 1
                    queue.append(v)
        if level[t] < 0:
            return total
        nxt = [0] * n

        def push(u, f):
            if u == t:
                return f
            while nxt[u] < n:
                v = nxt[u]
                if level[v] == level[u] + 1 and res[u][v] > 1e-12:
                    got = push(v, min(f, res[u][v]))
                    if got > 0:
                        res[u][v] -= got
                        res[v][u] += got
                        return got
                nxt[u] += 1
            return 0.0

        while True:
            f = push(s, float("inf"))
            if f <= 0:
                break
            total += f


def gen_rollout_flow():
    def layer_maps(maps):
        return maps.mean(1) if maps.dim() == 4 else maps

    def with_residual(a, r):
        return r * torch.eye(a.shape[-1], dtype=D) + (1 - r) * a

    def rollout(maps, r):
        out, cur = [], None
        for a in layer_maps(maps):
            a = with_residual(a, r)
            cur = a if cur is None else a @ cur
            out.append(cur)
        return torch.stack(out)

    def flow(maps, r):
        a = [with_residual(x, r) for x in layer_maps(maps)]
        layers, n = len(a), a[0].shape[0]
        nodes = (layers + 1) * n
        cap = [[0.0] * nodes for _ in range(nodes)]
        for l in range(1, layers + 1):
            for i in range(n):
                for j in range(n):
                    cap[(l - 1) * n + j][l * n + i] = float(a[l - 1][i, j])
        return torch.tensor([[max_flow_dinic(cap, j, layers * n + i) for j in range(n)] for i in range(n)], dtype=D)

    def random_maps(op, shape, causal=False):
        scores = op.randn(*shape, scale=2.0)
        if causal:
            n = shape[-1]
            scores = scores.masked_fill(~torch.tril(torch.ones(n, n, dtype=torch.bool)), float("-inf"))
        return torch.softmax(scores, -1)

    for name, seed, fn, out in (("attention_rollout", 60, rollout, "rollout"), ("attention_flow", 61, flow, "flow")):
        op = Op(name, seed)
        for label, shape, causal, r in [("l3_n5", (3, 5, 5), False, 0.5), ("l2_h4_n6", (2, 4, 6, 6), False, 0.5),
                                        ("l1_n3_r0", (1, 3, 3), False, 0.0), ("causal_l2_n5_r03", (2, 5, 5), True, 0.3),
                                        ("l4_n1", (4, 1, 1), False, 0.5)]:
            maps = random_maps(op, shape, causal)
            op.add(label, {"residual": r}, {"maps": maps}, {out: fn(maps, r)})
        op.write()


if __name__ == "__main__":
    main()
