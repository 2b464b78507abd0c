"""Write models/sst2-selfattn/MODEL_CARD.md and models/sst2-relation/MODEL_CARD.md from measured numbers only:
export_report_<name>.json (export.py), eval_<name>.json (evaluate.py), where present eval_engine_<name>.json and
eval_engine_<name>_int8.json (evaluate_engine.py --json, the float32 bundle and its int8 variant from
scripts/quantize.mjs) and the log.jsonl of the run that made the exported checkpoint (train.py).

  /usr/bin/python3 models/training/sentiment/make_model_card.py [--only sst2-selfattn]
"""

import argparse
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))

ARCH_TEXT = {
    "sst2-selfattn": (
        "BiLSTM + structured self-attention (Lin et al. 2017, *A Structured Self-attentive Sentence Embedding*, "
        "arXiv:1703.03130): embedding → one-layer BiLSTM → A = softmax(W_s2 tanh(W_s1 Hᵀ)) with r hops "
        "(no biases, as in the paper) → M = A H flattened → ReLU MLP → 2 logits. Trained with the penalty "
        "‖AAᵀ − I‖²_F and adversarial training on the word embeddings (Miyato et al. 2017, `train.py --adv-eps`: "
        "each step also takes the loss at the embedded sentence moved by ε along its own loss gradient). The "
        "attention returned is A, dims [hops, T]; each row sums to 1 over the tokens."),
    "sst2-relation": (
        "Relation-network self-attention (seed 003, Kion Kim's pairwise self-attention): for every ordered pair "
        "of words (i, j) a feature network g = ReLU(W_g2 ReLU(W_g1 [x_i; x_j])) and an attention network "
        "s = w tanh(W_a1 [x_i; x_j]); α_ij = softmax over j of sigmoid(s_ij) (sigmoid, then softmax, as in the "
        "seed); word i is r_i = Σ_j α_ij g_ij; the sentence is the mean of r_i → ReLU MLP → 2 logits. The "
        "attention returned is α, dims [T, T]; row i sums to 1. Because sigmoid squashes scores into (0, 1) "
        "before the softmax, a row's largest and smallest weights differ by at most a factor e: the maps are "
        "flat by construction (a property of the seed's mechanism, not a bug)."),
}


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


# How the engine runs the model, for the cards of bundles the engine ships (architecture, not weights: the figures
# here do not change when the model is retrained).
ENGINE_SECTION = {
    "sst2-selfattn": """## In the attnlens engine
```js
import { pipeline } from 'attnlens';
const classify = await pipeline('sentiment-analysis', 'sst2-selfattn');
const out = await classify("It's a charming, often affecting journey.");
// { label: 'POSITIVE', score, tokens, attentions: [{ name: 'self-attention', dims: [hops = 4, T], data: Float32Array }],
//   probabilities, labels, ids, truncated, num_input_tokens }
```
Native: `printf 'Not bad at all.\\n' | build/attnlens-cli sentiment --model models/sst2-selfattn` (one JSON object per line);
C++: `attnlens::api::SentimentClassifier::load("models/sst2-selfattn")->classify(text)` (src/api/sentiment.h).

- **Tokenization** (src/text/words.h, the same code natively and in WASM): the text is lowercased and split the way
  SST-2 was (Penn Treebank conventions): punctuation becomes its own token, clitics are split off (`don't` → `do n't`,
  `can't` → `ca n't`, `it's` → `it 's`, also `'re 've 'll 'd 'm`), typographic quotes/dashes/ellipses map to the ASCII
  forms of the data, ill-formed UTF-8 becomes U+FFFD. Words outside `vocab.txt` become `<unk>` (id 1), and the
  returned `tokens` show `<unk>` where the model saw it.
- **Limits**: empty or all-space text is an error ("sentiment: empty input ..."), not a made-up neutral answer; text of
  only punctuation or emoji has tokens and is classified. Only the first **256 tokens** are classified (option
  `max_tokens`, 1–1024; CLI `--max-tokens`), and the result says `truncated: true` and `num_input_tokens`: the
  relation model's attention is T × T and costs O(T²), so 10,000 words would need a 400 MB map. SST-2 dev
  sentences have at most 47 tokens.
- **Parity with PyTorch** (golden.json / golden.safetensors, 8 sentences; tests/cpp/test_model_sentiment.cpp natively
  and compiled to WASM, tests/node/sentiment.test.mjs through the npm API): tokens and ids exact; attention map and
  probabilities within 1e-4. BiLSTM hidden states, sentence embedding and logits are compared as well (C++ test).
- **Speed** over the 872 SST-2 dev sentences, one sentence at a time, one thread, raw text → label + attention map
  (`npm run bench`, i.e. `build/bench_sentiment --reps 5` and `node build-wasm/bench_sentiment.js --reps 5`; median
  of 5 passes): native (AVX2+FMA) **1,537 (fastest pass 1,593) sentences/s**, WASM SIMD under Node 20 **888 (fastest pass 1,469) sentences/s**.
  Bundle load: 634 ms native, 1,991 ms WASM. Measured on the shared 2-core development machine at load average ~10 (two training
  jobs and compilers running); repeated runs at load 13 gave up to 2× less, so these are lower bounds and an idle
  machine is faster. The same benchmark reports the dev accuracy of the build it times.

""",
}
LIMITATIONS = """- The model knows SST-2 tokens only: the engine tokenizes raw text the same way (above); unknown words become
  `<unk>`, which is visible in the returned tokens. Texts longer than 256 tokens are cut (`truncated`).
- Trained on movie-review phrases; other domains, sarcasm and long multi-sentence texts are out of scope.
- English only.
"""

# How the shipped recipe itself was chosen (README.md, "training variants measured").
RECIPE_CHOICE = {
    "sst2-selfattn": (
        " The recipe (ε = 1) was chosen on dev among three adversarial runs (ε = 1 with seeds 1 and 2, ε = 3);"
        " the same recipe with seed 2 ends at 87.04% (int8 87.16%), ε = 3 at 86.58%."),
}

ENGINE_CMD = "python3 models/training/sentiment/evaluate_engine.py --bundle {bundle} --cli build/attnlens-cli"
INT8_CMD = "node scripts/quantize.mjs models/{name} /tmp/int8/{name} && " + ENGINE_CMD.format(bundle="/tmp/int8/{name}")


def row(label, ev, command):
    return (f"| {label} | **{ev['accuracy'] * 100:.2f}%** | {ev['accuracy_negative'] * 100:.2f}% | "
            f"{ev['accuracy_positive'] * 100:.2f}% | `{command}` |")


def quality(name, ev, report_dir):
    """The Quality table: PyTorch reference, then the engine (float32 bundle, int8 variant) where measured."""
    rows = [row(f"SST-2 dev, all {ev['n']} sentences — PyTorch reference", ev,
                f"/usr/bin/python3 models/training/sentiment/evaluate.py --bundle models/{name}")]
    engine = os.path.join(report_dir, f"eval_engine_{name}.json")
    int8 = os.path.join(report_dir, f"eval_engine_{name}_int8.json")
    if os.path.exists(engine):
        rows.append(row(f"SST-2 dev, all {ev['n']} sentences — **attnlens engine** (native CLI, raw text through "
                        "the engine tokenizer)", read_json(engine), ENGINE_CMD.format(bundle=f"models/{name}")))
    if os.path.exists(int8):
        rows.append(row(f"SST-2 dev, all {ev['n']} sentences — attnlens engine, **int8 bundle** (the one the npm "
                        "package ships: `npm run pack` quantizes it the same way)", read_json(int8),
                        INT8_CMD.format(name=name)))
    title = "Quality" if os.path.exists(engine) else "Quality (PyTorch reference; engine evaluation pending)"
    return title, "\n".join(rows)


def selection_note(log, checkpoint):
    """What dev selection did to the figure: the exported checkpoint (best.pt: the best periodic dev evaluation;
    final.pt: the end of training, not selected) and the other one's accuracy, so the gap is visible."""
    best = max((r["dev_acc"] for r in log), default=float("nan"))
    last = log[-1]["dev_acc"] if log else float("nan")
    if os.path.basename(checkpoint) == "final.pt":
        return (f"The exported weights are those at the end of training ({last * 100:.2f}% on dev at the last "
                f"evaluation), not selected on dev; the best of the {len(log)} periodic dev evaluations below was "
                f"{best * 100:.2f}%.")
    return (f"Dev was used for model selection (the best of the {len(log)} periodic dev evaluations below, "
            f"{best * 100:.2f}%), so this is a selection-biased estimate; the weights at the end of training "
            f"score {last * 100:.2f}%.")


def exported_at(log, rep):
    """Where in training the exported weights come from (the end, or the best dev evaluation)."""
    if os.path.basename(rep["checkpoint"]) == "final.pt" and log:
        return f"the exported weights are those at its end (step {log[-1]['step']:,})"
    return f"best dev checkpoint after {rep['train_minutes']:.1f} minutes (step {rep['best_step']})"


def card(name, models_dir, runs_dir, report_dir):
    rep = read_json(os.path.join(report_dir, f"export_report_{name}.json"))
    ev = read_json(os.path.join(report_dir, f"eval_{name}.json"))
    arch_text = ARCH_TEXT[name]
    run = os.path.basename(os.path.dirname(rep["checkpoint"]))  # the run that made the exported checkpoint
    log = [json.loads(line) for line in open(os.path.join(runs_dir, run, "log.jsonl"), encoding="utf-8")]
    title, table = quality(name, ev, report_dir)
    engine_section = ENGINE_SECTION.get(name, "")
    cfg = read_json(os.path.join(models_dir, name, "config.json"))
    n_golden = len(read_json(os.path.join(models_dir, name, "golden.json"))["cases"])
    probe = read_json(os.path.join(HERE, "probe_vectors.json"))
    dims = {k: v for k, v in cfg.items() if isinstance(v, int) and k != "version"}
    sizes = rep["bundle_bytes"]
    curve = "\n".join(f"| {r['epoch']} | {r['step']} | {r['train_minutes']:.1f} | {r['loss']:.3f} | "
                      f"{r['dev_acc'] * 100:.2f} |" for r in log)
    total_min = log[-1]["train_minutes"] if log else float("nan")
    return f"""# {name}

SST-2 binary sentiment (NEGATIVE / POSITIVE) with an attention map per sentence, for the attnlens engine.

## Model
{arch_text}

Dimensions (config.json): {json.dumps(dims)}.
Parameters: {rep['n_params']:,}. Weights: embedding stored as {rep['emb_dtype'].upper()} (F32 elsewhere).
Bundle: weights.safetensors {sizes['weights.safetensors'] / 1e6:.2f} MB, vocab.txt {sizes['vocab.txt'] / 1e3:.0f} kB,
goldens {(sizes['golden.safetensors'] + sizes['golden.json']) / 1e3:.0f} kB.

## {title}
| set | accuracy | negative | positive | command |
|---|---|---|---|---|
{table}

Checkpoint accuracy before export (F32 embedding): {rep['dev_accuracy_checkpoint_f32'] * 100:.2f}%; the bundle as
read back (F16 embedding): {rep['dev_accuracy_bundle'] * 100:.2f}%. Dev tokens outside the training vocabulary
(mapped to `<unk>`): {ev['unk_token_rate'] * 100:.1f}%. {selection_note(log, rep['checkpoint'])}{RECIPE_CHOICE.get(name, "")}
The SST-2 test labels are not in this repository: the held-out test set is checked elsewhere, so this card gives no test figure.

## Data and licences
- SST-2 (GLUE) train (67,349 phrases and sentences) for training, dev (872) for selection, from
  ../shared/data/sst2 (Socher et al. 2013; Wang et al. 2018). No explicit licence from Stanford; GLUE
  redistributes it for research. The vocabulary is every training token seen ≥ 2 times plus `<pad>`, `<unk>`.
- Word vectors initialising the embedding were trained by us (models/training/sentiment/word_vectors.py:
  PPMI + truncated SVD, Levy et al. 2015, dim 200, window 5) on the SST-2 training sentences and the English
  side of Tatoeba (CC-BY 2.0: attribution to tatoeba.org and manythings.org/anki), ../shared/data/tatoeba_deu_eng.
  Do they help? A probe without network training (frozen vectors averaged per sentence + logistic regression fit
  on train, full dev; `probe_vectors.py`): {probe['dev_accuracy_ppmi_svd'] * 100:.1f}% with our vectors against
  {probe['dev_accuracy_random'] * 100:.1f}% with random vectors of the same scale. A full-model comparison
  (random initialisation trained for the same time) was not run, for lack of training time.

## Recipe (exact commands, from the repo root, under the team's training lock)
```
nohup flock /tmp/attnlens-train.lock sh models/training/sentiment/run_all.sh > models/training/sentiment/runs/run_all.log 2>&1 &
```
which runs, in order: `word_vectors.py --out models/training/sentiment/cache/vec_ppmi200.npy`, then
`{rep['train_command']}`, then `export.py --checkpoint {rep['checkpoint']} --out models/{name}`
(bundle, read-back check, goldens), `evaluate.py`, and, with a native `build/attnlens-cli`, `evaluate_engine.py`
on the bundle and on its int8 variant. Seeds are fixed (torch.manual_seed(1), per-epoch shuffling generators);
one torch thread.

Training time on the shared 2-core machine: {total_min:.1f} minutes of training (dev evaluations excluded),
{exported_at(log, rep)}. The machine was shared
with other engineers' compilers, so the same recipe runs faster on an idle machine.

| epoch | step | train min | train loss (last interval) | dev acc % |
|---|---|---|---|---|
{curve}

## Verification
- export.py reads the bundle back into the PyTorch model: max |Δlogit| against the checkpoint (embedding rounded
  to F16 the same way) over the whole dev set = {rep['max_abs_logit_diff_bundle_vs_checkpoint']}.
- An explicit one-sentence forward written from the documented maths (loops, float64) matches the model on every
  golden sentence: max |Δ| = {rep['max_abs_diff_explicit_forward']:.2e}.
- golden.json / golden.safetensors: {n_golden} sentences (6 dev sentences, a one-word input, a sentence with unknown
  words): token ids, logits, probabilities, the attention map, and intermediates for porting.

{engine_section}## Limitations
{LIMITATIONS}"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "models"))
    ap.add_argument("--runs-dir", default=os.path.join(HERE, "runs"))
    ap.add_argument("--report-dir", default=HERE)
    ap.add_argument("--only", choices=sorted(ARCH_TEXT), help="write this card only")
    args = ap.parse_args()
    for name in [args.only] if args.only else ARCH_TEXT:
        if not os.path.exists(os.path.join(args.report_dir, f"export_report_{name}.json")):
            print(f"skip {name}: no export report")
            continue
        path = os.path.join(args.models_dir, name, "MODEL_CARD.md")
        with open(path, "w", encoding="utf-8") as f:
            f.write(card(name, args.models_dir, args.runs_dir, args.report_dir))
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
