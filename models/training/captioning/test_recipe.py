"""Fast self-checks of the captioning recipe (no datasets, no training; about 10 s on one core):
  /usr/bin/python3 models/training/captioning/test_recipe.py
Each check raises AssertionError with a message when it fails.
"""
import math
import os
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bundle  # noqa: E402
import mobilenet  # noqa: E402
import sat  # noqa: E402
import shapes  # noqa: E402
import text  # noqa: E402


def check_tokenize_and_bleu():
    assert text.tokenize("A dog, running.") == ["a", "dog", ",", "running", "."]
    itos = text.build_vocab([["a", "dog"], ["a", "cat"], ["a"]], min_count=2)
    assert itos == sat.SPECIALS + ["a"], itos
    stoi = {w: i for i, w in enumerate(itos)}
    assert text.encode(["a", "dog"], stoi, 10) == [sat.START, 4, sat.UNK, sat.END]
    s = text.bleu_scores(["a dog runs on the grass ."], [["a dog runs on the grass .", "a dog ."]])
    assert abs(s["bleu4"] - 100.0) < 1e-9, s
    s = text.bleu_scores(["a cat sits on a mat"], [["a dog runs on the grass ."]])
    assert s["bleu4"] < 1e-6 and 0 < s["bleu1"] < 100, s


def check_shapes_generator():
    # deterministic: the same (seed, index) gives the same pixels and caption
    a, ma = shapes.make_scene(7, 3)
    b, mb = shapes.make_scene(7, 3)
    assert np.array_equal(a, b) and ma == mb
    assert a.shape == (224, 224, 3) and a.dtype == np.uint8
    counts = {1: 0, 2: 0, 3: 0}
    for i in range(60):
        px, m = shapes.make_scene(11, i)
        objs = m["objects"]
        counts[len(objs)] += 1
        toks = m["caption"].split()
        assert len(toks) == len(m["word_objects"])
        # objects are listed left to right, boxes are apart, inside the image, and sized by their size word
        xs = [(o["box"][0] + o["box"][2]) / 2 for o in objs]
        assert xs == sorted(xs)
        for k, o in enumerate(objs):
            x0, y0, x1, y1 = o["box"]
            assert 0 <= x0 < x1 <= 224 and 0 <= y0 < y1 <= 224
            lo, hi = shapes.SIZES[o["size"]]
            assert lo <= x1 - x0 <= hi and x1 - x0 == y1 - y0
            # the object's colour dominates the centre of its box (the triangle's centre is inside it too)
            cy, cx = (y0 + y1) // 2, (x0 + x1) // 2
            centre = px[cy, cx].astype(int)
            want = np.array(shapes.COLOURS[o["colour"]])
            assert np.abs(centre - want).max() <= 21, (m["id"], o, centre)
            for o2 in objs[k + 1:]:
                a_, b_ = o["box"], o2["box"]
                apart = a_[2] + 6 <= b_[0] or b_[2] + 6 <= a_[0] or a_[3] + 6 <= b_[1] or b_[3] + 6 <= a_[1]
                assert apart, m["id"]
        # every colour/shape word belongs to the object whose phrase it is in
        k = -1
        for w, owner in zip(toks, m["word_objects"]):
            if w == "a":
                k += 1
            if w in shapes.COLOUR_WORDS:
                assert objs[owner]["colour"] == w and owner == k
            if w in shapes.SHAPE_WORDS:
                assert objs[owner]["shape"] == w and owner == k
        # relations follow the rule in shapes.py
        for r, (p, q) in zip(m["relations"], zip(objs, objs[1:])):
            dx = (q["box"][0] + q["box"][2]) / 2 - (p["box"][0] + p["box"][2]) / 2
            dy = (q["box"][1] + q["box"][3]) / 2 - (p["box"][1] + p["box"][3]) / 2
            assert dx >= 40
            assert {"left of": dx >= 1.5 * abs(dy), "above": dy >= 1.5 * dx, "below": -dy >= 1.5 * dx}[r]
    assert all(v > 5 for v in counts.values()), counts


def check_safetensors_roundtrip():
    t = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.array([1.5, -2], np.float16),
         "c": np.zeros((0, 4), np.float32)}
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "x.safetensors")
        bundle.write_safetensors(p, t)
        raw = open(p, "rb").read()
        n = int.from_bytes(raw[:8], "little")
        assert n % 8 == 0
        back, _ = bundle.read_safetensors(p)
    assert list(back) == list(t)
    for k in t:
        assert back[k].dtype == t[k].dtype and np.array_equal(back[k], t[k])


def check_decoders():
    torch.manual_seed(0)
    m = sat.ShowAttendTell(30, feat_dim=40, proj_dim=16, embed_dim=8, hidden_dim=12, att_dim=10)
    m.eval()
    feats = torch.randn(3, 49, 40)
    g = sat.greedy_decode(m, feats, max_len=7)
    for i in range(3):
        b = sat.beam_decode(m, feats[i], beam=1, max_len=7)
        assert b["tokens"] == g[i]["tokens"], (b["tokens"], g[i]["tokens"])
        assert torch.allclose(b["alphas"], g[i]["alphas"])
        assert torch.allclose(g[i]["alphas"].sum(1), torch.ones(len(g[i]["alphas"])))
    # beam search never scores worse than greedy on its own objective (sum of log-probabilities)
    for i in range(3):
        b3 = sat.beam_decode(m, feats[i], beam=4, max_len=7)
        lp = torch.log_softmax(g[i]["logits"], 1)
        ids = g[i]["tokens"] + ([sat.END] if len(g[i]["logits"]) > len(g[i]["tokens"]) else [])
        greedy_score = float(sum(lp[t, w] for t, w in enumerate(ids)))
        if len(ids) == len(g[i]["logits"]) and ids[-1] == sat.END:
            assert b3["score"] >= greedy_score - 1e-5, (b3["score"], greedy_score)
    # teacher forcing computes the same logits as stepping by hand
    cap = torch.tensor([[sat.START, 5, 6, sat.END]])
    with torch.no_grad():
        p = m.feat_proj(feats[:1])
        lg, al = m(p, cap)
        pp, keys, h, c = m.encode(feats[:1])
        for t in range(3):
            l1, a1, _, h, c = m.step(pp, keys, h, c, cap[:, t])
            assert torch.allclose(l1, lg[:, t], atol=1e-6) and torch.allclose(a1, al[:, t], atol=1e-6)
    loss, ce, reg = sat.caption_loss(lg, al, cap, 1.0)
    want_reg = float(((1 - al[0].sum(0)) ** 2).sum())
    assert abs(float(reg) - want_reg) < 1e-5 and abs(float(loss) - float(ce) - want_reg) < 1e-5


def check_pca():
    rng = np.random.default_rng(0)
    base = rng.normal(size=(200, 3))
    mix = rng.normal(size=(3, 10))
    x = (base @ mix + 5.0).reshape(40, 5, 10).astype(np.float16)
    w, b, explained = sat.pca_projection(x, 3)
    assert explained > 0.999, explained
    rows = torch.from_numpy(x.reshape(-1, 10).astype(np.float32))
    p = rows @ w.T + b
    assert abs(float(p.mean())) < 1e-2  # centred
    assert torch.allclose(w @ w.T, torch.eye(3), atol=1e-4)  # orthonormal directions


def check_grounding_metric():
    import eval_shapes
    hits = total = 0
    for i in range(30):
        _, m = shapes.make_scene(5, i)
        toks = m["caption"].split()
        # oracle attention: one-hot at the cell holding the centre of the word's object -> always inside the box
        al = torch.zeros(len(toks), 49)
        for t, owner in enumerate(m["word_objects"]):
            x0, y0, x1, y1 = m["objects"][max(owner, 0)]["box"]
            al[t, int((y0 + y1) / 2 // 32) * 7 + int((x0 + x1) / 2 // 32)] = 1
        g = eval_shapes.grounding(toks, al, m["objects"])
        assert len(g) == sum(w in shapes.COLOUR_WORDS or w in shapes.SHAPE_WORDS for w in toks)
        assert all(c and o for _, c, o in g), (m["caption"], g)
        # attention on a cell far from every object's box misses
        far = torch.zeros(len(toks), 49)
        for t in range(len(toks)):
            best = max(range(49), key=lambda c: min(abs((c % 7 + 0.5) * 32 - (o["box"][0] + o["box"][2]) / 2) +
                                                    abs((c // 7 + 0.5) * 32 - (o["box"][1] + o["box"][3]) / 2)
                                                    for o in m["objects"]))
            far[t, best] = 1
        g2 = eval_shapes.grounding(toks, far, m["objects"])
        hits += sum(c for _, c, _ in g2)
        total += len(g2)
    assert hits == 0, (hits, total)
    # words of a phrase beyond the scene's objects count as misses
    _, m = shapes.make_scene(5, 0)
    toks = m["caption"].split() + ["left", "of", "a", "red", "circle"]
    g = eval_shapes.grounding(toks, torch.full((len(toks), 49), 1 / 49), m["objects"])
    assert g[-1] == ("circle", False, False) and g[-2] == ("red", False, False)


def check_preprocess():
    # grey and RGB inputs, tiny and non-square; output always [3, 224, 224] in [-1, 1]
    for px in [np.full((1, 1), 255, np.uint8), np.zeros((5, 3, 3), np.uint8),
               np.random.default_rng(1).integers(0, 256, (31, 17, 4)).astype(np.uint8)]:
        x = mobilenet.preprocess_rgba(px)
        assert x.shape == (3, 224, 224) and float(x.min()) >= -1 and float(x.max()) <= 1
    x = mobilenet.preprocess_rgba(np.full((1, 1), 255, np.uint8))
    assert torch.allclose(x, torch.ones_like(x))
    for bad in [np.zeros((0, 4, 4), np.uint8), np.zeros((4, 4, 2), np.uint8), np.zeros((4, 4, 3), np.float32)]:
        try:
            mobilenet.preprocess_rgba(bad)
        except ValueError:
            continue
        raise AssertionError("bad input accepted: %r" % (bad.shape,))


def check_cell_channels_and_box_targets():
    import train
    # cell colour: a scene with a red left half and a blue right half (column 112 splits cell column 3)
    px = np.zeros((224, 224, 3), np.uint8)
    px[:, :112] = (255, 0, 0)
    px[:, 112:] = (0, 0, 255)
    x = mobilenet.preprocess_rgba(px)[None]
    cc = mobilenet.cell_colour(x)[0]  # [49, 3]
    assert cc.shape == (49, 3)
    assert torch.allclose(cc[0], torch.tensor([1.0, -1.0, -1.0])) and torch.allclose(cc[6], torch.tensor([-1.0, -1.0, 1.0]))
    assert torch.allclose(cc[3], torch.tensor([0.0, -1.0, 0.0]), atol=1e-6)  # half red, half blue
    pos = mobilenet.cell_position()
    assert pos.shape == (49, 2) and torch.allclose(pos[0], torch.tensor([-6 / 7, -6 / 7]))
    assert torch.allclose(pos[7 * 2 + 5], torch.tensor([4 / 7, -2 / 7]))  # row 2, column 5: (x, y)
    # attention-supervision targets mark exactly the cells eval_shapes.grounding counts as inside
    import eval_shapes
    for i in range(20):
        _, m = shapes.make_scene(7, i)
        tgt = train.box_cell_targets(m, 20)
        toks = m["caption"].split()
        assert tgt.shape == (len(toks), 49)
        for t, w in enumerate(toks):
            if w in shapes.COLOUR_WORDS or w in shapes.SHAPE_WORDS:
                assert tgt[t].sum() >= 1
                for c in range(49):
                    al = torch.zeros(len(toks), 49)
                    al[t, c] = 1
                    hit = [h for (ww, h, _) in eval_shapes.grounding(toks[:t + 1], al[:t + 1], m["objects"])][-1]
                    assert bool(tgt[t, c]) == hit, (m["caption"], t, c)
            elif w in ("a", "left", "of", "above", "below"):
                assert tgt[t].sum() == 0


def check_concepts():
    """concepts.py: the pooling sits between the mean (r -> 0) and the max (r -> inf) of the cell scores; average
    precision on a hand-made ranking; labels mark the words of any of a photo's captions."""
    import numpy as np
    import concepts
    x = torch.tensor([[[0.0], [1.0], [3.0]]])  # [B=1, L=3, K=1]
    assert abs(float(concepts.lse_pool(x, 1e-4)) - 4.0 / 3) < 1e-3
    assert abs(float(concepts.lse_pool(x, 200.0)) - (3.0 - np.log(3) / 200)) < 1e-4
    # ranking 1, 0, 1: precision 1 at the first hit, 2/3 at the second -> AP (1 + 2/3) / 2
    ap = concepts.average_precision(np.array([[3.0], [2.0], [1.0]]), np.array([[1.0], [0.0], [1.0]]))
    assert abs(ap - (1 + 2 / 3) / 2) < 1e-9
    y = concepts.labels([["A dog runs .", "The dog ."], ["Two men ."]], ["dog", "men", "run"])
    assert y.tolist() == [[1, 0, 0], [0, 1, 0]]



def check_finetune_pieces():
    """finetune.py's own BLEU-4 equals text.bleu_scores' (nltk), its GPU preprocessing equals the engine's
    (mobilenet.preprocess_rgba), and its greedy decoder gives sat.greedy_decode's tokens with <unk> left out."""
    import finetune
    rng = np.random.default_rng(3)
    words = "a dog man runs the in on water red ball".split()
    refs = [[[str(rng.choice(words)) for _ in range(rng.integers(5, 12))] for _ in range(5)] for _ in range(60)]
    hyps = [[str(rng.choice(words)) for _ in range(rng.integers(4, 12))] for _ in range(60)]
    nl = text.bleu_scores([" ".join(h) for h in hyps], [[" ".join(r) for r in rs] for rs in refs])["bleu4"]
    assert abs(finetune.corpus_bleu4(hyps, refs) - nl) < 1e-9, (finetune.corpus_bleu4(hyps, refs), nl)
    img = rng.integers(0, 256, (2, 160, 160, 3), dtype=np.uint8)
    x = finetune.preprocess(torch.from_numpy(img), 224)
    for i in range(2):
        # the same sampling points and weights; torch orders the lerp differently (seen: 1.7e-5 of a range of 2)
        assert torch.allclose(x[i], mobilenet.preprocess_rgba(img[i]), atol=1e-4)
    torch.manual_seed(0)
    dec = sat.ShowAttendTell(12, feat_dim=8, proj_dim=6, embed_dim=5, hidden_dim=7, att_dim=4)
    dec.eval()

    class M:  # the piece of finetune.Captioner that greedy() reads
        pass
    m = M()
    m.dec = dec
    grid = torch.randn(3, 49, 8)
    ours = finetune.greedy(m, grid, 10)
    with torch.no_grad():
        ref = [r["tokens"] for r in sat.greedy_decode(dec, grid, max_len=10)]
    for a, b in zip(ours, ref):
        if sat.UNK not in b:  # sat.greedy_decode may choose <unk>; finetune.greedy never does
            assert a == b, (a, b)
        assert sat.UNK not in a


def check_occlude_pixels():
    """--occlude-pixels hides exactly the cells deletion.py would (same block bounds, the photo's rounded mean
    colour), re-runs the trunk on those photos only and leaves the other rows of x as they were."""
    import deletion
    import finetune

    class Stub:  # trunk = the preprocessed photo itself, so x is what the trunk would read
        def trunk(self, x):
            return x

    g, size = 3, 48
    u8 = torch.from_numpy(np.random.default_rng(3).integers(0, 256, size=(4, 30, 31, 3), dtype=np.uint8))
    x = finetune.preprocess(u8, size)
    gen = torch.Generator().manual_seed(5)
    out = finetune.occlude_pixels(Stub(), x, u8, g, 0.6, 0.5, gen, size)
    hide = finetune.pick_hidden(4, g, 0.6, 0.5, torch.Generator().manual_seed(5))
    assert hide.any(1).any() and not hide.any(1).all(), hide  # both kinds of row occur with this seed
    for b in range(4):
        if not hide[b].any():
            assert torch.equal(out[b], x[b]), b
            continue
        photo = u8[b].numpy()
        fill = np.round(photo.reshape(-1, 3).mean(0)).astype(np.uint8)
        ref = deletion.masked(photo, torch.nonzero(hide[b]).flatten().numpy(), fill, g)
        want = finetune.preprocess(torch.from_numpy(ref)[None], size)[0]
        assert torch.allclose(out[b], want, atol=1e-6), (b, float((out[b] - want).abs().max()))
        assert not torch.equal(out[b], x[b]), b


def check_smooth_scores():
    """sat.smooth_scores: the mean over the window's cells inside the grid (the numbers of the engine's test,
    tests/cpp/test_attention.cpp "smooth_grid_scores"), invariant to a shift of all scores; k = 1 changes nothing."""
    e = torch.arange(9.0).view(1, 9)
    s = sat.smooth_scores(e, 3)[0]
    assert torch.allclose(s, torch.tensor([(0 + 1 + 3 + 4) / 4, 15 / 6, (1 + 2 + 4 + 5) / 4, 21 / 6, 4.0, 27 / 6,
                                           (3 + 4 + 6 + 7) / 4, 33 / 6, (4 + 5 + 7 + 8) / 4]))
    x = torch.randn(2, 49)
    assert torch.allclose(sat.smooth_scores(x + 5, 3), sat.smooth_scores(x, 3) + 5, atol=1e-5)
    assert torch.equal(sat.smooth_scores(x, 1), x)


def check_finetune_cache():
    """--init-bundle + --cache-below: the warm-started model is the bundle (same grid, same decoder weights), and
    grid_features of the cached trunk map equals grid_features of the photo (the split changes nothing)."""
    import argparse
    import finetune
    repo_bundle = os.path.join(HERE, "..", "..", "flickr8k-mobilenet")
    enc_b, dec_b, itos, cfg = bundle.load_bundle(repo_bundle)
    base = dict(encoder_bundle=None, mobilenet=None, input_size=288, proj_dim=256, embed_dim=256, hidden_dim=384,
                att_dim=256, dropout=0.5, init_state="const", cell_position=True, train_from=11, init_bundle=repo_bundle,
                context=cfg["decoder"].get("context", "lstm"))
    full = finetune.Captioner(len(itos), argparse.Namespace(cache_below=0, **base)).eval()
    cached = finetune.Captioner(len(itos), argparse.Namespace(cache_below=11, **base)).eval()
    x = mobilenet.preprocess_rgba(np.random.default_rng(5).integers(0, 256, (70, 90, 3), dtype=np.uint8), 288)[None]
    with torch.no_grad():
        g_full = full.grid_features(x)
        g_cached = cached.grid_features(cached.trunk(x))
        g_bundle = mobilenet.decoder_grid(enc_b, x, False, True)
    assert g_full.shape == (1, 81, 1282), g_full.shape
    assert torch.equal(g_full, g_cached)
    assert torch.allclose(g_full, g_bundle, atol=1e-5), float((g_full - g_bundle).abs().max())
    for k, v in dec_b.state_dict().items():
        assert torch.equal(full.dec.state_dict()[k], v), k
    assert not full.dec.init_h.weight.requires_grad and full.enc.features[11].conv[0][0].weight.requires_grad
    assert not full.enc.features[10].conv[0][0].weight.requires_grad


def check_context_output():
    """sat context="output": with constant h_0/c_0 the LSTM never sees the image (the same states for two different
    grids under teacher forcing), the logits are fc([h ; beta z]) of the step's own attention, and a word's
    probability moves only through that step's z: zeroing fc's z columns makes the logits image-independent."""
    torch.manual_seed(3)
    dec = sat.ShowAttendTell(12, feat_dim=8, proj_dim=6, embed_dim=5, hidden_dim=7, att_dim=4, dropout=0.0,
                             context="output").eval()
    assert dec.lstm.weight_ih.shape == (28, 5) and dec.fc.weight.shape == (12, 13)
    with torch.no_grad():
        dec.init_h.weight.zero_()
        dec.init_c.weight.zero_()
        a, b = torch.randn(1, 9, 8), torch.randn(1, 9, 8) * 3
        words = torch.tensor([[sat.START, 5, 6, 7]])
        states = []
        for grid in (a, b):
            p, keys, h, c = dec.encode(grid)
            hs, logits = [], []
            for t in range(3):
                lg, alpha, beta, h, c = dec.step(p, keys, h, c, words[:, t])
                al, z, be = dec.attend(p, keys, h)
                assert torch.equal(al, alpha) and torch.equal(be, beta)
                assert torch.allclose(lg, dec.fc(torch.cat([h, beta * z], 1)), atol=1e-6)
                hs.append(h)
                logits.append(lg)
            states.append((torch.cat(hs), torch.cat(logits)))
        assert torch.equal(states[0][0], states[1][0])  # h_t: the words alone
        assert not torch.allclose(states[0][1], states[1][1])  # the logits see the image, through z_t
        dec.fc.weight[:, 7:] = 0
        la = dec(dec.feat_proj(a), words)[0]
        lb = dec(dec.feat_proj(b), words)[0]
        assert torch.equal(la, lb)
    # the paper's model is unchanged: its LSTM input is [E ; beta z] and its output layer reads h alone
    ref = sat.ShowAttendTell(12, feat_dim=8, proj_dim=6, embed_dim=5, hidden_dim=7, att_dim=4)
    assert ref.lstm.weight_ih.shape == (28, 11) and ref.fc.weight.shape == (12, 7)


def check_gptq_codes():
    """quantize_calibrated.gptq_codes: with H = I (inputs that do not vary together) it is round to nearest; with
    correlated inputs its product error is below round to nearest's, the codes stay in [-127, 127] and the scales are
    quantize.mjs's."""
    import quantize_calibrated as qc
    rng = np.random.default_rng(1)
    w = rng.standard_normal((24, 64)).astype(np.float32)
    s = qc.row_scales(w)
    assert np.array_equal(s, (np.abs(w).max(1) / np.float32(127)).astype(np.float32))
    rtn = np.clip(np.round(w / s[:, None]), -127, 127)
    q = qc.gptq_codes(w, np.eye(64), s, damp=0.0)
    assert np.array_equal(q, rtn), np.abs(q - rtn).max()
    x = rng.standard_normal((4000, 8)) @ rng.standard_normal((8, 64)) + 0.1 * rng.standard_normal((4000, 64))
    h = torch.tensor(x.T @ x)
    q = qc.gptq_codes(w, h, s)
    assert q.dtype == np.int8 and q.min() >= -127 and q.max() <= 127
    e_rtn = qc.product_error(w, rtn, s, h)
    e_gptq = qc.product_error(w, q, s, h)
    assert e_gptq < 0.5 * e_rtn, (e_gptq, e_rtn)
    w[:, 3] = 0.0  # a column no input reaches (H_33 = 0): round to nearest there
    h[3, :] = 0.0
    h[:, 3] = 0.0
    assert np.array_equal(qc.gptq_codes(w, h, s)[:, 3], np.zeros(24))



def check_contrast_pieces():
    """finetune.py's image-contrast loss: decode_with_negative scores the own photo exactly as the decoder's forward
    does and the other photo through alpha and z alone; contrast_mask keeps only content words absent from the other
    photo's captions; contrast_loss is the hinge on the log-probability gap (a hand-computed case)."""
    import finetune
    torch.manual_seed(0)
    dec = sat.ShowAttendTell(12, feat_dim=8, proj_dim=6, embed_dim=5, hidden_dim=7, att_dim=4, context="output")
    dec.eval()
    for lin in (dec.init_h, dec.init_c):  # --init-state const, which --context output requires: h_0 = tanh(b)
        lin.weight.data.zero_()
    p, p_other = torch.randn(3, 9, 6), torch.randn(3, 9, 6)
    cap = torch.tensor([[sat.START, 5, 6, 7, sat.END], [sat.START, 8, 4, sat.END, sat.PAD], [sat.START, 9, sat.END,
                                                                                            sat.PAD, sat.PAD]])
    with torch.no_grad():
        ref_logits, ref_alphas = dec(p, cap)
        same, same_alphas, same_neg = finetune.decode_with_negative(dec, p, p, cap)
        logits, alphas, neg = finetune.decode_with_negative(dec, p, p_other, cap)
        _, _, swapped = finetune.decode_with_negative(dec, p_other, p, cap)
        other_logits, _ = dec(p_other, cap)
    assert torch.allclose(same, ref_logits, atol=1e-6) and torch.allclose(same_alphas, ref_alphas, atol=1e-7)
    assert torch.allclose(same_neg, same, atol=1e-6)
    assert torch.allclose(logits, ref_logits, atol=1e-6) and torch.allclose(alphas, ref_alphas, atol=1e-7)
    # the negative is what the decoder says of the other photo after the same words
    assert torch.allclose(neg, other_logits, atol=1e-6) and torch.allclose(swapped, ref_logits, atol=1e-6)
    assert not torch.allclose(neg, logits, atol=1e-3)

    itos = sat.SPECIALS + ["a", "dog", "runs", ".", "man"]  # ids 4 .. 8; "a" is a function word
    content = finetune.content_ids(itos, {"a"})
    assert content.tolist() == [False] * 4 + [False, True, True, False, True], content
    targets = torch.tensor([[4, 5, 6, 7, 8, sat.END, sat.PAD]])
    neg_words = torch.zeros(1, len(itos), dtype=torch.bool)
    neg_words[0, [4, 6]] = True  # the other photo's captions say "a ... runs"
    mask = finetune.contrast_mask(targets, neg_words, content)
    assert mask.tolist() == [[False, True, False, False, True, False, False]], mask

    own = torch.tensor([[[math.log(3.0), 0.0], [0.0, 5.0]]])  # p(word 0) = 0.75 | own photo
    other = torch.zeros(1, 2, 2)  # p(word 0) = 0.5 | other photo: gap log 1.5
    loss, met = finetune.contrast_loss(own, other, torch.tensor([[0, 1]]), torch.tensor([[True, False]]), 1.0)
    assert abs(float(loss) - (1.0 - math.log(1.5))) < 1e-6 and met == 0.0, (float(loss), met)
    loss, met = finetune.contrast_loss(own, other, torch.tensor([[0, 1]]), torch.tensor([[True, True]]), 1.0)
    # word 1: p 0.9933 own, 0.5 other, gap 0.6865 < 1
    want = ((1.0 - math.log(1.5)) + (1.0 - (math.log(1 / (1 + math.exp(-5.0))) - math.log(0.5)))) / 2
    assert abs(float(loss) - want) < 1e-6 and met == 0.0, (float(loss), want)
    loss, met = finetune.contrast_loss(own, other, torch.tensor([[0, 1]]), torch.tensor([[True, False]]), 0.3)
    assert float(loss) == 0.0 and met == 1.0, (float(loss), met)


def check_box_pieces():
    """finetune.py's box supervision: box_cover gives score.py's cell weights (the share of each cell under the
    union of boxes), box_word matches caption tokens and box words (plurals, irregular plurals), box_targets puts a
    word's coverage on the target tokens that name it, and box_loss is -log of the attention mass there."""
    import finetune
    assert finetune.box_cover([[0, 0, 10, 10]], 3).tolist() == [1.0] * 9
    assert finetune.box_cover([[0, 0, 5, 5]], 2).tolist() == [1.0, 0.0, 0.0, 0.0]
    half = finetune.box_cover([[0, 0, 2.5, 10]], 2)  # the left half of the left column
    assert half.tolist() == [0.5, 0.0, 0.5, 0.0], half
    two = finetune.box_cover([[0, 0, 5, 5], [0, 0, 5, 10]], 2)  # overlapping boxes count once
    assert two.tolist() == [1.0, 0.0, 1.0, 0.0], two
    assert [finetune.box_word(w) for w in ("Dogs", "men", "children", "grass", "bus")] == \
        ["dog", "man", "child", "gras", "bus"]
    itos = sat.SPECIALS + ["a", "dog", "dogs", "runs", "men"]  # ids 4 .. 8
    caps = [torch.tensor([[sat.START, 4, 5, 7, sat.END, sat.PAD], [sat.START, 8, 7, 4, 6, sat.END]])]
    recs = [{"image": "p.jpg", "objects": [{"word": "dog", "kind": "thing", "boxes": [[0, 0, 5, 5]]},
                                           {"word": "man", "kind": "thing", "boxes": [[5, 5, 10, 10]]}]},
            {"image": "not-in-training.jpg", "objects": [{"word": "dog", "kind": "thing", "boxes": [[0, 0, 1, 1]]}]}]
    t = finetune.box_targets(recs, ["p.jpg"], caps, itos, 2)
    assert list(t) == [0]
    cover, mask = t[0]
    assert mask.tolist() == [[False, True, False, False, False], [True, False, False, True, False]], mask
    assert cover[0, 1].tolist() == [1.0, 0.0, 0.0, 0.0] and cover[1, 0].tolist() == [0.0, 0.0, 0.0, 1.0]
    assert cover[1, 3].tolist() == [1.0, 0.0, 0.0, 0.0] and float(cover[0, 0].sum()) == 0.0
    alphas = torch.tensor([[[0.5, 0.25, 0.25, 0.0], [0.1, 0.2, 0.3, 0.4]]])
    loss, mass = finetune.box_loss(alphas, torch.tensor([[[1.0, 0, 0, 0], [0, 0, 0, 1.0]]]),
                                   torch.tensor([[True, False]]))
    assert abs(float(loss) + math.log(0.5 + 1e-6)) < 1e-6 and abs(mass - 0.5) < 1e-6, (float(loss), mass)
    loss, mass = finetune.box_loss(alphas, torch.tensor([[[1.0, 0, 0, 0], [0, 0, 0, 1.0]]]),
                                   torch.tensor([[True, True]]))
    assert abs(float(loss) + (math.log(0.5 + 1e-6) + math.log(0.4 + 1e-6)) / 2) < 1e-6 and abs(mass - 0.45) < 1e-6


def check_train_boxes_file():
    """ground_train/train.jsonl: 800 photos, well-formed boxes and kinds, one entry per word a photo; with ../shared
    present, the photos and captions are draw.py's (the seeded sample of the training split, in the drawn order)."""
    import json
    recs = [json.loads(ln) for ln in open(os.path.join(HERE, "ground_train", "train.jsonl"), encoding="utf-8")]
    assert len(recs) == 800
    for r in recs:
        assert len(r["captions"]) == 5 and r["objects"] is not None
        words = [o["word"] for o in r["objects"]]
        assert len(words) == len(set(words)) and all(w == w.lower() for w in words), r["image"]
        for o in r["objects"]:
            assert o["kind"] in ("thing", "stuff") and 1 <= len(o["boxes"]) <= 6, (r["image"], o)
            assert all(0 <= b[0] < b[2] <= 10 and 0 <= b[1] < b[3] <= 10 for b in o["boxes"]), (r["image"], o)
    import importlib.util  # by path: ground_test has a draw.py of its own
    spec = importlib.util.spec_from_file_location("ground_train_draw", os.path.join(HERE, "ground_train", "draw.py"))
    draw = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(draw)
    if os.path.exists(os.path.join(draw.SHARED, "data", "flickr8k", "Flickr8k.token.txt")):
        drawn = draw.drawn()
        assert [(d["image"], d["captions"]) for d in drawn] == [(r["image"], r["captions"]) for r in recs]

if __name__ == "__main__":
    torch.set_num_threads(1)
    for name, fn in list(globals().items()):
        if name.startswith("check_") and callable(fn):
            fn()
            print("ok", name)
    print("all recipe checks passed")
