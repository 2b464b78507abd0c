"""Generate the synthetic shapes scenes (shapes.py) and their MobileNetV2 grid features.

Writes to models/training/captioning/cache/ (gitignored; everything is rebuilt from the seeds):
  shapes_<split>.json         {"seed", "scenes": [{id, objects (shape, colour, size, box [x0,y0,x1,y1) px in the
                              224x224 image), relations, caption, word_objects}]}
  shapes_<split>_grid7.npy    float16 [N, 49, 1280] (same encoder and preprocessing as Flickr8k)
  shapes_<split>_rgb7.npy     float32 [N, 49, 3] mean input colour per grid cell (mobilenet.cell_colour)
Resumable per split (progress file); --max-minutes stops cleanly.

Run (under the team lock):
  nohup flock /tmp/attnlens-train.lock /usr/bin/python3 models/training/captioning/make_shapes.py \
      > models/training/captioning/runs/make_shapes.log 2>&1 &
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mobilenet  # noqa: E402
import shapes  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=mobilenet.DEFAULT_DATA_DIR)
    ap.add_argument("--cache-dir", default=os.path.join(HERE, "cache"))
    ap.add_argument("--train", type=int, default=4000)
    ap.add_argument("--dev", type=int, default=300)
    ap.add_argument("--test", type=int, default=500)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--max-minutes", type=float, default=15.0)
    args = mobilenet.parse_args_with_threads(ap)
    t0 = time.time()
    os.makedirs(args.cache_dir, exist_ok=True)
    model = mobilenet.build_mobilenet_v2(data_dir=args.data_dir)
    for split in ("dev", "test", "train"):
        n = getattr(args, split)
        seed = shapes.SPLIT_SEEDS[split]
        meta_path = os.path.join(args.cache_dir, "shapes_%s.json" % split)
        feat_path = os.path.join(args.cache_dir, "shapes_%s_grid7.npy" % split)
        prog = os.path.join(args.cache_dir, "shapes_%s_progress.txt" % split)
        done = int(open(prog).read()) if os.path.exists(prog) else 0
        if done and np.load(feat_path, mmap_mode="r").shape[0] != n:
            # the split grows (or shrinks): scenes are a function of (seed, index), so keep the first ones
            old = np.load(feat_path, mmap_mode="r")
            done = min(done, n, old.shape[0])
            tmp = feat_path + ".resize.npy"
            new = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float16, shape=(n, 49, 1280))
            new[:done] = old[:done]
            new.flush()
            del new, old
            os.replace(tmp, feat_path)
            meta = json.load(open(meta_path))
            meta["scenes"] = meta["scenes"][:done]
            json.dump(meta, open(meta_path, "w"))
            with open(prog, "w") as f:
                f.write(str(done))
            print("%s: resized to %d scenes, keeping %d" % (split, n, done), flush=True)
        feats = np.lib.format.open_memmap(feat_path, mode="r+" if done else "w+", dtype=np.float16,
                                          shape=(n, 49, 1280))
        scenes = json.load(open(meta_path))["scenes"] if done else []
        for start in range(done, n, args.batch):
            if (time.time() - t0) / 60 > args.max_minutes:
                print("max-minutes reached at %s %d/%d; rerun to resume" % (split, start, n), flush=True)
                return
            xs = []
            for i in range(start, min(n, start + args.batch)):
                px, meta = shapes.make_scene(seed, i)
                scenes.append(meta)
                xs.append(mobilenet.preprocess_rgba(px))
            with torch.no_grad():
                feats[start:start + len(xs)] = mobilenet.grid_features(model, torch.stack(xs)).numpy()
            feats.flush()
            json.dump(dict(seed=seed, scenes=scenes), open(meta_path, "w"))
            with open(prog, "w") as f:
                f.write(str(start + len(xs)))
            if (start // args.batch) % 20 == 0:
                print("%s %d/%d %.0fs" % (split, start + len(xs), n, time.time() - t0), flush=True)
        del feats
        print("done", split, flush=True)
    # per-cell mean input colour (mobilenet.cell_colour) of every scene, float32 [N, 49, 3]: cheap, so it is a
    # separate resumable pass that re-renders the scenes
    for split in ("dev", "test", "train"):
        n = getattr(args, split)
        seed = shapes.SPLIT_SEEDS[split]
        path = os.path.join(args.cache_dir, "shapes_%s_rgb7.npy" % split)
        prog = os.path.join(args.cache_dir, "shapes_%s_rgb7_progress.txt" % split)
        done = int(open(prog).read()) if os.path.exists(prog) else 0
        old = np.load(path) if done else np.zeros((0, 49, 3), np.float32)
        done = min(done, n, old.shape[0])
        rgb = np.zeros((n, 49, 3), np.float32)
        rgb[:done] = old[:done]
        for start in range(done, n, 256):
            if (time.time() - t0) / 60 > args.max_minutes:
                print("max-minutes reached at %s colour %d/%d; rerun to resume" % (split, start, n), flush=True)
                return
            xs = [mobilenet.preprocess_rgba(shapes.make_scene(seed, i)[0]) for i in range(start, min(n, start + 256))]
            rgb[start:start + len(xs)] = mobilenet.cell_colour(torch.stack(xs)).numpy()
            np.save(path + ".tmp.npy", rgb)
            os.replace(path + ".tmp.npy", path)
            with open(prog, "w") as f:
                f.write(str(start + len(xs)))
        print("done colour", split, flush=True)
    print("all done in %.1f min" % ((time.time() - t0) / 60), flush=True)


if __name__ == "__main__":
    main()
