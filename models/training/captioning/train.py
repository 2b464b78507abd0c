"""Train a Show, Attend and Tell captioner (sat.py) on precomputed MobileNetV2 grid features.

  --task flickr8k : Flickr8k train split (6000 images x 5 captions), model selection on dev BLEU-4 (greedy).
  --task shapes   : synthetic scenes (shapes.py / make_shapes.py), selection on dev min(exact-caption accuracy,
                    attention grounding).

Checkpoints: models/training/captioning/runs/<task>/{last,best}.pt (gitignored). --resume continues from last.pt
(model, optimiser, epoch, RNG state). --max-minutes stops cleanly after the current batch and saves last.pt.

Example (under the team lock):
  nohup flock /tmp/attnlens-train.lock /usr/bin/python3 models/training/captioning/train.py --task flickr8k \
      --epochs 8 --max-minutes 20 > models/training/captioning/runs/train_flickr8k.log 2>&1 &
"""
import argparse
import json
import os
import random
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import data  # noqa: E402
import eval_shapes  # noqa: E402
import mobilenet  # noqa: E402
import sat  # noqa: E402
import text  # noqa: E402


def make_batches(lengths, batch, rng):
    """Shuffle, then sort by length inside pools of 50 batches so that padding stays small."""
    idx = list(range(len(lengths)))
    rng.shuffle(idx)
    pool = batch * 50
    batches = []
    for s in range(0, len(idx), pool):
        chunk = sorted(idx[s:s + pool], key=lambda i: lengths[i])
        batches += [chunk[k:k + batch] for k in range(0, len(chunk), batch)]
    rng.shuffle(batches)
    return batches


def project(feats, w, b, bs=500):
    """Applies the fixed feat_proj (p = W a + b) once to all cached features: float16 [N, L, D] -> float32
    [N, L, P]."""
    out = np.empty(feats.shape[:2] + (w.shape[0],), np.float32)
    for s in range(0, feats.shape[0], bs):
        x = torch.from_numpy(feats[s:s + bs].astype(np.float32))
        out[s:s + bs] = (x @ w.T + b).numpy()
    return out


def evaluate(model, task, pfeats, caps, itos, max_len, bs=250, scenes=None):
    """Greedy decoding over a whole split of projected features; flickr8k -> BLEU-4; shapes -> exact % and
    attention grounding % (eval_shapes.grounding), selection score min(exact, grounding)."""
    model.eval()
    hyps, outs = [], []
    for s in range(0, pfeats.shape[0], bs):
        f = torch.from_numpy(pfeats[s:s + bs])
        for r in sat.greedy_decode(model, f, max_len=max_len, projected=True):
            hyps.append(text.decode(r["tokens"], itos))
            outs.append(r)
    if task == "flickr8k":
        sc = text.bleu_scores(hyps, caps)
        return sc["bleu4"], sc, hyps
    exact = 100.0 * sum(h == " ".join(text.tokenize(c[0])) for h, c in zip(hyps, caps)) / len(hyps)
    words = []
    for r, sc in zip(outs, scenes):
        words += eval_shapes.grounding([itos[i] for i in r["tokens"]], r["alphas"], sc["objects"])
    ground = 100.0 * sum(w[1] for w in words) / max(1, len(words))
    return min(exact, ground), {"exact": exact, "grounding": ground}, hyps


def box_cell_targets(scene, max_len, grid=7, size=224):
    """[n_words, grid*grid] float32: for each size/colour/shape word of the scene's caption, 1 on the cells whose
    centre lies inside the box of the object the word describes (the test of eval_shapes.grounding), else 0."""
    words = text.tokenize(scene["caption"])[:max_len]
    out = np.zeros((len(words), grid * grid), np.float32)
    cell = size / grid
    for j, (w, k) in enumerate(zip(words, scene["word_objects"])):
        if k < 0 or w == "a":
            continue
        x0, y0, x1, y1 = scene["objects"][k]["box"]
        for i in range(grid * grid):
            r, c = divmod(i, grid)
            cx, cy = (c + 0.5) * cell, (r + 0.5) * cell
            out[j, i] = float(x0 <= cx < x1 and y0 <= cy < y1)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--task", choices=["flickr8k", "shapes"], required=True)
    ap.add_argument("--data-dir", default=mobilenet.DEFAULT_DATA_DIR)
    ap.add_argument("--cache-dir", default=data.CACHE)
    ap.add_argument("--grid", default="grid7", help="grid7 (7x7x1280) or grid14 (14x14x96)")
    ap.add_argument("--run-dir", default=None)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--max-minutes", type=float, default=20.0)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=4e-4)
    ap.add_argument("--lam", type=float, default=1.0, help="doubly stochastic regularisation weight")
    ap.add_argument("--dropout", type=float, default=0.5)
    ap.add_argument("--min-count", type=int, default=5)
    ap.add_argument("--max-len", type=int, default=30, help="max caption tokens (without <start>/<end>)")
    ap.add_argument("--proj-dim", type=int, default=512)
    ap.add_argument("--embed-dim", type=int, default=256)
    ap.add_argument("--hidden-dim", type=int, default=512)
    ap.add_argument("--att-dim", type=int, default=256)
    ap.add_argument("--init-state", choices=["mean", "const"], default="mean",
                    help="h_0/c_0: 'mean' = tanh(W mean(p) + b) (SAT f_init); 'const' = a learned constant tanh(b): "
                         "W_ih0/W_ic0 are zeroed and frozen, so the bundle and the engine keep the same equations "
                         "and every piece of image information has to come through the attention")
    ap.add_argument("--cell-colour", action="store_true",
                    help="shapes: append each cell's mean input colour (mobilenet.cell_colour, cache "
                         "shapes_<split>_rgb7.npy) to its 1280 features; feat_proj becomes blockdiag(PCA, s*I3) "
                         "(feat_dim 1283, proj_dim + 3); the bundle says \"encoder.cell_colour\": \"mean_rgb\"")
    ap.add_argument("--cell-position", action="store_true",
                    help="append each cell's centre (x, y) in [-1, 1] (mobilenet.cell_position) after the colour: "
                         "feat_dim + 2, proj_dim + 2; the bundle says \"encoder.cell_position\": \"xy\"")
    ap.add_argument("--att-sup", type=float, default=0.0,
                    help="shapes only: weight of an attention-supervision term (Liu et al. 2017, 'Attention "
                         "Correctness in Neural Image Captioning'): for every size/colour/shape word of a TRAINING "
                         "caption, -log of the attention mass on the grid cells whose centre lies in that object's "
                         "box (the generator's ground truth). Changes the loss only, not the decoder equations")
    ap.add_argument("--cam-sup", type=float, default=0.0,
                    help="flickr8k: weight of weak attention supervision without boxes: at every step that predicts a "
                         "word with a detector in --cam-file (concepts.py: word maps learned from the captions by "
                         "multiple-instance learning), the cross entropy -sum_i t_i log alpha_i towards "
                         "t = softmax(x(w) / --cam-temp), x(w) the word's cell scores on the photo. Loss only: the "
                         "decoder equations (and the engine) are unchanged")
    ap.add_argument("--cam-file", default=None, help="concepts.py output (default: runs/concepts.pt)")
    ap.add_argument("--cam-temp", type=float, default=1.0, help="temperature of the --cam-sup target maps")
    ap.add_argument("--train-limit", type=int, default=0, help="use only the first N training images (0 = all)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--resume", action="store_true")
    args = mobilenet.parse_args_with_threads(ap)
    t0 = time.time()
    run_dir = args.run_dir or os.path.join(HERE, "runs", args.task)
    os.makedirs(run_dir, exist_ok=True)
    print("command:", " ".join(sys.argv), flush=True)

    _, tr_feats, tr_caps = data.load_split(args.task, "train", args.data_dir, args.cache_dir, args.grid)
    _, dv_feats, dv_caps = data.load_split(args.task, "dev", args.data_dir, args.cache_dir, args.grid)
    if args.train_limit:
        tr_feats, tr_caps = tr_feats[:args.train_limit], tr_caps[:args.train_limit]
    dv_scenes = None
    if args.task == "shapes":
        dv_scenes = json.load(open(os.path.join(args.cache_dir, "shapes_dev.json")))["scenes"][:dv_feats.shape[0]]
    tr_tok = [[text.tokenize(c) for c in cs] for cs in tr_caps]
    itos = text.build_vocab([t for ts in tr_tok for t in ts], args.min_count)
    stoi = {w: i for i, w in enumerate(itos)}
    pairs = [(i, text.encode(t, stoi, args.max_len)) for i, ts in enumerate(tr_tok) for t in ts]
    print("train images %d, captions %d, vocab %d, feats %s" % (tr_feats.shape[0], len(pairs), len(itos),
                                                               tr_feats.shape), flush=True)
    n_train_images = tr_feats.shape[0]
    extra = (3 if args.cell_colour else 0) + (2 if args.cell_position else 0)
    hp = dict(feat_dim=tr_feats.shape[2] + extra, proj_dim=args.proj_dim + extra, embed_dim=args.embed_dim,
              hidden_dim=args.hidden_dim, att_dim=args.att_dim, dropout=args.dropout)
    torch.manual_seed(args.seed)
    model = sat.ShowAttendTell(len(itos), **hp)
    pca_path = os.path.join(run_dir, "pca.pt")
    if os.path.exists(pca_path):
        pw, pb, explained = torch.load(pca_path)
    else:
        pw, pb, explained = sat.pca_projection(tr_feats, args.proj_dim)
        torch.save((pw, pb, explained), pca_path)
    print("PCA %d dims keep %.1f%% of the feature variance" % (args.proj_dim, 100 * explained), flush=True)
    tr_p = project(tr_feats, pw, pb)
    dv_p = project(dv_feats, pw, pb)
    if args.cell_colour:
        tr_rgb = np.load(os.path.join(args.cache_dir, "shapes_train_rgb7.npy"))[:tr_p.shape[0]]
        dv_rgb = np.load(os.path.join(args.cache_dir, "shapes_dev_rgb7.npy"))[:dv_p.shape[0]]
        assert tr_rgb.shape[:2] == tr_p.shape[:2] and dv_rgb.shape[:2] == dv_p.shape[:2], "run make_shapes.py"
        # p = [PCA(a); s (rgb - mu)], s puts the colour on the scale of the mean PCA component
        mu = tr_rgb.reshape(-1, 3).mean(0)
        scale = float(np.sqrt((tr_p[:2000] ** 2).mean()) / tr_rgb.reshape(-1, 3).std())
        print("cell colour: scale %.3f, mean %s" % (scale, np.round(mu, 3).tolist()), flush=True)
        pw = torch.cat([torch.cat([pw, torch.zeros(pw.shape[0], 3)], 1),
                        torch.cat([torch.zeros(3, pw.shape[1]), scale * torch.eye(3)], 1)], 0)
        pb = torch.cat([pb, torch.from_numpy(-scale * mu).float()])
        tr_p = np.concatenate([tr_p, scale * (tr_rgb - mu)], axis=2).astype(np.float32)
        dv_p = np.concatenate([dv_p, scale * (dv_rgb - mu)], axis=2).astype(np.float32)
    if args.cell_position:
        # p gets s * (x, y) of the cell: fixed coordinate channels, zero mean over the grid
        pos = mobilenet.cell_position().numpy()  # [49, 2]
        scale = float(np.sqrt((tr_p[:2000, :, :args.proj_dim] ** 2).mean()) / pos.std())
        print("cell position: scale %.3f" % scale, flush=True)
        pw = torch.cat([torch.cat([pw, torch.zeros(pw.shape[0], 2)], 1),
                        torch.cat([torch.zeros(2, pw.shape[1]), scale * torch.eye(2)], 1)], 0)
        pb = torch.cat([pb, torch.zeros(2)])
        tr_p = np.concatenate([tr_p, np.broadcast_to(scale * pos, tr_p.shape[:2] + (2,))], axis=2).astype(np.float32)
        dv_p = np.concatenate([dv_p, np.broadcast_to(scale * pos, dv_p.shape[:2] + (2,))], axis=2).astype(np.float32)
    cam_targets = None
    if args.cam_sup > 0:
        # per training image: {word id: target map [L]} for the caption words that have a detector
        ck = torch.load(args.cam_file or os.path.join(HERE, "runs", "concepts.pt"))
        det = {stoi[w]: k for k, w in enumerate(ck["words"]) if w in stoi}
        cam_targets = []
        for i, ts in enumerate(tr_tok):
            ids = sorted({stoi[t] for c in ts for t in c if t in stoi and stoi[t] in det})
            if not ids:
                cam_targets.append({})
                continue
            x = torch.from_numpy(tr_feats[i].astype(np.float32)) @ ck["weight"][[det[j] for j in ids]].T \
                + ck["bias"][[det[j] for j in ids]]  # [L, n]
            t = torch.softmax(x / args.cam_temp, dim=0)
            cam_targets.append({j: t[:, q].clone() for q, j in enumerate(ids)})
        print("cam-sup: %d detector words in the vocabulary, %.1f supervised words per training photo" % (
            len(det), sum(len(c) for c in cam_targets) / len(cam_targets)), flush=True)
    model.feat_proj.weight.data.copy_(pw)
    model.feat_proj.bias.data.copy_(pb)
    if args.init_state == "const":
        for lin in (model.init_h, model.init_c):
            lin.weight.data.zero_()
            lin.weight.requires_grad_(False)
    del tr_feats, dv_feats
    opt = torch.optim.Adam([q for q in model.parameters() if q.requires_grad], lr=args.lr)
    print("parameters: %d" % sat.param_count(model), flush=True)
    rng = random.Random(args.seed)
    state = dict(epoch=0, step=0, best=-1.0, history=[], train_seconds=0.0)
    if args.resume and os.path.exists(os.path.join(run_dir, "last.pt")):
        ck = torch.load(os.path.join(run_dir, "last.pt"))
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        state = ck["state"]
        rng.setstate(ck["py_rng"])
        torch.set_rng_state(ck["torch_rng"])
        assert ck["itos"] == itos, "vocabulary changed since the checkpoint"
        print("resumed at epoch %d step %d" % (state["epoch"], state["step"]), flush=True)

    def save(name, extra=None):
        # mid-epoch checkpoints keep the RNG as it was before this epoch's shuffle, so a resumed run rebuilds
        # the same batch order and continues at state["batch_in_epoch"].
        py_rng = rng_at_epoch_start if state.get("batch_in_epoch", 0) else rng.getstate()
        ck = dict(model=model.state_dict(), opt=opt.state_dict(), state=state, py_rng=py_rng,
                  torch_rng=torch.get_rng_state(), itos=itos, hp=hp, args=vars(args), task=args.task)
        if extra:
            ck.update(extra)
        torch.save(ck, os.path.join(run_dir, name + ".tmp"))
        os.replace(os.path.join(run_dir, name + ".tmp"), os.path.join(run_dir, name))

    sup = None
    if args.att_sup > 0:
        assert args.task == "shapes", "--att-sup needs the shapes boxes"
        tr_scenes = json.load(open(os.path.join(args.cache_dir, "shapes_train.json")))["scenes"][:n_train_images]
        sup = [box_cell_targets(sc, args.max_len) for sc in tr_scenes]
    lengths = [len(c) for _, c in pairs]
    total_steps = args.epochs * ((len(pairs) + args.batch - 1) // args.batch)
    stop = False
    rng_at_epoch_start = rng.getstate()
    seg_start = time.time()
    while state["epoch"] < args.epochs and not stop:
        model.train()
        rng_at_epoch_start = rng.getstate()
        batches = make_batches(lengths, args.batch, rng)
        start_b = state.get("batch_in_epoch", 0)
        tl, tn = 0.0, 0
        for bi in range(start_b, len(batches)):
            if (time.time() - t0) / 60 > args.max_minutes:
                stop = True
                state["batch_in_epoch"] = bi
                break
            b = batches[bi]
            T = max(lengths[i] for i in b)
            cap = torch.zeros(len(b), T, dtype=torch.long)
            for r, i in enumerate(b):
                cap[r, :lengths[i]] = torch.tensor(pairs[i][1])
            f = torch.from_numpy(tr_p[[pairs[i][0] for i in b]])
            for g in opt.param_groups:
                g["lr"] = sat.cosine_lr(state["step"], total_steps, args.lr)
            logits, alphas = model(f, cap)
            loss, ce, reg = sat.caption_loss(logits, alphas, cap, args.lam)
            if sup is not None:
                tgt = torch.zeros(len(b), T - 1, alphas.size(2))
                for r, i in enumerate(b):
                    m = sup[pairs[i][0]]
                    tgt[r, :m.shape[0]] = torch.from_numpy(m[:T - 1])
                on = tgt.sum(2) > 0
                if bool(on.any()):
                    mass = (alphas * tgt).sum(2)[on]
                    loss = loss + args.att_sup * -torch.log(mass + 1e-6).mean()
            if cam_targets is not None:
                tgt = torch.zeros(len(b), T - 1, alphas.size(2))
                for r, i in enumerate(b):
                    ct = cam_targets[pairs[i][0]]
                    for j, w in enumerate(pairs[i][1][1:-1]):
                        if w in ct:
                            tgt[r, j] = ct[w]
                on = tgt.sum(2) > 0
                if bool(on.any()):
                    xent = -(tgt * torch.log(alphas + 1e-8)).sum(2)[on]
                    loss = loss + args.cam_sup * xent.mean()
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            state["step"] += 1
            tl += float(ce)
            tn += 1
            if state["step"] % 100 == 0:
                print("ep %d step %d ce %.3f reg %.3f  %.1f min" % (state["epoch"], state["step"], tl / tn,
                                                                  float(reg), (time.time() - t0) / 60), flush=True)
        state["train_seconds"] += time.time() - seg_start
        seg_start = time.time()
        if stop:
            save("last.pt")
            print("max-minutes reached; saved last.pt (resume with --resume)", flush=True)
            break
        state["epoch"] += 1
        state["batch_in_epoch"] = 0
        score, scores, hyps = evaluate(model, args.task, dv_p, dv_caps, itos, args.max_len, scenes=dv_scenes)
        state["history"].append(dict(epoch=state["epoch"], train_ce=tl / max(tn, 1), dev=scores,
                                     minutes=state["train_seconds"] / 60))
        print("epoch %d dev %s  (%.1f min training)  e.g. %r" % (state["epoch"], json.dumps(
            {k: round(v, 2) for k, v in scores.items()}), state["train_seconds"] / 60, hyps[:3]), flush=True)
        if score > state["best"]:
            state["best"] = score
            save("best.pt")
            print("  new best", flush=True)
        save("last.pt")
    print("done: best dev %.2f, %.1f min of training" % (state["best"], state["train_seconds"] / 60), flush=True)


if __name__ == "__main__":
    main()
