"""Many sst2-selfattn trainings at once on one GPU, inside a wall-clock budget, scored on the full dev set.

  python3 models/training/sentiment/gpu_sweep.py --data-dir .gpu --vectors .gpu/sst2/vec_ppmi200.npy \
      --runs-dir .gpu/runs --out .gpu/out --minutes 6.5

Each run is `train.py --model selfattn --device DEVICE --threads 1 --schedule cosine-time` with its own flags (GRID),
--jobs at a time. A run launched at L gets a kill deadline D (its share of the budget); its --max-minutes leaves
room before D for start-up, dev evaluations and scoring, so its cosine schedule ends inside D however fast the
machine is. A run still training at D − --score-seconds, or still scoring at D, is killed and marked failed.
Scoring (in a subprocess, CPU, one thread): final.pt and best.pt with the embedding rounded to float16 (what
export.py writes into the bundle), one dev sentence at a time by evaluate.dev_accuracy.
Writes into --out at most 3 files: sweep.json (every run: flags, status, steps, epochs, train seconds, dev accuracy
of final.pt and best.pt, parameters, int8 weight bytes) and sst2-best1.pt, sst2-best2.pt: the final.pt of the two
runs with the best final.pt dev accuracy, embedding in float16 (export.py reads them).
--plant hang,crash (tests only) adds a run that never ends and one that fails.
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = ["--schedule", "cosine-time", "--warmup-steps", "200", "--ema", "0.999", "--epochs", "1000",
        "--evals-per-epoch", "1"]
# (name, flags): sizes keep the int8 bundle within ~0.4 MB of the shipped one (see int8_bytes and the README)
GRID = [
    ("b-s1", ["--sparse-embedding", "--seed", "1"]),
    ("b-s2", ["--sparse-embedding", "--seed", "2"]),
    ("b-s3", ["--sparse-embedding", "--seed", "3"]),
    ("dense-s1", ["--seed", "1"]),
    ("wd05-s1", ["--sparse-embedding", "--weight-decay", "0.05", "--seed", "1"]),
    ("wdrop10-s1", ["--sparse-embedding", "--word-dropout", "0.1", "--seed", "1"]),
    ("lr2e3-s1", ["--sparse-embedding", "--lr", "2e-3", "--seed", "1"]),
    ("emb03-s1", ["--sparse-embedding", "--emb-lr-scale", "0.3", "--seed", "1"]),
    ("u200-s1", ["--sparse-embedding", "--lstm-hidden", "200", "--seed", "1"]),
    ("u200-reg-s1", ["--sparse-embedding", "--lstm-hidden", "200", "--word-dropout", "0.1", "--weight-decay",
                     "0.05", "--seed", "1"]),
    ("hops8-s1", ["--sparse-embedding", "--hops", "8", "--seed", "1"]),
    ("mlp512-s1", ["--sparse-embedding", "--mlp-hidden", "512", "--seed", "1"]),
]
SCORE_SECONDS = 30.0  # default of --score-seconds
MAX_OUT_BYTES = 30_000_000


def int8_bytes(cfg):
    """Bytes of the weights as scripts/quantize.mjs writes them: 2-D tensors of >= 1024 values as int8 codes plus
    one float32 scale per row, everything else float32 (the safetensors header aside)."""
    E, u, d, r, m, V = (cfg[k] for k in ("emb_dim", "lstm_hidden", "att_hidden", "hops", "mlp_hidden",
                                          "vocab_size"))
    mats = [(V, E)] + [(4 * u, E), (4 * u, u)] * 2 + [(d, 2 * u), (r, d), (m, r * 2 * u), (2, m)]
    vecs = [4 * u] * 4 + [m, 2]
    total = sum(a * b + 4 * a if a * b >= 1024 else 4 * a * b for a, b in mats)
    return total + 4 * sum(vecs)


def score(run_dir, data_dir):
    """Subprocess: dev accuracy of final.pt and best.pt (float16 embedding) -> run_dir/score.json and
    run_dir/final-f16.pt."""
    import torch
    sys.path.insert(0, HERE)
    import common
    import evaluate
    torch.set_num_threads(1)
    dev = common.read_sst2(os.path.join(data_dir, "sst2", "dev.tsv"))
    out = {}
    for name in ("final", "best"):
        path = os.path.join(run_dir, f"{name}.pt")
        if not os.path.exists(path):
            continue
        ck = torch.load(path, map_location="cpu", weights_only=False)
        ck["model"]["embedding.weight"] = ck["model"]["embedding.weight"].half()
        model = common.build_model(ck["meta"]["cfg"])
        model.load_state_dict(ck["model"])
        out[name] = dict(evaluate.dev_accuracy(model, ck["meta"]["vocab"], dev), step=ck["state"]["step"],
                         epoch=ck["state"]["epoch"], train_seconds=ck["state"]["train_seconds"])
        if name == "final":
            out["cfg"] = ck["meta"]["cfg"]
            out["n_params"] = ck["meta"]["n_params"]
            torch.save(ck, os.path.join(run_dir, "final-f16.pt"))
    with open(os.path.join(run_dir, "score.json"), "w") as f:
        json.dump(out, f, indent=1)


def kill(proc):
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", required=True, help="folder with sst2/{train,dev}.tsv")
    ap.add_argument("--vectors", required=True)
    ap.add_argument("--runs-dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--minutes", type=float, required=True, help="wall-clock budget of the whole sweep")
    ap.add_argument("--jobs", type=int, default=12)
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cuda")
    ap.add_argument("--only", default=None, help="comma-separated run names of GRID (default: all)")
    ap.add_argument("--startup-seconds", type=float, default=20.0, help="allowance for imports, data, CUDA init")
    ap.add_argument("--score-seconds", type=float, default=SCORE_SECONDS, help="allowance for scoring a run")
    ap.add_argument("--plant", default="", help="tests only: hang,crash")
    ap.add_argument("--score-run", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.score_run:
        return score(args.score_run, args.data_dir)
    t0 = time.time()
    end = t0 + args.minutes * 60
    finish_reserve = min(15.0, 0.1 * args.minutes * 60)
    grid = [g for g in GRID if args.only is None or g[0] in args.only.split(",")]
    runs = [dict(name=n, flags=BASE + f) for n, f in grid]
    for p in filter(None, args.plant.split(",")):
        runs.append(dict(name=f"planted-{p}", planted=p, flags=[]))
    os.makedirs(args.runs_dir, exist_ok=True)
    os.makedirs(args.out, exist_ok=True)
    waves = math.ceil(len(runs) / args.jobs)
    slot = (end - finish_reserve - time.time()) / waves
    queue, active = list(runs), []
    while queue or active:
        now = time.time()
        while queue and len(active) < args.jobs:
            r = queue.pop(0)
            deadline = min(end - finish_reserve, now + slot)
            train_s = (deadline - now - args.score_seconds - args.startup_seconds) * 0.85
            r["run_dir"] = os.path.join(args.runs_dir, r["name"])
            if train_s < 3:
                r.update(status="failed", reason="no time left to start")
                continue
            os.makedirs(r["run_dir"], exist_ok=True)
            if r.get("planted") == "hang":
                cmd = [sys.executable, "-c", "import time; time.sleep(10 ** 6)"]
            elif r.get("planted") == "crash":
                cmd = [sys.executable, "-c", "raise SystemExit(3)"]
            else:
                cmd = [sys.executable, os.path.join(HERE, "train.py"), "--model", "selfattn", "--run", r["run_dir"],
                       "--data-dir", args.data_dir, "--vectors", args.vectors, "--device", args.device,
                       "--threads", "1", "--max-minutes", f"{train_s / 60:.3f}"] + r["flags"]
            r.update(command=cmd, max_minutes=round(train_s / 60, 3), started=round(now - t0, 1),
                     deadline=round(deadline - t0, 1), phase="train")
            r["log"] = open(os.path.join(r["run_dir"], "stdout.log"), "w")
            r["proc"] = subprocess.Popen(cmd, stdout=r["log"], stderr=subprocess.STDOUT)
            r["t_deadline"] = deadline
            active.append(r)
        for r in list(active):
            rc = r["proc"].poll()
            limit = r["t_deadline"] - (args.score_seconds if r["phase"] == "train" else 0)
            if rc is None and time.time() > limit:
                kill(r["proc"])
                r.update(status="failed", reason=f"killed at its deadline while in {r['phase']}")
            elif rc is None:
                continue
            elif rc != 0:
                r.update(status="failed", reason=f"{r['phase']} exited with {rc}")
            elif r["phase"] == "train":
                r["train_wall_s"] = round(time.time() - t0 - r["started"], 1)
                r["phase"] = "score"
                r["proc"] = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--score-run", r["run_dir"],
                                              "--data-dir", args.data_dir, "--vectors", args.vectors, "--runs-dir",
                                              args.runs_dir, "--out", args.out, "--minutes", "0"],
                                             stdout=r["log"], stderr=subprocess.STDOUT)
                continue
            else:
                with open(os.path.join(r["run_dir"], "score.json")) as f:
                    r.update(status="ok", **json.load(f))
                r["int8_weight_bytes"] = int8_bytes(r["cfg"])
            r["log"].close()
            active.remove(r)
        time.sleep(0.5)
    write_outputs(runs, args, t0)


def write_outputs(runs, args, t0):
    ok = sorted((r for r in runs if r.get("status") == "ok"),
                key=lambda r: (-r["final"]["accuracy"], r["int8_weight_bytes"], r["name"]))
    chosen, size = [], 0
    for i, r in enumerate(ok[:2]):
        src = os.path.join(r["run_dir"], "final-f16.pt")
        if size + os.path.getsize(src) > MAX_OUT_BYTES - 1_000_000:
            break
        dst = f"sst2-best{i + 1}.pt"
        shutil.copyfile(src, os.path.join(args.out, dst))
        size += os.path.getsize(src)
        chosen.append({"file": dst, "run": r["name"], "dev_accuracy_final": r["final"]["accuracy"]})
    keep = ("name", "flags", "status", "reason", "max_minutes", "started", "deadline", "train_wall_s", "final",
            "best", "cfg", "n_params", "int8_weight_bytes", "command")
    report = {"minutes": args.minutes, "jobs": args.jobs, "device": args.device, "wall_s": round(time.time() - t0, 1),
              "selection": "best dev accuracy of final.pt (float16 embedding, one sentence at a time); the top "
                           "figure is the maximum over the runs, so it overstates the chosen run's accuracy on "
                           "unseen data",
              "chosen": chosen, "runs": [{k: r[k] for k in keep if k in r} for r in runs]}
    with open(os.path.join(args.out, "sweep.json"), "w") as f:
        json.dump(report, f, indent=1)
    print(json.dumps({"wall_s": report["wall_s"], "chosen": chosen,
                      "runs": [(r["name"], r.get("status"), r.get("final", {}).get("accuracy")) for r in runs]}))


if __name__ == "__main__":
    main()
