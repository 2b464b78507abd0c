"""Train one VQA variant (coattn | aoa) on the cached shapes scene features, select on dev, checkpoint every epoch.

  flock /tmp/attnlens-train.lock /usr/bin/python3 models/training/vqa/train.py --variant coattn --max-minutes 12
  (--resume continues from runs/<variant>/last.pt)

Data: cache/shapes_{train,dev}*.npy + .json (run_features.sh writes them with ../captioning/make_shapes.py);
questions from questions.py (train scenes -> training questions, dev scenes -> selection). The test scenes are not
read here.

Regions: the 1280 MobileNetV2 channels are reduced by a PCA fitted on training cells (PCA_DIMS components, divided
by one scale) before the region layer, to make training cheap; export.py folds the PCA into the region layer, so the
bundle's region layer reads the 1285 channels of the grid directly.

Loss = cross-entropy of the answer
     + att_weight * (-log of the question-level region attention's mass on the cells inside target_s's boxes)
     + 0.5 * att_weight * (the same for the word-level attention and target_w; for relations, the mean of
       -log mass on A and -log mass on B, so that both get attention)
     + count_weight * (squared error of the density m towards questions.density of the counted objects, summed
       over cells; count questions only)
The attention terms are the box supervision of the synthetic training scenes (the shapes captioner does the same;
say so in the model card). Questions without named objects (a count of 0) have no attention term.
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import model as M  # noqa: E402
import questions as Q  # noqa: E402

PCA_DIMS = 192


def load_split(cache, split):
    meta = json.load(open(os.path.join(cache, "shapes_%s.json" % split)))
    feats = np.load(os.path.join(cache, "shapes_%s_grid7.npy" % split), mmap_mode="r")
    rgb = np.load(os.path.join(cache, "shapes_%s_rgb7.npy" % split))
    n = min(len(meta["scenes"]), feats.shape[0], rgb.shape[0])
    return meta["seed"], meta["scenes"][:n], feats, rgb[:n]


def cell_position():
    g = Q.GRID
    r, c = np.meshgrid(np.arange(g), np.arange(g), indexing="ij")
    return np.stack([(c.ravel() + 0.5) / g * 2 - 1, (r.ravel() + 0.5) / g * 2 - 1], 1).astype(np.float32)


def fit_pca(feats, n_cells=30000, seed=0):
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, feats.shape[0] * feats.shape[1], size=n_cells)
    x = np.asarray(feats.reshape(-1, feats.shape[2])[np.sort(pick)], np.float64)
    mean = x.mean(0)
    cov = np.cov((x - mean).T)
    w, vecs = np.linalg.eigh(cov)
    comps = vecs[:, ::-1][:, :PCA_DIMS]                               # [1280, PCA_DIMS]
    scale = float(np.sqrt(w[::-1][:PCA_DIMS].sum() / PCA_DIMS))      # unit mean variance per component
    return dict(mean=mean.astype(np.float32), comps=comps.astype(np.float32), scale=scale)


def reduce_grid(feats, rgb, pca, chunk=256):
    """[n, 49, 1280] f16 + [n, 49, 3] -> [n, 49, PCA_DIMS + 5] f32 (PCA, rgb, xy)."""
    n = feats.shape[0]
    out = np.zeros((n, 49, PCA_DIMS + 5), np.float32)
    xy = cell_position()
    for s in range(0, n, chunk):
        f = np.asarray(feats[s:s + chunk], np.float32)
        out[s:s + chunk, :, :PCA_DIMS] = ((f - pca["mean"]) @ pca["comps"]) / pca["scale"]
    out[:, :, PCA_DIMS:PCA_DIMS + 3] = rgb
    out[:, :, PCA_DIMS + 3:] = xy
    return out


def build_questions(scenes, split_seed, balance_seed):
    qs = Q.split_questions(scenes, split_seed, balance_seed)
    ans = {a: i for i, a in enumerate(Q.ANSWERS)}
    for q in qs:
        objs = scenes[q["scene"]]["objects"]
        q["tokens"], q["ids"] = Q.encode(q["text"])
        q["label"] = ans[q["answer"]]
        q["mask_s"] = Q.cells_in_boxes(objs, q["target_s"])
        q["mask_w"] = np.zeros((3, 49), np.float32)   # one row per object of target_w (at most 3)
        for j, k in enumerate(q["target_w"]):
            q["mask_w"][j] = Q.cells_in_boxes(objs, [k])
        q["density"] = Q.density(objs, q["target_s"]) if q["type"] == "count" else None
    return qs


def batches(qs, batch, rng=None):
    """Index lists of equal-length questions (no padding: the engine runs one unpadded question)."""
    by = {}
    for i, q in enumerate(qs):
        by.setdefault(len(q["ids"]), []).append(i)
    out = []
    for idx in by.values():
        idx = list(idx)
        if rng is not None:
            rng.shuffle(idx)
        out += [idx[s:s + batch] for s in range(0, len(idx), batch)]
    if rng is not None:
        rng.shuffle(out)
    return out


def tensors(qs, idx, grids):
    g = torch.from_numpy(grids[[qs[i]["scene"] for i in idx]])
    ids = torch.tensor([qs[i]["ids"] for i in idx], dtype=torch.long)
    return g, ids


def loss_of(out, qs, idx, att_weight, count_weight):
    labels = torch.tensor([qs[i]["label"] for i in idx])
    loss = F.cross_entropy(out["logits"], labels)
    mask_s = torch.from_numpy(np.stack([qs[i]["mask_s"] for i in idx]))             # [b, 49]
    mask_w = torch.from_numpy(np.stack([qs[i]["mask_w"] for i in idx]))             # [b, 3, 49]
    has_s = (mask_s.sum(1) > 0).float()
    has_w = (mask_w.sum(2) > 0).float()                                             # [b, 3]
    att_s = -torch.log((out["s/region"] * mask_s).sum(1) + 1e-6) * has_s
    mass_w = (out["w/region"].unsqueeze(1) * mask_w).sum(2)                         # [b, 3]
    att_w = (-torch.log(mass_w + 1e-6) * has_w).sum(1) / has_w.sum(1).clamp(min=1)
    loss = loss + att_weight * (att_s + 0.5 * att_w).mean()
    cnt = [j for j, i in enumerate(idx) if qs[i]["density"] is not None]
    if cnt:
        target = torch.from_numpy(np.stack([qs[idx[j]]["density"] for j in cnt]))
        loss = loss + count_weight * ((out["density"][cnt] - target) ** 2).sum(1).mean() * len(cnt) / len(idx)
    return loss


def evaluate(model, qs, grids, scenes, batch=256):
    """-> dict: accuracy per type and overall, grounding per type and overall (question-level region attention)."""
    model.eval()
    right, total, ground, ground_n = {}, {}, {}, {}
    with torch.no_grad():
        for idx in batches(qs, batch):
            g, ids = tensors(qs, idx, grids)
            out = model(g, ids)
            pred = out["logits"].argmax(1).numpy()
            region = out["s/region"].numpy()
            for j, i in enumerate(idx):
                q = qs[i]
                t = q["type"]
                total[t] = total.get(t, 0) + 1
                right[t] = right.get(t, 0) + int(pred[j] == q["label"])
                if q["grounded"] is not None:
                    box = scenes[q["scene"]]["objects"][q["grounded"]]["box"]
                    ground_n[t] = ground_n.get(t, 0) + 1
                    ground[t] = ground.get(t, 0) + int(Q.peak_in_box(region[j], box))
    res = {"accuracy": {t: right[t] / total[t] for t in total}, "n": dict(total),
           "grounding": {t: ground[t] / ground_n[t] for t in ground_n}, "grounding_n": dict(ground_n)}
    res["accuracy"]["all"] = sum(right.values()) / sum(total.values())
    res["grounding"]["all"] = sum(ground.values()) / max(1, sum(ground_n.values()))
    model.train()
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--variant", choices=("coattn", "aoa"), required=True)
    ap.add_argument("--cache", default=os.path.join(HERE, "cache"))
    ap.add_argument("--runs", default=os.path.join(HERE, "runs"))
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--att-weight", type=float, default=1.0)
    ap.add_argument("--count-weight", type=float, default=1.0)
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--max-minutes", type=float, default=10.0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--no-where", action="store_true", help="the first bundles' model: no relation readout")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    t0 = time.time()
    run = os.path.join(args.runs, args.variant)
    os.makedirs(run, exist_ok=True)

    tr_seed, tr_scenes, tr_feats, tr_rgb = load_split(args.cache, "train")
    dv_seed, dv_scenes, dv_feats, dv_rgb = load_split(args.cache, "dev")
    pca_path = os.path.join(args.runs, "pca.npz")
    if os.path.exists(pca_path):
        z = np.load(pca_path)
        pca = dict(mean=z["mean"], comps=z["comps"], scale=float(z["scale"]))
    else:
        pca = fit_pca(tr_feats[:len(tr_scenes)])
        np.savez(pca_path, **pca)
    tr_grid = reduce_grid(tr_feats[:len(tr_scenes)], tr_rgb, pca)
    dv_grid = reduce_grid(dv_feats[:len(dv_scenes)], dv_rgb, pca)
    tr_q = build_questions(tr_scenes, tr_seed, 11)
    dv_q = build_questions(dv_scenes, dv_seed, 22)
    print("train %d scenes %d questions, dev %d scenes %d questions, prep %.0fs" %
          (len(tr_scenes), len(tr_q), len(dv_scenes), len(dv_q), time.time() - t0), flush=True)

    model = M.VQAModel(args.variant, region_in=M.GRID_DIM - 1280 + PCA_DIMS, where=not args.no_where)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    start, best = 0, -1.0
    last = os.path.join(run, "last.pt")
    if args.resume and os.path.exists(last):
        ck = torch.load(last)
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        start, best = ck["epoch"] + 1, ck["best"]
        print("resumed after epoch %d (best %.4f)" % (ck["epoch"], best), flush=True)
    rng = np.random.default_rng(args.seed)
    for _ in range(start):
        rng.random()
    sched = lambda ep: args.lr * (0.5 ** max(0, (ep - 10) // 4))  # noqa: E731
    for ep in range(start, args.epochs):
        for group in opt.param_groups:
            group["lr"] = sched(ep)
        tl, nb = 0.0, 0
        for idx in batches(tr_q, args.batch, np.random.default_rng([args.seed, ep])):
            g, ids = tensors(tr_q, idx, tr_grid)
            out = model(g, ids, drop=args.dropout)
            loss = loss_of(out, tr_q, idx, args.att_weight, args.count_weight)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            tl += loss.item()
            nb += 1
        res = evaluate(model, dv_q, dv_grid, dv_scenes)
        score = res["accuracy"]["all"] + res["grounding"]["all"]
        print("epoch %d loss %.4f dev acc %s ground %s  %.1f min" % (
            ep, tl / nb, {k: round(v, 4) for k, v in res["accuracy"].items()},
            {k: round(v, 4) for k, v in res["grounding"].items()}, (time.time() - t0) / 60), flush=True)
        state = dict(model=model.state_dict(), variant=args.variant, pca_dims=PCA_DIMS, args=vars(args), epoch=ep,
                     dev=res)
        if score > best:
            best = score
            torch.save(state, os.path.join(run, "best.pt"))
            json.dump(dict(epoch=ep, dev=res), open(os.path.join(run, "best.json"), "w"), indent=1)
        torch.save(dict(state, opt=opt.state_dict(), best=best), last)
        if (time.time() - t0) / 60 > args.max_minutes:
            print("max-minutes reached after epoch %d; --resume continues" % ep, flush=True)
            break
    print("done, best dev score %.4f" % best, flush=True)


if __name__ == "__main__":
    main()
