"""Write models/sst2-selfattn/MODEL_CARD.md and models/sst2-relation/MODEL_CARD.md from measured numbers only:
export_report_<name>.json (export.py), eval_<name>.json (evaluate.py) and the run's log.jsonl (train.py).

  /usr/bin/python3 models/training/sentiment/make_model_card.py
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
        "‖AAᵀ − I‖²_F. The attention returned is A, dims [hops, T]; each row sums to 1 over the tokens.",
        "selfattn_ppmi"),
    "sst2-relation": (
        "Relation-network self-attention (seed 003, Kion Kim's pairwise self-attention): for every ordered pair "
        "of words (i, j) a feature network g = ReLU(W_g2 ReLU(W_g1 [x_i; x_j])) and an attention network "
        "s = w tanh(W_a1 [x_i; x_j]); α_ij = softmax over j of sigmoid(s_ij) (sigmoid, then softmax, as in the "
        "seed); word i is r_i = Σ_j α_ij g_ij; the sentence is the mean of r_i → ReLU MLP → 2 logits. The "
        "attention returned is α, dims [T, T]; row i sums to 1. Because sigmoid squashes scores into (0, 1) "
        "before the softmax, a row's largest and smallest weights differ by at most a factor e: the maps are "
        "flat by construction (a property of the seed's mechanism, not a bug).",
        "relation_ppmi"),
}


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def card(name, models_dir, runs_dir, report_dir):
    rep = read_json(os.path.join(report_dir, f"export_report_{name}.json"))
    ev = read_json(os.path.join(report_dir, f"eval_{name}.json"))
    arch_text, run = ARCH_TEXT[name]
    log = [json.loads(line) for line in open(os.path.join(runs_dir, run, "log.jsonl"), encoding="utf-8")]
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

## Quality (PyTorch reference; engine evaluation pending)
| set | accuracy | negative | positive | command |
|---|---|---|---|---|
| SST-2 dev, all {ev['n']} sentences | **{ev['accuracy'] * 100:.2f}%** | {ev['accuracy_negative'] * 100:.2f}% | {ev['accuracy_positive'] * 100:.2f}% | `/usr/bin/python3 models/training/sentiment/evaluate.py --bundle models/{name}` |

Checkpoint accuracy before export (F32 embedding): {rep['dev_accuracy_checkpoint_f32'] * 100:.2f}%; the bundle as
read back (F16 embedding): {rep['dev_accuracy_bundle'] * 100:.2f}%. Dev tokens outside the training vocabulary
(mapped to `<unk>`): {ev['unk_token_rate'] * 100:.1f}%. Dev was used for model selection (best of the periodic
dev evaluations below), so this is a selection-biased estimate; the SST-2 test set is held out elsewhere.

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
(bundle, read-back check, goldens) and `evaluate.py`. Seeds are fixed (torch.manual_seed(1), per-epoch
shuffling generators); one torch thread.

Training time on the shared 2-core machine: {total_min:.1f} minutes of training (dev evaluations excluded),
best dev checkpoint after {rep['train_minutes']:.1f} minutes (step {rep['best_step']}). The machine was shared
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

## Limitations
- Input must be tokenized like SST-2 (lowercase, PTB punctuation and clitic splitting: "don't" → "do n't");
  unknown words become `<unk>`, which is visible in the returned tokens.
- Trained on movie-review phrases; other domains, sarcasm and long multi-sentence texts are out of scope.
- English only.
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "models"))
    ap.add_argument("--runs-dir", default=os.path.join(HERE, "runs"))
    ap.add_argument("--report-dir", default=HERE)
    args = ap.parse_args()
    for name in ARCH_TEXT:
        if not os.path.exists(os.path.join(args.report_dir, f"export_report_{name}.json")):
            print(f"skip {name}: no export report")
            continue
        path = os.path.join(args.models_dir, name, "MODEL_CARD.md")
        with open(path, "w", encoding="utf-8") as f:
            f.write(card(name, args.models_dir, args.runs_dir, args.report_dir))
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
