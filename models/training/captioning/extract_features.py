"""Precompute MobileNetV2 grid features for the 8000 Flickr8k split images (train 6000, dev 1000, test 1000).

Each 160x160 JPEG from flickr8k_images_160.tar is decoded with PIL to RGB, then goes through exactly the engine's
preprocessing (mobilenet.preprocess_rgba: bilinear half-pixel resize to 224, x/127.5-1) and the frozen encoder.
Writes to models/training/captioning/cache/ (gitignored):
  flickr8k_<split>_grid7.npy   float16 [N, 49, 1280]  output of `features` (7x7, stride 32), row-major grid
  flickr8k_<split>_grid14.npy  float16 [N, 196, 96]   output of features.13 (14x14, stride 16), the alternative map
  flickr8k_<split>_names.json  image names in split-file order
Resumable: a chunk already written (progress file) is skipped; --max-minutes stops cleanly between batches.

Run (under the team lock):
  nohup flock /tmp/attnlens-train.lock /usr/bin/python3 models/training/captioning/extract_features.py \
      > models/training/captioning/runs/extract.log 2>&1 &
"""
import argparse
import io
import json
import os
import sys
import tarfile
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mobilenet  # noqa: E402

SPLITS = {"train": "Flickr_8k.trainImages.txt", "dev": "Flickr_8k.devImages.txt", "test": "Flickr_8k.testImages.txt"}


def read_split(data_dir, split):
    with open(os.path.join(data_dir, "flickr8k", SPLITS[split])) as f:
        return [ln.strip() for ln in f if ln.strip()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=mobilenet.DEFAULT_DATA_DIR)
    ap.add_argument("--cache-dir", default=os.path.join(HERE, "cache"))
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--splits", nargs="+", default=["train", "dev", "test"], choices=["train", "dev", "test"],
                    help="which splits (training needs train and dev; test only for evaluate.py --checkpoint)")
    ap.add_argument("--max-minutes", type=float, default=30.0)
    args = mobilenet.parse_args_with_threads(ap)
    os.makedirs(args.cache_dir, exist_ok=True)
    t_start = time.time()
    model = mobilenet.build_mobilenet_v2(data_dir=args.data_dir)
    grid14 = {}
    model.features[13].register_forward_hook(lambda m, i, o: grid14.__setitem__("x", o))

    tar_path = os.path.join(args.data_dir, "flickr8k", "flickr8k_images_160.tar")
    print("reading", tar_path, flush=True)
    with tarfile.open(tar_path) as tar:
        members = {os.path.basename(m.name): m for m in tar.getmembers() if m.isfile()}
        for split in args.splits:
            names = read_split(args.data_dir, split)
            n = len(names)
            json.dump(names, open(os.path.join(args.cache_dir, "flickr8k_%s_names.json" % split), "w"))
            p7 = os.path.join(args.cache_dir, "flickr8k_%s_grid7.npy" % split)
            p14 = os.path.join(args.cache_dir, "flickr8k_%s_grid14.npy" % split)
            prog = os.path.join(args.cache_dir, "flickr8k_%s_progress.txt" % split)
            done = int(open(prog).read()) if os.path.exists(prog) else 0
            mode = "r+" if done > 0 else "w+"
            f7 = np.lib.format.open_memmap(p7, mode=mode, dtype=np.float16, shape=(n, 49, 1280))
            f14 = np.lib.format.open_memmap(p14, mode=mode, dtype=np.float16, shape=(n, 196, 96))
            for start in range(done, n, args.batch):
                if (time.time() - t_start) / 60 > args.max_minutes:
                    print("max-minutes reached at %s %d/%d; rerun to resume" % (split, start, n), flush=True)
                    return
                batch = names[start:start + args.batch]
                xs = [mobilenet.preprocess_rgba(mobilenet.load_image_rgb(io.BytesIO(
                    tar.extractfile(members[nm]).read()))) for nm in batch]
                with torch.no_grad():
                    g = mobilenet.grid_features(model, torch.stack(xs))
                f7[start:start + len(batch)] = g.numpy().astype(np.float16)
                f14[start:start + len(batch)] = grid14["x"].flatten(2).transpose(1, 2).numpy().astype(np.float16)
                f7.flush()
                f14.flush()
                with open(prog, "w") as f:
                    f.write(str(start + len(batch)))
                if (start // args.batch) % 20 == 0:
                    el = time.time() - t_start
                    print("%s %d/%d  %.0fs" % (split, start + len(batch), n, el), flush=True)
            del f7, f14
            print("done", split, "%.0fs" % (time.time() - t_start), flush=True)
    print("all done in %.1f min" % ((time.time() - t_start) / 60), flush=True)


if __name__ == "__main__":
    main()
