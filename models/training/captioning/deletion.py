"""Deletion test of the ENGINE's per-word attention (faithfulness without boxes; Petsiuk et al. 2018, RISE): does
hiding where the model looked for a word lower that word's probability more than hiding a random region of the
same size?

  cmake --build build --target attnlens-cli
  /usr/bin/python3 models/training/captioning/deletion.py --bundle models/flickr8k-mobilenet --cli build/attnlens-cli \\
      --split test [--out results.json]

For every photo of the split (all 1000 Flickr8k test photos unless --limit; each decoded with PIL to RGB, 160x160)
and its first gold caption (Flickr8k.token.txt #0), through `attnlens-cli caption --forced --json --attentions`:
  1. teacher forcing of the caption on the photo: per word t, log p_t and the attention alpha_t over the g x g grid
     (g = the bundle's image.input_size / 32: 7 at 224);
  2. for each counted word t: the photo with its K = ceil(0.25 * g * g) most attended cells (7x7: 13 cells, 26.5% of
     the image) filled with the photo's mean colour; teacher forcing again; drop_top(t) = log p_t - log p_t(masked);
  3. R = 3 random sets of K cells per photo (numpy default_rng(seed + photo index), the same sets for all of the
     photo's words), filled the same way; drop_rand(t) = the mean over the R sets of log p_t - log p_t(masked).
A grid cell (r, c) is the pixel block rows [round(r*H/g), round((r+1)*H/g)), columns likewise; the engine resizes the
photo to the input size itself, so a cell is the 32x32 input block its feature comes from. Counted words (--words):
"content" (the default) = every word of the caption that is in the vocabulary, is not punctuation and is not a
function word (STOP below: articles, prepositions, forms of "be", pronouns, small numerals), i.e. the nouns, verbs
and adjectives whose evidence is in the image; "all" also counts the function words (costs twice the engine runs).
Reported: words, mean drop_top, mean drop_rand, their ratio, the share of words with drop_top > drop_rand, and a
95% bootstrap interval (1000 resamples of photos) of mean(drop_top - drop_rand).
"""
import json
import math
import os
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from engine_io import engine_parser, flickr8k_captions, photo_tar, run_cli, split_names, write_ppm  # noqa: E402

SHARE = 0.25
STOP = set("a an the and or of in on at to into onto with without by for from near next over under up down out off "
           "is are was were be being been it its his her their he she they them this that these those there while "
           "as through across along around behind front top another other each some two three one".split())


def grid_side(bundle_dir):
    """g: the bundle's image.input_size / 32 (7 when it names none)."""
    cfg = json.load(open(os.path.join(bundle_dir, "config.json")))
    return int(cfg.get("image", {}).get("input_size", [224])[0]) // 32


def cells_hidden(grid):
    """K: the cells hidden per masked copy, ceil(0.25 * g * g) (7x7: 13, 26.5% of the image)."""
    return math.ceil(SHARE * grid * grid)


def masked(rgb, cells, fill, grid):
    """rgb with the cells `cells` (ids r*grid+c) of a grid x grid partition set to `fill`."""
    out = rgb.copy()
    h, w, _ = rgb.shape
    for cell in cells:
        r, c = divmod(int(cell), grid)
        out[round(r * h / grid):round((r + 1) * h / grid), round(c * w / grid):round((c + 1) * w / grid)] = fill
    return out


def run_forced(cli, bundle, encoder, lines, with_attention):
    """lines: (path, caption) -> the CLI's JSON results, in order."""
    cmd = [cli, "caption", "--model", bundle, "--forced", "--json"] + (["--attentions"] if with_attention else [])
    if encoder:
        cmd += ["--encoder", encoder]
    out = run_cli(cmd, "".join("%s\t%s\n" % pc for pc in lines))
    assert len(out) == len(lines), (len(out), len(lines))
    return out


def counted(tokens, content_only=False):
    """Positions of counted words: in the vocabulary, not punctuation, not <end> (and not in STOP)."""
    return [t for t, w in enumerate(tokens[:-1]) if w != "<unk>" and any(ch.isalnum() for ch in w)
            and not (content_only and w in STOP)]


def summary(rows, n_photos, seed):
    """rows: (photo index, drop_top, drop_rand)."""
    if not rows:
        return dict(words=0)
    top = np.array([r[1] for r in rows])
    rnd = np.array([r[2] for r in rows])
    photo = np.array([r[0] for r in rows])
    diff = top - rnd
    # bootstrap over photos: resample photos with replacement, all their words come along
    by_photo = {}
    for i, p in enumerate(photo):
        by_photo.setdefault(int(p), []).append(i)
    keys = sorted(by_photo)
    rng = np.random.default_rng(seed)
    means = []
    for _ in range(1000):
        pick = rng.integers(0, len(keys), len(keys))
        idx = np.concatenate([by_photo[keys[j]] for j in pick])
        means.append(float(diff[idx].mean()))
    lo, hi = np.percentile(means, [2.5, 97.5])
    return dict(words=len(rows), photos=len(keys), mean_drop_top=float(top.mean()), mean_drop_random=float(rnd.mean()),
                ratio=float(top.mean() / rnd.mean()) if rnd.mean() != 0 else None,
                share_top_greater=float((diff > 0).mean()), mean_diff=float(diff.mean()),
                diff_ci95=[float(lo), float(hi)])


def main():
    ap = engine_parser()
    ap.add_argument("--words", choices=["content", "all"], default="content")
    ap.add_argument("--random-regions", type=int, default=3)
    ap.add_argument("--seed", type=int, default=2018)
    ap.add_argument("--limit", type=int, default=0, help="first N photos only (smoke runs; report the full set)")
    ap.add_argument("--chunk", type=int, default=50, help="photos per CLI call (bounds the temporary files)")
    ap.add_argument("--out", help="write the figures and per-word drops as JSON here")
    args = ap.parse_args()
    grid = grid_side(args.bundle)
    hidden = cells_hidden(grid)
    names = split_names(args.data_dir, args.split)
    if args.limit:
        names = names[:args.limit]
    caps = {n: c[0] for n, c in flickr8k_captions(args.data_dir).items()}
    rows = {"all": [], "content": []} if args.words == "all" else {"content": []}
    per_word = []
    t0 = time.time()
    with photo_tar(os.path.join(args.data_dir, "flickr8k", "flickr8k_images_160.tar")) as photo_rgb, \
            tempfile.TemporaryDirectory(prefix="attnlens-deletion-") as tmp:
        for c0 in range(0, len(names), args.chunk):
            chunk = list(range(c0, min(c0 + args.chunk, len(names))))
            photos = {}
            for i in chunk:
                photos[i] = photo_rgb(names[i])
            # 1. the photos as they are
            lines = []
            for i in chunk:
                p = os.path.join(tmp, "%05d.ppm" % i)
                write_ppm(p, photos[i])
                lines.append((p, caps[names[i]]))
            base = dict(zip(chunk, run_forced(args.cli, args.bundle, args.encoder, lines, True)))
            # 2./3. masked copies: the top cells of each counted word, and R random cell sets per photo
            lines, keys = [], []
            for i in chunk:
                b = base[i]
                assert b["attention"]["dims"][1:] == [grid, grid], b["attention"]["dims"]
                fill = np.round(photos[i].reshape(-1, 3).mean(0)).astype(np.uint8)
                att = np.array(b["attention"]["data"], np.float32).reshape(-1, grid * grid)
                rng = np.random.default_rng(args.seed + i)
                for r in range(args.random_regions):
                    p = os.path.join(tmp, "%05d_rand%d.ppm" % (i, r))
                    write_ppm(p, masked(photos[i], rng.choice(grid * grid, hidden, replace=False), fill, grid))
                    lines.append((p, caps[names[i]]))
                    keys.append((i, "rand", r))
                for t in counted(b["tokens"], args.words == "content"):
                    top = np.argsort(-att[t], kind="stable")[:hidden]
                    p = os.path.join(tmp, "%05d_top%d.ppm" % (i, t))
                    write_ppm(p, masked(photos[i], top, fill, grid))
                    lines.append((p, caps[names[i]]))
                    keys.append((i, "top", t))
            res = dict(zip(keys, run_forced(args.cli, args.bundle, args.encoder, lines, False)))
            for i in chunk:
                b = base[i]
                lp = b["token_logprobs"]
                for t in counted(b["tokens"], args.words == "content"):
                    drop_top = lp[t] - res[(i, "top", t)]["token_logprobs"][t]
                    drop_rand = float(np.mean([lp[t] - res[(i, "rand", r)]["token_logprobs"][t]
                                               for r in range(args.random_regions)]))
                    w = b["tokens"][t]
                    if "all" in rows:
                        rows["all"].append((i, drop_top, drop_rand))
                    if w not in STOP:
                        rows["content"].append((i, drop_top, drop_rand))
                    per_word.append(dict(image=names[i], position=t, word=w, logprob=lp[t], drop_top=drop_top,
                                         drop_random=drop_rand))
            for f in os.listdir(tmp):
                os.remove(os.path.join(tmp, f))
            print("%d/%d photos, %d words (%.0f s)" % (chunk[-1] + 1, len(names), len(per_word), time.time() - t0),
                  flush=True)
    figures = {k: summary(v, len(names), args.seed) for k, v in rows.items()}
    print("deletion test, %s, %d photos (first gold caption each), K = %d of %d cells (%.1f%% of the image), "
          "%d random regions per photo:" % (args.split, len(names), hidden, grid * grid, 100.0 * hidden / (grid * grid),
                                            args.random_regions))
    for k, s in figures.items():
        if s["words"]:
            print("  %-8s words %5d: mean drop in log p  top-attended %.3f  random %.3f  ratio %.2f  top > random "
                  "for %.1f%%  mean(top - random) %.3f [95%% CI %.3f, %.3f]" % (
                      k, s["words"], s["mean_drop_top"], s["mean_drop_random"], s["ratio"] or float("nan"),
                      100 * s["share_top_greater"], s["mean_diff"], s["diff_ci95"][0], s["diff_ci95"][1]))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(dict(command=" ".join(sys.argv), split=args.split, photos=len(names), cells=hidden,
                           random_regions=args.random_regions, figures=figures, words=per_word), f, indent=1)


if __name__ == "__main__":
    main()
