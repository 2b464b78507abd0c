"""Checks of the recipe's building blocks (seconds of CPU, no dataset needed):
  /usr/bin/python3 models/training/sentiment/test_common.py
"""

import json
import os
import sys
import tempfile
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import export  # noqa: E402
import train  # noqa: E402
from word_vectors import ptb_like_tokens  # noqa: E402

SMALL = {
    "selfattn-classifier": dict(architecture="selfattn-classifier", vocab_size=40, emb_dim=6, lstm_hidden=5,
                                att_hidden=4, hops=3, mlp_hidden=7),
    "relation-classifier": dict(architecture="relation-classifier", vocab_size=40, emb_dim=6, rel_hidden=5,
                                att_hidden=4, mlp_hidden=7),
}


def test_padding_does_not_change_outputs():
    # a sentence alone and the same sentence padded inside a batch must give the same logits and attention
    for cfg in SMALL.values():
        torch.manual_seed(0)
        model = common.build_model(cfg).eval()
        ids = torch.tensor([[5, 6, 7, 8, 9], [10, 11, 12, 0, 0]])
        lengths = torch.tensor([5, 3])
        with torch.no_grad():
            logits, att = model(ids, lengths)
            alone, att_alone = model(ids[1:, :3], lengths[1:])
        assert torch.allclose(logits[1], alone[0], atol=1e-6), cfg["architecture"]
        if cfg["architecture"] == "selfattn-classifier":
            assert torch.allclose(att[1, :, :3], att_alone[0], atol=1e-6)
            assert float(att[1, :, 3:].abs().max()) == 0.0
        else:
            assert torch.allclose(att[1, :3, :3], att_alone[0], atol=1e-6)
            assert float(att[1, 3:].abs().max()) == 0.0 and float(att[1, :, 3:].abs().max()) == 0.0


def test_attention_rows_sum_to_one():
    for cfg in SMALL.values():
        torch.manual_seed(1)
        model = common.build_model(cfg).eval()
        with torch.no_grad():
            _, att = model(torch.tensor([[3, 4, 5, 6]]), torch.tensor([4]))
        assert torch.allclose(att.sum(-1), torch.ones_like(att.sum(-1)), atol=1e-6)


def test_relation_attention_is_sigmoid_then_softmax():
    # α_ij = softmax_j(σ(s_ij)) with σ ∈ (0, 1): within a row, max/min ≤ e
    torch.manual_seed(2)
    model = common.build_model(SMALL["relation-classifier"]).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(20)  # large scores: the bound must still hold
        _, att = model(torch.tensor([[3, 4, 5, 6, 7]]), torch.tensor([5]))
    ratio = att[0].max(dim=1).values / att[0].min(dim=1).values
    assert float(ratio.max()) <= np.e + 1e-5


def test_penalty_matches_definition():
    a = torch.tensor([[[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]]])
    # A Aᵀ = [[0.5, 0], [0, 1]] -> ‖AAᵀ − I‖²_F = 0.25
    assert abs(float(common.SelfAttnClassifier.penalty(a)) - 0.25) < 1e-7


def test_explicit_forward_matches_model():
    for cfg, fn in [(SMALL["selfattn-classifier"], export.explicit_selfattn),
                    (SMALL["relation-classifier"], export.explicit_relation)]:
        torch.manual_seed(3)
        model = common.build_model(cfg).eval()
        ids = [4, 9, 1, 17, 2, 33]
        with torch.no_grad():
            logits, att = model(torch.tensor([ids]), torch.tensor([len(ids)]))
        e_logits, e_att, _ = fn(model, torch.tensor(ids))
        assert float((logits[0].double() - e_logits).abs().max()) < 1e-5
        assert float((att[0].double() - e_att).abs().max()) < 1e-5


def test_safetensors_round_trip_and_layout():
    tensors = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.array([1.5, -2], dtype=np.float16)}
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "w.safetensors")
        common.write_safetensors(path, tensors)
        raw = open(path, "rb").read()
        hlen = int.from_bytes(raw[:8], "little")
        assert (8 + hlen) % 8 == 0 and len(raw) == 8 + hlen + 24 + 4
        back, _ = common.read_safetensors(path)
    for k, v in tensors.items():
        assert back[k].dtype == v.dtype and np.array_equal(back[k], v)


def test_ptb_like_tokens():
    assert ptb_like_tokens("I don't think it's GOOD, can't you see?") == \
        ["i", "do", "n't", "think", "it", "'s", "good", ",", "ca", "n't", "you", "see", "?"]


def test_vocab_order_and_specials():
    rows = [("b a a".split(), 1), ("c b a".split(), 0)]
    assert common.build_vocab(rows, 1) == ["<pad>", "<unk>", "a", "b", "c"]
    assert common.build_vocab(rows, 2) == ["<pad>", "<unk>", "a", "b"]
    assert common.encode(["a", "zzz"], {"a": 2}) == [2, common.UNK_ID]


def test_lr_schedule():
    f = train.lr_factor
    assert f(0, 4, "cosine", 0.0) == 0.25 and f(3, 4, "cosine", 0.0) == 1.0  # linear warm-up
    assert f(4, 4, "constant", 0.5) == 1.0 and f(99, 0, "constant", 1.0) == 1.0
    assert abs(f(50, 0, "cosine", 0.5) - 0.5) < 1e-12 and f(0, 0, "cosine-time", 0.0) == 1.0
    assert f(100, 0, "cosine", 1.0) == 0.0 and f(150, 0, "cosine-time", 1.5) == 0.0  # stays at 0 past the end
    steps = [f(s, 0, "cosine", s / 100) for s in range(101)]
    assert all(a >= b for a, b in zip(steps, steps[1:]))


def test_ema_update():
    ema = {"w": torch.zeros(3), "n": torch.tensor([7])}
    train.ema_update(ema, {"w": torch.ones(3), "n": torch.tensor([9])}, 0.999, 0)
    assert torch.allclose(ema["w"], torch.full((3,), 0.9))  # d = min(0.999, 1/10): mostly the new weights
    assert int(ema["n"]) == 7  # integer buffers are not averaged
    ema = {"w": torch.zeros(3)}
    train.ema_update(ema, {"w": torch.ones(3)}, 0.5, 10 ** 6)
    assert torch.allclose(ema["w"], torch.full((3,), 0.5))  # d = decay once the step is large


def test_clip_gradients_sparse_matches_dense():
    # the same gradients, once dense and once sparse with a repeated row: same norm, same clipped values
    torch.manual_seed(0)
    w = torch.randn(6, 3)
    idx = torch.tensor([[1, 4, 1]])
    vals = torch.randn(3, 3) * 10
    dense, sparse = torch.zeros(6, 3, requires_grad=True), torch.zeros(6, 3, requires_grad=True)
    dense.grad = torch.sparse_coo_tensor(idx, vals, (6, 3)).to_dense()
    sparse.grad = torch.sparse_coo_tensor(idx, vals, (6, 3))
    other_d, other_s = w.clone().requires_grad_(), w.clone().requires_grad_()
    other_d.grad, other_s.grad = torch.ones(6, 3), torch.ones(6, 3)
    n_dense = train.clip_gradients([dense, other_d], 5.0)
    n_sparse = train.clip_gradients([sparse, other_s], 5.0)
    assert abs(float(n_dense) - float(n_sparse)) < 1e-4 and float(n_dense) > 5.0
    assert torch.allclose(sparse.grad.to_dense(), dense.grad, atol=1e-6)
    assert torch.allclose(other_s.grad, other_d.grad, atol=1e-6)
    assert float(torch.sqrt((dense.grad ** 2).sum() + (other_d.grad ** 2).sum())) < 5.0 + 1e-3


def test_distill_loss():
    torch.manual_seed(4)
    logits, labels = torch.randn(5, 2) * 3, torch.tensor([0, 1, 1, 0, 1])
    teacher = torch.softmax(torch.randn(5, 2) * 2, dim=-1)
    ce = torch.nn.functional.cross_entropy(logits, labels)
    for t in (1.0, 2.0, 4.0):
        assert torch.allclose(train.distill_loss(logits, labels, teacher, 1.0, t), ce)  # α = 1: the gold CE only
    # α = 0: T²·KL(teacher ‖ student at T), 0 exactly when the student's tempered distribution is the teacher's,
    # positive and with a non-zero gradient anywhere else
    t = 2.0
    matched = (t * torch.log(teacher) + 0.7).requires_grad_()  # softmax(matched / T) = teacher
    loss = train.distill_loss(matched, labels, teacher, 0.0, t)
    loss.backward()
    assert abs(float(loss)) < 1e-6 and float(matched.grad.abs().max()) < 1e-6
    for _ in range(5):
        moved = matched.detach() + torch.randn(5, 2)
        assert float(train.distill_loss(moved, labels, teacher, 0.0, t)) > 1e-4
    # by hand for one row: T² Σ p (log p − log q)
    z, p = torch.tensor([[1.0, -0.5]]), torch.tensor([[0.3, 0.7]])
    q = torch.softmax(z / t, dim=-1)
    want = t * t * float((p * (p.log() - q.log())).sum())
    assert abs(float(train.distill_loss(z, torch.tensor([0]), p, 0.0, t)) - want) < 1e-6
    mix = train.distill_loss(z, torch.tensor([0]), p, 0.25, t)
    hard = torch.nn.functional.cross_entropy(z, torch.tensor([0]))
    assert abs(float(mix) - (0.25 * float(hard) + 0.75 * want)) < 1e-6


def test_adversarial_perturbation():
    """r has norm ε per sentence in the normalised space x / s, is 0 at padding and follows s ⊙ (s ⊙ g);
    s is the frequency-weighted standard deviation of the embedding rows."""
    torch.manual_seed(5)
    w, f = torch.randn(9, 4) * torch.tensor([1.0, 2.0, 0.5, 3.0]), torch.rand(9)
    f = f / f.sum()
    mean = (f[:, None] * w).sum(0)
    want = torch.sqrt((f[:, None] * (w - mean) ** 2).sum(0))
    s = train.embedding_scale(w, f)
    assert torch.allclose(s, want, atol=1e-6)
    grad, lengths = torch.randn(3, 5, 4) * torch.tensor([1.0, 1e-3, 10.0])[:, None, None], torch.tensor([5, 2, 4])
    for scale in (None, s):
        r = train.adversarial_perturbation(grad, lengths, 0.7, scale)
        rbar = r if scale is None else r / scale
        assert torch.allclose(rbar.flatten(1).norm(dim=1), torch.full((3,), 0.7), atol=1e-5)  # ε per sentence
        assert float(r[1, 2:].abs().max()) == 0.0 and float(r[2, 4:].abs().max()) == 0.0      # not at padding
        g = grad[0] if scale is None else grad[0] * s * s
        assert torch.allclose(r[0] / r[0].norm(), g / g.norm(), atol=1e-5)                     # direction
    assert float(train.adversarial_perturbation(grad, lengths, 0.0, s).abs().max()) == 0.0


def test_adversarial_step():
    """backward_step with ε > 0: the loss at x + r exceeds the loss at x by more than a random r of the same norm
    does; the gradients are those of L(x) + L(x + r) with r constant; ε → 0 gives the plain loss twice."""
    for cfg in SMALL.values():
        torch.manual_seed(6)
        model = common.build_model(cfg).eval()  # no dropout: the two losses are comparable
        ids, lengths = torch.tensor([[5, 6, 7, 8, 9], [10, 11, 12, 0, 0]]), torch.tensor([5, 3])
        labels = torch.tensor([1, 0])

        def objective(logits, att):
            return torch.nn.functional.cross_entropy(logits, labels), torch.zeros(())

        def grads():
            out = [p.grad.clone() for p in model.parameters()]
            model.zero_grad(set_to_none=True)
            return out

        s = train.embedding_scale(model.embedding.weight.detach(), torch.full((40,), 1 / 40))
        loss, _, adv = train.backward_step(model, ids, lengths, objective, 1e-7, s)
        plain_twice = grads()
        loss_p, _, none = train.backward_step(model, ids, lengths, objective, 0.0, s)
        plain = grads()
        assert none is None and abs(float(loss) - float(loss_p)) < 1e-7 and abs(float(adv) - float(loss)) < 1e-5
        assert all(torch.allclose(a, 2 * b, atol=1e-5) for a, b in zip(plain_twice, plain))
        eps = 0.5
        loss, _, adv = train.backward_step(model, ids, lengths, objective, eps, s)
        got = grads()
        x = model.embedding(ids)
        g = torch.autograd.grad(objective(*model(ids, lengths, embedded=x))[0], x)[0]
        r = train.adversarial_perturbation(g, lengths, eps, s)
        adv_x = model.embedding(ids) + r
        total = objective(*model(ids, lengths))[0] + objective(*model(ids, lengths, embedded=adv_x))[0]
        want = torch.autograd.grad(total, list(model.parameters()), allow_unused=True)
        for a, b in zip(got, want):
            assert torch.allclose(a, b if b is not None else torch.zeros_like(a), atol=1e-5), cfg["architecture"]
        # to first order the loss rises by g·r = Σ_b ε‖s ⊙ g_b‖ (the steepest rise for that normalised norm)
        eps = 1e-3
        loss, _, adv = train.backward_step(model, ids, lengths, objective, eps, s)
        grads()
        rise = eps * float((g * s).flatten(1).norm(dim=1).sum())
        assert abs((float(adv) - float(loss)) / rise - 1) < 0.05, (float(adv) - float(loss), rise)
        torch.manual_seed(7)
        with torch.no_grad():
            for _ in range(5):  # random directions of the same normalised norm rise less
                rand = train.adversarial_perturbation(torch.randn_like(g) / s, lengths, eps, s)
                assert float(objective(*model(ids, lengths, embedded=x + rand))[0]) - float(loss) < 0.9 * rise


def test_virtual_adversarial_loss():
    """VAT: the loss is 0 at ε → 0, and the power iteration's direction raises the KL more than the random probe it
    started from does (for a positive semi-definite Hessian H, the Rayleigh quotient of Hd is at least d's)."""
    for cfg in SMALL.values():
        torch.manual_seed(8)
        model = common.build_model(cfg).train()  # vat_backward switches dropout off itself
        ids, lengths = torch.tensor([[5, 6, 7, 8, 9], [10, 11, 12, 0, 0]]), torch.tensor([5, 3])
        s = train.embedding_scale(model.embedding.weight.detach(), torch.full((40,), 1 / 40))
        assert abs(float(train.vat_backward(model, ids, lengths, 1e-6, 0.1, s))) < 1e-9
        assert all(m.training for m in model.modules())  # dropout is on again afterwards
        model.zero_grad()
        eps = 1.0
        torch.manual_seed(9)
        vat = float(train.vat_backward(model, ids, lengths, eps, 0.1, s))
        assert any(float(p.grad.abs().max()) > 0 for p in model.parameters())
        model.eval()
        with torch.no_grad():
            x = model.embedding(ids)
            clean = model(ids, lengths, embedded=x)[0]
            torch.manual_seed(9)
            probe = train.adversarial_perturbation(torch.randn_like(x) / s, lengths, eps, s)  # the same probe, size ε
            rand = float(train.kl_from_logits(clean, model(ids, lengths, embedded=x + probe)[0]))
        assert vat > 2 * rand > 0, (vat, rand, cfg["architecture"])


def test_ensemble_probs_and_cache_digest():
    import distill_teachers
    z = np.array([[[2.0, 0.0]], [[0.0, 4.0]]])  # two teachers, one row
    p = distill_teachers.ensemble_probs(z, 2.0)
    a, b = 1 / (1 + np.exp(-1.0)), 1 / (1 + np.exp(-2.0))  # softmax([1, 0])[0], softmax([0, 2])[1]
    assert np.allclose(p, [[(a + 1 - b) / 2, (1 - a + b) / 2]])
    # best subset: each teacher alone is right on half the rows; 0 and 1 are confident where right and hesitant
    # where wrong, so together they get every row; 2 is confidently wrong on rows 2, 3 and spoils any ensemble
    labels = np.array([1, 1, 0, 0])
    z = np.array([[[0, 3], [0, 3], [0, 0.1], [0, 0.1]],
                  [[0.1, 0], [0.1, 0], [3, 0], [3, 0]],
                  [[0, 5], [0, 5], [0, 9], [0, 9]]], dtype=np.float64)
    assert distill_teachers.best_subset(z, labels) == (1.0, [0, 1])
    assert distill_teachers.best_subset(z[:1], labels) == (0.5, [0])
    rows = [("a b".split(), 1), ("c".split(), 0)]
    assert distill_teachers.rows_digest(rows) != distill_teachers.rows_digest([(["a", "b"], 0), (["c"], 0)])
    assert distill_teachers.rows_digest(rows) == distill_teachers.rows_digest([(["a", "b"], 1), (["c"], 0)])


def test_gpu_sweep_deadline_and_int8_size():
    """A run that hangs is killed at its deadline and one that crashes is marked failed; sweep.json is written
    anyway. int8_bytes agrees with the shipped config's tensors counted one by one."""
    import gpu_sweep
    import subprocess
    cfg = dict(train.DEFAULTS["selfattn"], vocab_size=50)
    model = common.build_model(cfg)
    expect = sum(p.numel() + 4 * p.shape[0] if p.dim() == 2 and p.numel() >= 1024 else 4 * p.numel()
                 for p in model.parameters())
    assert gpu_sweep.int8_bytes(cfg) == expect
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        t0 = time.time()
        subprocess.run([sys.executable, gpu_sweep.__file__, "--data-dir", tmp, "--vectors", "none", "--runs-dir",
                        os.path.join(tmp, "runs"), "--out", out, "--minutes", "0.25", "--device", "cpu", "--only",
                        "none", "--plant", "hang,crash", "--startup-seconds", "1", "--score-seconds", "1"],
                       check=True, stdout=subprocess.DEVNULL, timeout=60)
        assert time.time() - t0 < 15 + 5
        with open(os.path.join(out, "sweep.json")) as f:
            report = json.load(f)
        status = {r["name"]: (r["status"], r["reason"]) for r in report["runs"]}
        assert status == {"planted-hang": ("failed", "killed at its deadline while in train"),
                          "planted-crash": ("failed", "train exited with 3")}, status
        assert report["chosen"] == [] and os.listdir(out) == ["sweep.json"]


if __name__ == "__main__":
    torch.set_num_threads(1)
    tests = [(n, f) for n, f in sorted(globals().items()) if n.startswith("test_") and callable(f)]
    for name, fn in tests:
        fn()
        print("ok", name)
    print(f"{len(tests)} passed")
