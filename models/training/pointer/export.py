"""Export a pointer-sort checkpoint as an attnlens bundle and write its PyTorch goldens.

  /usr/bin/python3 models/training/pointer/export.py --ckpt models/training/pointer/runs/main/last.pt \
      --out models/pointer-sort
Writes config.json, weights.safetensors (the state_dict names as they are), golden.json and golden.safetensors
(from the bundle as read back: each case's preprocessed inputs, output order, the pointer distribution of every
output step [n, n], every encoder self-attention map [layers, heads, n, n] and the final encoder states [n, d]).
Then run `npm run digests` for manifest.json.
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

PREPROCESSING = ("x_j = (v_j - min v) / (max v - min v) in float64, then rounded to float32; all x_j = 0 when every "
                 "value is equal; when max v - min v overflows, (v_j/2 - min v/2) / (max v/2 - min v/2)")
DECODING = ("greedy: at step i take argmax_j p_i (lowest index on equal probabilities), then the first position not "
            "yet pointed at holding the same input value (equal values keep their input order); the decoder's next "
            "input is the encoder state of that position")


def golden_cases():
    rng = np.random.default_rng(4242)
    return [
        [5, 3, 9, 1],
        [float(v) for v in rng.random(10)],
        [3.2, -1, 0, 7, 7, 2, -1],
        [42],
        [2, 2, 2],
        [1, 2, 3, 1000],
        [-1e308, 1e308, 0, 5e307],
        [float(v) for v in np.round(rng.normal(0, 50, 15), 2)],
        [float(v) for v in rng.integers(0, 100, 20)],
        [0.5, 0.25],
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--name", default=None)
    args = ap.parse_args()
    torch.set_num_threads(1)
    ck = torch.load(args.ckpt)
    cfg = ck["config"]
    os.makedirs(args.out, exist_ok=True)
    name = args.name or os.path.basename(os.path.normpath(args.out))
    targs = ck.get("args", {})
    config = {
        "format": "attnlens-bundle", "version": 1, "architecture": "pointer-sort", "task": "number-sorting",
        **cfg,
        "trained_lengths": [targs.get("min_len", 1), targs.get("max_len", 10)],
        "encoder": "Linear(1, d_model) then enc_layers post-norm Transformer layers (nn.MultiheadAttention, "
                   "LayerNorm eps 1e-5, ReLU feed-forward), no positional encoding",
        "decoder": "LSTMCell(d_model, hidden), zero initial state; step 0 reads `start`, then the encoder state of "
                   "the position pointed at (PyTorch gate order i,f,g,o)",
        "pointer": "u_j = ptr_v tanh(ptr_k e_j + ptr_q h + b), softmax over positions not yet pointed at",
        "preprocessing": PREPROCESSING,
        "decoding": DECODING,
        "weights": "weights.safetensors",
    }
    tensors = {k: v.detach().numpy().astype(np.float32) for k, v in ck["model"].items()}
    common.write_safetensors(os.path.join(args.out, "weights.safetensors"), tensors,
                             metadata={"model": name, "step": ck["step"]})
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")

    model, _ = common.load_bundle(args.out)  # goldens from the bundle as read back
    gold, cases = {}, []
    for i, values in enumerate(golden_cases()):
        raw = np.asarray(values, dtype=np.float64)[None]
        x = torch.from_numpy(common.preprocess(values))[None]
        order, probs, maps = model.sort_batch(x, raw)
        with torch.no_grad():
            enc, _ = model.encode(x)
        n = len(values)
        gold[f"case{i}/inputs"] = x[0].numpy()
        gold[f"case{i}/pointer"] = probs[0].numpy()
        gold[f"case{i}/encoder_self"] = torch.stack([m[0] for m in maps]).numpy()  # (layers, heads, n, n)
        gold[f"case{i}/encoder"] = enc[0].numpy()
        o = [int(v) for v in order[0]]
        sorted_vals = [values[j] for j in o]
        cases.append({"values": [float(v) for v in values], "order": o, "sorted": [float(v) for v in sorted_vals],
                      "sorted_ok": all(sorted_vals[k] <= sorted_vals[k + 1] for k in range(n - 1)),
                      "n": n})
    common.write_safetensors(os.path.join(args.out, "golden.safetensors"), gold)
    golden = {
        "model": name, "generator": "models/training/pointer/export.py", "torch": torch.__version__,
        "tolerance": {"abs": 1e-4},
        "notes": "case<i>/inputs [n] preprocessed values; case<i>/pointer [n, n] row i = the pointer distribution "
                 "at output step i (positions already pointed at are 0); case<i>/encoder_self [layers, heads, n, n]; "
                 "case<i>/encoder [n, d_model] final encoder states. order = input positions in output order.",
        "cases": cases,
    }
    with open(os.path.join(args.out, "golden.json"), "w") as f:
        json.dump(golden, f, indent=1)
        f.write("\n")
    for c in cases:
        print(c["n"], "sorted" if c["sorted_ok"] else "NOT SORTED", c["order"])


if __name__ == "__main__":
    main()
