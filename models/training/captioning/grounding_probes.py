"""Three ways to make the captioner's attention point at the named thing without boxes, measured on the dev boxes
(../shared/ground) before any training of the shipped model: none is taken. Each reads the shipped float32 bundle
into PyTorch (finetune.Captioner) and scores teacher-forced gold captions with the box set's score.py, as
finetune.py's per-epoch evaluation does (its pointing counts 155 objects where the engine's ground.py counts 149;
the figures compare variants with each other, not with the model card).

  cam        The ImageNet classifier as a teacher (class activation maps, Zhou et al. 2016, "Learning Deep Features
             for Discriminative Localization", CVPR). MobileNetV2 ends in a global mean and one linear layer, so
             logit_c(cell) = W_c . f(cell) + b_c; a captioner word w names the classes C(w) of imagenet_words.py and
             its cell score is logsumexp_{c in C(w)} logit_c(cell). A teacher is worth training the attention on
             only if its peak lands in the named object more often than the captioner's own alpha does: printed
             for the dev objects whose word maps to ImageNet classes, by the classifier's image-level belief P(w).
  padding    The 3x3 score smoothing (sat.smooth_scores) averages a border cell over the window cells inside the
             grid only, so a thing centred one cell from the edge peaks on the edge cell ((a + h) / 2 > (2a + h) / 3
             for h > a). The same weights with the missing cells filled by the map's mean or minimum score, or the
             edge repeated: forced pointing and mass, and greedy dev BLEU-4 (all 1,000 dev photos).
  localizer  A word-conditioned localizer on the frozen captioner (in the spirit of the localizer of Ma et al. 2020,
             "Learning to Generate Grounded Visual Captions without Localization Supervision", ECCV): the
             decoder's own keys and scorer with the query W_g E[w] (W_g starts at zero: the query-free salience
             map), trained so that the attended projected features alone predict the word (cross entropy over the
             vocabulary, one (photo, content word of its captions) pair at a time). Forced pointing of its map for
             the gold words, per epoch.

  /usr/bin/python3 models/training/captioning/grounding_probes.py cam --data DATA
  /usr/bin/python3 models/training/captioning/grounding_probes.py padding --data DATA
  /usr/bin/python3 models/training/captioning/grounding_probes.py localizer --data DATA --work /tmp/probes
DATA: the unpacked 160 px Flickr8k of run_contrast.sh (images/ and the split and token files).
"""
import argparse
import math
import os
import random
import sys
import time
import types

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import deletion  # noqa: E402  (STOP: the function words)
import finetune  # noqa: E402
import imagenet_words  # noqa: E402
import mobilenet  # noqa: E402
import sat  # noqa: E402

BUNDLE = os.path.join(mobilenet.REPO_ROOT, "models", "flickr8k-mobilenet")
SIZE = 352  # the bundle's input size; grid 11 x 11


def load_captioner():
    itos = open(os.path.join(BUNDLE, "vocab.txt")).read().rstrip("\n").split("\n")
    a = types.SimpleNamespace(input_size=SIZE, cache_below=0, train_from=19, cell_position=True,
                              context="output", score_smooth=3, init_state="const", proj_dim=256, embed_dim=256,
                              hidden_dim=384, att_dim=256, dropout=0.5, init_bundle=BUNDLE, init_checkpoint=None,
                              encoder_bundle=None, mobilenet=None)
    return finetune.Captioner(len(itos), a).eval(), itos


def box_scorer(ground_dir):
    """The box set's own score.py (its matching and figures)."""
    sys.path.insert(0, ground_dir)
    import score
    return score


def forced_scores(gold, rows_for, ground_dir):
    """score.py's figures for forced gold captions; rows_for(j, words) -> alpha [len(words), L] of gold photo j."""
    score = box_scorer(ground_dir)
    lines = []
    with torch.no_grad():
        for j, g in enumerate(gold):
            words = finetune.tokenize(g["caption"])[:25]
            a = rows_for(j, words)
            g_ = math.isqrt(a.shape[1])
            lines.append({"image": g["image"], "tokens": words,
                          "attention": {"dims": [len(words), g_, g_], "data": a.flatten().tolist()}})
    _, _, acc = score.score(gold, lines)
    return "; ".join("%s n=%d pointing %.1f%% (centre %.1f%%) mass %.1f%% (uniform %.1f%%)" % (
        k, n, 100 * p / n, 100 * c / n, 100 * m / n, 100 * u / n) for k, (n, p, m, c, u) in acc.items() if n)


def decoder_rows(model, stoi, grids):
    def rows(j, words):
        cap = torch.tensor([[finetune.START] + [stoi.get(w, finetune.UNK) for w in words] + [finetune.END]])
        _, al = model.dec(model.dec.feat_proj(grids[j:j + 1]), cap)
        return al[0, :len(words)]
    return rows


def gold_grids(model, data, gold):
    u8 = torch.from_numpy(finetune.load_images(os.path.join(data, "images"), [g["image"] for g in gold]))
    with torch.no_grad():
        return torch.cat([model.grid_features(finetune.preprocess(u8[i:i + 1], SIZE)) for i in range(len(gold))]), u8


def probe_cam(args, model, itos, gold):
    stoi = {w: i for i, w in enumerate(itos)}
    classes = {}
    for c, words in enumerate(imagenet_words.class_words()):
        for w in words:
            if w in stoi:
                classes.setdefault(w, []).append(c)
    grids, u8 = gold_grids(model, args.data, gold)
    net = mobilenet.build_mobilenet_v2().eval()  # the frozen ImageNet classifier
    lin = net.classifier[-1]
    rows = decoder_rows(model, stoi, grids)
    norm = box_scorer(args.ground_dir).norm  # the scorer's word matching
    out = []
    with torch.no_grad():
        for j, g in enumerate(gold):
            f = net.features(finetune.preprocess(u8[j:j + 1], SIZE))[0]  # [1280, 11, 11]
            lg = (torch.einsum("chw,kc->khw", f, lin.weight) + lin.bias[:, None, None]).flatten(1)  # [1000, L]
            prob = torch.softmax(lg.mean(1), 0)
            words = finetune.tokenize(g["caption"])[:25]
            alpha = rows(j, words)
            toks = [norm(w) for w in words]
            L = lg.shape[1]
            G = math.isqrt(L)
            for o in g["objects"]:
                w = o["word"].lower()
                if w not in classes or norm(w) not in toks:
                    continue
                cl = torch.tensor(classes[w])

                def inside(cell):
                    x, y = (cell % G + 0.5) * 10 / G, (cell // G + 0.5) * 10 / G
                    return any(a <= x <= c and b <= y <= d for a, b, c, d in o["boxes"])
                out.append((float(prob[cl].sum()), inside(int(torch.logsumexp(lg[cl], 0).argmax())),
                            inside(L // 2), inside(int(alpha[toks.index(norm(w))].argmax()))))
    print("dev objects in the captioner's vocabulary whose word names ImageNet classes: %d" % len(out))
    for mp in (0.0, 0.05, 0.1, 0.3):
        r = [x for x in out if x[0] >= mp]
        print("  P(w) >= %.2f: %3d objects; peak inside: teacher %d, centre cell %d, captioner's alpha %d" % (
            mp, len(r), sum(x[1] for x in r), sum(x[2] for x in r), sum(x[3] for x in r)))


def probe_padding(args, model, itos, gold):
    stoi = {w: i for i, w in enumerate(itos)}
    caps, split, _ = finetune.load_data(args.data, args.ground_dir)
    names = split["dev"]
    u8 = torch.from_numpy(finetune.load_images(os.path.join(args.data, "images"), names))
    with torch.no_grad():
        dev = torch.cat([model.grid_features(finetune.preprocess(u8[s:s + 50], SIZE)) for s in range(0, len(names), 50)])
    grids = dev[[names.index(g["image"]) for g in gold]]
    refs = [[finetune.tokenize(c) for c in caps[n]] for n in names]

    def filled(e, k, value):
        B, L = e.shape
        g, p = math.isqrt(L), k // 2
        inside = F.pad(torch.ones(1, 1, g, g), (p, p, p, p))
        x = F.pad(e.view(B, 1, g, g), (p, p, p, p)) + (1 - inside) * value.view(B, 1, 1, 1)
        return F.avg_pool2d(x, k, stride=1).view(B, L)

    shipped = sat.smooth_scores
    rules = [("inside the grid only (shipped)", shipped),
             ("missing cells = the map's mean", lambda e, k: filled(e, k, e.mean(1))),
             ("missing cells = the map's minimum", lambda e, k: filled(e, k, e.min(1).values)),
             ("edge repeated", lambda e, k: F.avg_pool2d(F.pad(e.view(e.shape[0], 1, math.isqrt(e.shape[1]), -1),
                                                               (k // 2,) * 4, mode="replicate"), k, stride=1)
              .view(e.shape))]
    try:
        for name, fn in rules:
            sat.smooth_scores = fn
            with torch.no_grad():
                hyps = []
                for s in range(0, len(names), 200):
                    hyps += finetune.greedy(model, dev[s:s + 200], 25)
            bleu = finetune.corpus_bleu4([[itos[w] for w in h] for h in hyps], refs)
            print("%-34s greedy dev BLEU-4 %.2f; %s" % (name, bleu, forced_scores(gold, decoder_rows(model, stoi, grids),
                                                                                  args.ground_dir)), flush=True)
    finally:
        sat.smooth_scores = shipped


def probe_localizer(args, model, itos, gold):
    stoi = {w: i for i, w in enumerate(itos)}
    caps, split, _ = finetune.load_data(args.data, args.ground_dir)
    os.makedirs(args.work, exist_ok=True)
    path = os.path.join(args.work, "projected.pt")
    if os.path.exists(path):
        proj = torch.load(path)
    else:  # the decoder's projected grid p [N, L, 256] of every train and dev photo, float16
        proj = {}
        with torch.no_grad():
            for s_ in ("train", "dev"):
                u8 = torch.from_numpy(finetune.load_images(os.path.join(args.data, "images"), split[s_]))
                proj[s_] = torch.cat([model.dec.feat_proj(model.grid_features(finetune.preprocess(u8[s:s + 50], SIZE)))
                                      .half() for s in range(0, len(u8), 50)])
                print("projected %s: %s" % (s_, tuple(proj[s_].shape)), flush=True)
        torch.save(proj, path)
    content = {i for i, w in enumerate(itos) if i > 3 and w not in deletion.STOP and any(ch.isalpha() for ch in w)}
    pairs = [(pi, i) for pi, n in enumerate(split["train"])
             for i in sorted({stoi.get(w) for c in caps[n] for w in finetune.tokenize(c)} & content)]
    dec = model.dec
    for p in dec.parameters():
        p.requires_grad_(False)
    torch.manual_seed(args.seed)
    w_g = nn.Linear(dec.embed.embedding_dim, dec.att_feat.out_features)
    nn.init.zeros_(w_g.weight)
    nn.init.zeros_(w_g.bias)
    recon = nn.Linear(dec.att_feat.in_features, len(itos))
    opt = torch.optim.Adam(list(w_g.parameters()) + list(recon.parameters()), lr=args.lr)

    def alpha(p, w):
        e = dec.att_score(torch.tanh(dec.att_feat(p) + w_g(dec.embed(w)).unsqueeze(1))).squeeze(2)
        return torch.softmax(sat.smooth_scores(e, dec.score_smooth), 1)

    gidx = [split["dev"].index(g["image"]) for g in gold]

    def rows(j, words):
        ids = torch.tensor([stoi.get(w, finetune.UNK) for w in words])
        return alpha(proj["dev"][gidx[j]:gidx[j] + 1].float().expand(len(words), -1, -1), ids)
    print("%d (photo, word) pairs; epoch 0 (query-free salience): %s" % (len(pairs), forced_scores(gold, rows, args.ground_dir)),
          flush=True)
    for ep in range(args.epochs):
        random.Random(ep).shuffle(pairs)
        t0, tot, n = time.time(), 0.0, 0
        for s in range(0, len(pairs), 256):
            b = pairs[s:s + 256]
            p = proj["train"][torch.tensor([x[0] for x in b])].float()
            w = torch.tensor([x[1] for x in b])
            z = torch.bmm(alpha(p, w).unsqueeze(1), p).squeeze(1)
            loss = F.cross_entropy(recon(z), w)
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot, n = tot + float(loss), n + 1
        print("epoch %d: reconstruction loss %.3f (%.0f s); %s" % (ep + 1, tot / n, time.time() - t0,
                                                                   forced_scores(gold, rows, args.ground_dir)), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("probe", choices=("cam", "padding", "localizer"))
    ap.add_argument("--data", required=True)
    ap.add_argument("--ground-dir", default=os.path.join(mobilenet.REPO_ROOT, "..", "shared", "ground"))
    ap.add_argument("--work", default="/tmp/grounding-probes", help="localizer: where the projected grids are kept")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    model, itos = load_captioner()
    _, _, gold = finetune.load_data(args.data, args.ground_dir)
    dict(cam=probe_cam, padding=probe_padding, localizer=probe_localizer)[args.probe](args, model, itos, gold)


if __name__ == "__main__":
    main()
