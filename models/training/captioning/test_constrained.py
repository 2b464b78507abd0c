"""Checks of constrained.py (constrained beam search) and imagenet_words.py:

  /usr/bin/python3 models/training/captioning/test_constrained.py [--images 50] [--threads 1]

1. With no constraint, constrained_beam_decode gives sat.beam_decode's caption and score, token for token, on the
   first N Flickr8k dev photos through the float32 bundle with its default decoding (beam 10, length_norm 0.7,
   max_len 25), and on a small random decoder with beams 1..5 (no data needed).
2. With a constraint (the photo's top-1 ImageNet class's words, whatever its probability, else "dog"), the caption
   contains a constraint word or there is no answer; when the unconstrained caption already contains one, the
   constrained answer scores at least as well (score / len^length_norm), since every prefix of that caption
   competes within its state against a subset of what it beat in the unconstrained search.
3. load_int8_codes (--int8) puts an int8 bundle's codes x scales into a module, and nothing else.
4. With <unk> banned (as the engine's search), the unconstrained captions of the everyday photos are the float32
   engine's captions recorded in everyday/judgements-float32.jsonl, all 69 (with --everyday).
5. imagenet_words: every word is in the captioner's vocabulary (vocab_words raises otherwise), and the rule
   constraint_for constrains exactly when prob >= tau and the class has words.
Each check raises AssertionError with a message when it fails.
"""
import argparse
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import constrained  # noqa: E402
import engine_io  # noqa: E402
import imagenet_words  # noqa: E402
import mobilenet  # noqa: E402
import sat  # noqa: E402
import text  # noqa: E402


def normed(r, tokens_len, length_norm):
    return r["score"] / (tokens_len ** length_norm if length_norm else 1.0)


def check_random_decoder():
    torch.manual_seed(0)
    dec = sat.ShowAttendTell(40, feat_dim=16, proj_dim=8, embed_dim=8, hidden_dim=12, att_dim=8, dropout=0.0).eval()
    for trial in range(30):
        f = torch.randn(9, 16) * 3
        for beam in (1, 2, 5):
            for ln in (0.0, 0.7):
                a = sat.beam_decode(dec, f, beam=beam, max_len=12, length_norm=ln)
                b = constrained.constrained_beam_decode(dec, f, None, beam=beam, max_len=12, length_norm=ln)
                assert a["tokens"] == b["tokens"] and a["score"] == b["score"], (trial, beam, ln, a, b)
                assert torch.equal(a["alphas"], b["alphas"]), (trial, beam, ln)
                r = constrained.constrained_beam_decode(dec, f, [7, 11], beam=beam, max_len=12, length_norm=ln)
                assert r is None or (7 in r["tokens"] or 11 in r["tokens"]), (trial, r)
    print("random decoder: no constraint = beam_decode (30 inputs x 3 beams x 2 length norms); constraint met")


def check_int8_codes():
    import tempfile
    import numpy as np
    lin = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Linear(2, 2))
    q = np.array([[1, -2, 127], [0, 5, -127]], dtype=np.int8)
    s = np.array([0.5, 0.25], dtype=np.float32)
    with tempfile.TemporaryDirectory() as d:
        constrained.bundle.write_safetensors(os.path.join(d, "weights.safetensors"), {
            "p.0.weight": q, "p.0.weight.qscale": s, "p.1.weight": q[:, :2].copy(), "p.1.weight.qscale": s,
            "p.1.weight_scale": np.array([2.0], dtype=np.float32), "p.0.bias": np.zeros(2, np.float32)})
        bias = lin[0].bias.detach().clone()
        assert constrained.load_int8_codes(lin, d, "p.") == 2
    assert torch.equal(lin[0].weight, torch.tensor([[0.5, -1.0, 63.5], [0.0, 1.25, -31.75]])), lin[0].weight
    assert torch.equal(lin[1].weight, torch.tensor([[1.0, -2.0], [0.0, 2.5]])), lin[1].weight
    assert torch.equal(lin[0].bias, bias), "only int8 codes are replaced"
    print("load_int8_codes: codes x row scale (x the one NAME_scale where there is one); other tensors untouched")


def check_vocab_and_rule(m):
    words = imagenet_words.vocab_words(m.stoi)
    assert len(words) == 1000 == len(m.labels), (len(words), len(m.labels))
    try:
        imagenet_words.vocab_words({w: i for w, i in m.stoi.items() if w != "cat"})
    except ValueError as e:
        assert "cat" in str(e), e
    else:
        raise AssertionError("vocab_words accepted a table word missing from the vocabulary")
    cat = m.labels.index(next(l for l in m.labels if l.startswith("Egyptian cat")))
    assert [m.itos[i] for i in constrained.constraint_for(0.5, cat, words, m.stoi, 0.5)] == list(words[cat])
    assert constrained.constraint_for(0.49, cat, words, m.stoi, 0.5) is None
    abacus = m.labels.index("abacus")
    assert not words[abacus] and constrained.constraint_for(0.99, abacus, words, m.stoi, 0.5) is None
    print("imagenet_words: %d classes map, all words in the vocabulary; constraint_for follows tau"
          % sum(1 for w in words if w))


def check_dev(m, n):
    names = engine_io.split_names(mobilenet.DEFAULT_DATA_DIR, "dev")[:n]
    kw = dict(beam=m.beam, max_len=m.max_len, length_norm=m.length_norm)
    tar = os.path.join(mobilenet.DEFAULT_DATA_DIR, "flickr8k", "flickr8k_images_160.tar")
    met_before = changed = 0
    with engine_io.photo_tar(tar) as rgb:
        for k, name in enumerate(names):
            px = rgb(name)
            f = m.features(px)
            a = sat.beam_decode(m.dec, f, **kw)
            b = constrained.constrained_beam_decode(m.dec, f, None, **kw)
            assert a["tokens"] == b["tokens"] and a["score"] == b["score"], (name, a["tokens"], b["tokens"])
            cls, _ = m.top1(px)
            cwords = m.class_words[cls] or ("dog",)
            cset = {m.stoi[w] for w in cwords}
            r = constrained.constrained_beam_decode(m.dec, f, sorted(cset), **kw)
            if r is None:
                continue
            assert cset & set(r["tokens"]), (name, cwords, r["tokens"])
            if cset & set(a["tokens"]) and len(a["tokens"]) < m.max_len:  # a finished caption met it
                met_before += 1
                na, nr = normed(a, len(a["tokens"]) + 1, m.length_norm), normed(r, len(r["tokens"]) + 1, m.length_norm)
                assert nr >= na - 1e-4, (name, a["tokens"], r["tokens"], na, nr)
            changed += r["tokens"] != a["tokens"]
    print("dev: %d photos, no constraint = beam_decode on all; constrained captions meet their constraint "
          "(%d differ from the plain one; %d plain captions already met it and were not beaten)"
          % (len(names), changed, met_before))


def check_everyday(m):
    judged = {r["image"]: r["caption"] for r in map(json.loads, open(os.path.join(HERE, "everyday",
                                                                               "judgements-float32.jsonl")))}
    differ = []
    for name in sorted(judged):
        got = text.decode(m.caption(m.features(constrained.everyday_rgb(os.path.join(constrained.EVERYDAY, name))))
                          ["tokens"], m.itos)
        if got != judged[name]:
            differ.append((name, judged[name], got))
    assert not differ, differ
    print("everyday: the %d unconstrained captions (<unk> banned) are the float32 engine's" % len(judged))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", type=int, default=50)
    ap.add_argument("--everyday", action="store_true", help="also check 3 (about a minute)")
    args = mobilenet.parse_args_with_threads(ap)
    check_random_decoder()
    check_int8_codes()
    m = constrained.Models()
    check_vocab_and_rule(m)
    if args.images:
        check_dev(m, args.images)
    if args.everyday:
        check_everyday(m)
    print("test_constrained: all checks passed")


if __name__ == "__main__":
    main()
