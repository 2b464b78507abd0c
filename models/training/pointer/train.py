"""Train the number-sorting pointer network (common.py has the model and the data).

Data is generated on the fly: every step draws one list length n in [--min-len, --max-len] and a batch of lists
from a mixture of value distributions (common.DISTRIBUTIONS); the target is the stable argsort. Teacher forcing:
the decoder reads the encoder state of the correct previous element and the already-sorted positions are masked.

Run (under the team's training lock; one thread is fastest on the shared machine, see ../sentiment/README.md):
  flock /tmp/attnlens-train.lock /usr/bin/python3 models/training/pointer/train.py \
      --run models/training/pointer/runs/main --steps 6000 --max-minutes 20 --threads 1
Re-running the same command resumes from <run>/last.pt. <run>/log.jsonl holds the monitor figures (exact-sequence
accuracy on 500 fresh U[0,1) lists of length 10, not the held-out sets of evaluate.py).
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

MIXTURE = {"uniform": 0.6, "int100": 0.1, "ints_small": 0.1, "normal": 0.1, "logspread": 0.1}


def monitor(model, seed=777, n=10, count=500):
    model.eval()
    rng = np.random.default_rng(seed)
    x, target, raw = common.batch(rng, count, n, "uniform")
    order, _, _ = model.sort_batch(x, raw)
    model.train()
    return float((order == target).all(dim=1).float().mean())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", required=True)
    ap.add_argument("--steps", type=int, default=6000)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--min-len", type=int, default=1)
    ap.add_argument("--max-len", type=int, default=10)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--min-lr", type=float, default=5e-5)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--clip", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--max-minutes", type=float, required=True)
    ap.add_argument("--max-cpu-seconds", type=float, default=None,
                    help="also stop (and save) after this much CPU time of this process")
    ap.add_argument("--save-every", type=int, default=250)
    for k, v in common.DEFAULT_CONFIG.items():
        ap.add_argument("--" + k.replace("_", "-"), type=int, default=v)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    os.makedirs(args.run, exist_ok=True)
    t0 = time.time()
    cpu0 = time.process_time()

    cfg = {k: getattr(args, k) for k in common.DEFAULT_CONFIG}
    torch.manual_seed(args.seed)
    model = common.build_model(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    step = 0
    rng = np.random.default_rng(args.seed)
    last = os.path.join(args.run, "last.pt")
    if os.path.exists(last):
        ck = torch.load(last)
        if ck["config"] != cfg:
            raise SystemExit(f"{last} was trained with {ck['config']}, not {cfg}")
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        step = ck["step"]
        rng.bit_generator.state = ck["rng"]
        print(f"resumed at step {step}", flush=True)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{n_params} parameters, config {cfg}", flush=True)

    def save():
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step, "config": cfg,
                    "rng": rng.bit_generator.state, "args": vars(args)}, last + ".tmp")
        os.replace(last + ".tmp", last)

    dists = list(MIXTURE)
    weights = np.array([MIXTURE[d] for d in dists])
    model.train()
    log = open(os.path.join(args.run, "log.jsonl"), "a")
    running = []
    while step < args.steps:
        if (time.time() - t0) / 60 > args.max_minutes or (
                args.max_cpu_seconds is not None and time.process_time() - cpu0 > args.max_cpu_seconds):
            save()
            print(f"stopped at step {step} (time budget); re-run to resume", flush=True)
            return
        lr = args.lr * min(1.0, (step + 1) / args.warmup)
        lr = args.min_lr + (lr - args.min_lr) * 0.5 * (1 + math.cos(math.pi * step / args.steps))
        for g in opt.param_groups:
            g["lr"] = lr
        n = int(rng.integers(args.min_len, args.max_len + 1))
        dist = dists[int(rng.choice(len(dists), p=weights))]
        x, target, _ = common.batch(rng, args.batch_size, n, dist)
        loss = model.forward_teacher(x, target)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        opt.step()
        step += 1
        running.append(float(loss))
        if step % args.save_every == 0 or step == args.steps:
            acc = monitor(model)
            rec = {"step": step, "loss": float(np.mean(running)), "lr": lr, "exact10_uniform_monitor": acc,
                   "minutes": (time.time() - t0) / 60}
            running = []
            print(json.dumps(rec), flush=True)
            log.write(json.dumps(rec) + "\n")
            log.flush()
            save()
    print("done", flush=True)


if __name__ == "__main__":
    main()
