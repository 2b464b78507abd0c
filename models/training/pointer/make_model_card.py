"""Writes models/pointer-sort/MODEL_CARD.md from the measured reports only: the engine's curve (evaluate_engine.py),
the PyTorch curve (evaluate.py), the bundle's config and the training log.

  /usr/bin/python3 models/training/pointer/make_model_card.py --bundle models/pointer-sort \
      --engine models/training/pointer/eval_engine.json --torch models/training/pointer/eval_torch.json \
      --log models/training/pointer/runs/main/log.jsonl [--engine-int8 models/training/pointer/eval_engine_int8.json]
With --engine-int8 (evaluate_engine.py on the int8 bundle the npm package ships) the table gets its two columns.
"""
import argparse
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def pct(x):
    return f"{100 * x:.2f}%"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bundle", required=True)
    ap.add_argument("--engine", required=True)
    ap.add_argument("--engine-int8", default=None, help="evaluate_engine.py's report on the int8 bundle")
    ap.add_argument("--torch", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--ckpt", default=None, help="the checkpoint exported (for its training arguments)")
    ap.add_argument("--train-command", required=True, help="the exact command that trained the checkpoint")
    args = ap.parse_args()
    with open(os.path.join(args.bundle, "config.json")) as f:
        cfg = json.load(f)
    with open(args.engine) as f:
        eng = json.load(f)
    with open(args.torch) as f:
        tor = json.load(f)
    int8 = None
    if args.engine_int8:
        with open(args.engine_int8) as f:
            int8 = json.load(f)
    with open(args.log) as f:
        log = [json.loads(line) for line in f if line.strip()]
    name = os.path.basename(os.path.normpath(args.bundle))
    weights_bytes = os.path.getsize(os.path.join(args.bundle, cfg["weights"]))
    lengths = list(eng["results"]["uniform"].keys())
    lo, hi = cfg["trained_lengths"]
    u10 = eng["results"]["uniform"]["10"]
    rows = "\n".join(
        f"| {n} | {pct(eng['results']['uniform'][n])} | {pct(eng['results']['int100'][n])} | "
        f"{pct(tor['results']['uniform'][n])} | {pct(tor['results']['int100'][n])} |"
        + (f" {pct(int8['results']['uniform'][n])} | {pct(int8['results']['int100'][n])} |" if int8 else "")
        for n in lengths)
    int8_head = (" engine int8, U[0,1) | engine int8, int 0–99 |", "---|---|") if int8 else ("", "")
    int8_text = ("\nengine int8 = the int8 bundle the npm package ships (`scripts/pack.mjs`: every matrix of at least 1024 "
                 "weights as int8\ncodes with one scale per row, `scripts/quantize.mjs`) on the same lists; "
                 "`tests/node/quantize.test.mjs` checks that it\nsorts the golden lists as float32 does, its maps within "
                 "0.02." if int8 else "")
    int8_cmd = ("\nnode scripts/quantize.mjs models/pointer-sort /tmp/int8/pointer-sort\n/usr/bin/python3 "
                "models/training/pointer/evaluate_engine.py --bundle /tmp/int8/pointer-sort --cli build/attnlens-cli "
                "--out models/training/pointer/eval_engine_int8.json --markdown" if int8 else "")
    last = log[-1]
    import sys
    sys.path.insert(0, HERE)
    import common  # noqa: E402
    _, meta = common.read_safetensors(os.path.join(args.bundle, cfg["weights"]))
    step = int(meta["step"])
    import torch
    targs = torch.load(args.ckpt)["args"] if args.ckpt else {}
    card = f"""# {name}

A pointer network (Vinyals, Fortunato & Jaitly 2015, "Pointer Networks") that sorts a list of numbers. At each output
step its output is an attention distribution over the input positions — the pointer — and the position it points at
is the next number of the sorted list. Task `number-sorting` (`pipeline('number-sorting')`, alias `'pointer-sort'`),
`attnlens-cli sort`, and the page's "Sort numbers" demo, which draws the pointer distribution of every step.

| | |
|---|---|
| architecture | `pointer-sort` (`models/training/pointer/common.py`, `src/models/pointer_net.cpp`) |
| encoder | `Linear(1, {cfg['d_model']})` per number, then {cfg['enc_layers']} post-norm Transformer layers ({cfg['heads']} heads, feed-forward {cfg['d_ff']}, ReLU) with **no positional encoding**: a set encoder |
| decoder | `LSTMCell({cfg['d_model']}, {cfg['hidden']})` from a zero state; step 0 reads a learned start vector, step i the encoder state of the number pointed at in step i − 1 |
| pointer | u_j = vᵀ tanh(W_k e_j + W_q h_i + b) ({cfg['att_hidden']} units), softmax over the positions not pointed at yet: the catalogue's `pointer_attention` |
| preprocessing | min–max scaling of the values to [0, 1] in double precision, then float32 (all 0 when every value is equal) |
| decoding | greedy; among equal numbers the first not-yet-taken position is taken, so equal numbers keep their input order (a stable sort) |
| input limits | 1 to {cfg['max_length']} finite numbers (config `max_length`); NaN, ±Infinity, an empty list, a non-number or more numbers are errors |
| trained on | lists of {lo}–{hi} numbers |
| weights | `weights.safetensors`, F32, {weights_bytes / 1000:.0f} KB |

**Why a set encoder, not the paper's LSTM encoder.** Sorting depends on the set of numbers, not on the order they were
typed in (Vinyals, Bengio & Kudlur 2016, "Order Matters"). A self-attention encoder without positions is
permutation-equivariant — the same numbers in another order give the same encoder states, permuted — and runs
unchanged on lists longer than it was trained on; equal numbers get equal states. An LSTM reading the list in order
would have to learn to ignore that order, and its states drift on lengths it has not seen.

## Training
Lists are drawn on the fly (no dataset): each step one length n ∈ [{lo}, {hi}] and a batch of lists from a mixture
of value distributions (60 % U[0, 1), 10 % integers 0–99, 10 % integers 0..k−1 with k ∈ 2–12, 10 % normal with a
random scale, 10 % signed magnitudes over six decades); target = the stable argsort; teacher forcing with the
already-sorted positions masked; Adam with warm-up and cosine decay, one CPU thread, batch {targs.get('batch_size')}.
{step} steps of training (the training monitor at step {last['step']}: {pct(last['exact10_uniform_monitor'])} exact on 500 fresh U[0,1) lists
of 10). Command:
```
{args.train_command}
```

## Quality — exact-sequence accuracy, held-out lists, the engine
A list counts only when the whole output order is right (equal to the stable argsort). {eng['count']:,} lists per length
and distribution, drawn from seeds training never uses (`evaluate.held_out`): **U[0,1)** floats (the usual sorting
benchmark) and **int 0–99** (ties from n = 2 on). Engine = `attnlens-cli sort` (native); PyTorch = the recipe's
model on the same lists.

**At n = 10: {pct(u10)} exact (U[0,1)), target ≥ 95% — {"met" if u10 >= 0.95 else "NOT met"}.**

| n | engine, U[0,1) | engine, int 0–99 | PyTorch, U[0,1) | PyTorch, int 0–99 |{int8_head[0]}
|---|---|---|---|---|{int8_head[1]}
{rows}

Trained lengths are {lo}–{hi}; the rows past {hi} show how the model generalises to longer lists than it saw.{int8_text}
Commands:
```
/usr/bin/python3 models/training/pointer/evaluate_engine.py --bundle models/{name} --cli build/attnlens-cli --out models/training/pointer/eval_engine.json --markdown
/usr/bin/python3 models/training/pointer/evaluate.py --bundle models/{name} --out models/training/pointer/eval_torch.json{int8_cmd}
```

## Parity
`golden.json` + `golden.safetensors` (`export.py`, PyTorch {json.load(open(os.path.join(args.bundle, 'golden.json')))['torch']}): for each of the golden lists — among
them ties, a single number, all-equal numbers, magnitudes near ±1e308, 15 and 20 numbers — the output order, the
preprocessed inputs, the pointer distribution of every step, every encoder self-attention map and the encoder states.
The engine equals them within 1e-4 natively (`tests/cpp/test_model_pointer.cpp`) and in WASM
(`tests/node/pointer.test.mjs`).

## Limits
- Trained on at most {hi} numbers: the accuracy falls with length (table). The result is always a permutation of the
  input; `sorted_ok` in every result says whether it is sorted.
- Min–max scaling makes the model blind to scale but not to clustering: numbers that differ by much less than the
  list's range are hard to order, as their scaled values nearly coincide: `1.000001 1 1000` comes back
  unsorted (`sorted_ok: false`), while `1 2 3 1000`, `5 4 3 2 1 100000` and `1.0001 1.0003 1.0002 2` are sorted.
- At most {cfg['max_length']} numbers (the pointer map is n × n).
"""
    out = os.path.join(args.bundle, "MODEL_CARD.md")
    with open(out, "w") as f:
        f.write(card)
    print("wrote", out)


if __name__ == "__main__":
    main()
