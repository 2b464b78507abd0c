"""Writes models/shapes-vqa-{coattn,aoa}/MODEL_CARD.md from the held-out evaluation (evaluate.py --out) and the
training runs' dev selection (runs/<variant>/best.json), so that every figure in the cards comes from those files.

  /usr/bin/python3 models/training/vqa/make_cards.py --eval models/training/vqa/eval_test.json \
      [--eval-int8 models/training/vqa/eval_test_int8.json]
With --eval-int8 (evaluate.py on the int8 bundles the npm package ships) the cards also give the int8 figures.
"""
import argparse
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
VARIANTS = {
    "coattn": ("shapes-vqa-coattn", "parallel co-attention (Lu et al. 2016)", "parallel-co-attention"),
    "aoa": ("shapes-vqa-aoa", "attention-over-attention (Cui et al. 2017)", "attention-over-attention"),
}
EVAL_CMD = ("flock /tmp/attnlens-train.lock /usr/bin/python3 models/training/vqa/evaluate.py --cli build/attnlens-cli "
            "--bundle models/shapes-vqa-coattn models/shapes-vqa-aoa --split test --n 500 --markdown "
            "--out models/training/vqa/eval_test.json")


def pct(x):
    return "%.1f%%" % (100 * x)


def table(report, names):
    first = report[names[0]]
    rows = ["| metric | questions | " + " | ".join("`%s`" % n for n in names) + " |",
            "|---|---|" + "---|" * len(names)]
    for t in ("colour", "shape", "count", "relation", "all"):
        rows.append("| accuracy, %s | %d | %s |" % (t, first["n"][t], " | ".join(
            pct(report[n]["accuracy"][t]) for n in names)))
    for t in ("colour", "shape", "relation", "all", "count, any"):
        rows.append("| grounding, %s | %d | %s |" % (t, first["grounding_n"][t], " | ".join(
            pct(report[n]["grounding"][t]) for n in names)))
    return "\n".join(rows)


INT8_CMD = ("node scripts/quantize.mjs models/shapes-vqa-coattn /tmp/int8/shapes-vqa-coattn\n"
            "node scripts/quantize.mjs models/shapes-vqa-aoa /tmp/int8/shapes-vqa-aoa\n"
            "ln -s \"$PWD/models/mobilenet-v2-imagenet\" /tmp/int8/mobilenet-v2-imagenet\n"
            "/usr/bin/python3 models/training/vqa/evaluate.py --cli build/attnlens-cli --bundle /tmp/int8/shapes-vqa-coattn "
            "/tmp/int8/shapes-vqa-aoa --split test --n 500 --markdown --out models/training/vqa/eval_test_int8.json")


def int8_section(report, int8):
    """The int8 figures beside float32's (same questions, same engine), or "" without an int8 evaluation."""
    if int8 is None:
        return ""
    names = ["shapes-vqa-coattn", "shapes-vqa-aoa"]
    first = report[names[0]]
    cols = [(n, rep) for n in names for rep in (report, int8)]
    rows = ["| metric | questions | " + " | ".join("`%s` %s" % (n, "float32" if rep is report else "int8")
                                                   for n, rep in cols) + " |",
            "|---|---|" + "---|" * len(cols)]
    for t in ("colour", "shape", "count", "relation", "all"):
        rows.append("| accuracy, %s | %d | %s |" % (t, first["n"][t], " | ".join(
            pct(rep[n]["accuracy"][t]) for n, rep in cols)))
    for t in ("all", "count, any"):
        rows.append("| grounding, %s | %d | %s |" % (t, first["grounding_n"][t], " | ".join(
            pct(rep[n]["grounding"][t]) for n, rep in cols)))
    return f"""
### int8 (the npm package's bundles)

The npm package ships both VQA bundles int8 (`scripts/pack.mjs`): every matrix of at least 1024 weights as int8
codes with one scale per row (`scripts/quantize.mjs`), and the VQA model's precision also keeps the shared encoder's
1×1 convolutions int8. The same {int8['_set']['questions']} test questions through the engine, both precisions:

{chr(10).join(rows)}

```sh
{INT8_CMD}
```

On the golden scenes `tests/node/quantize.test.mjs` bounds the int8 bundles against float32 (region and word
attention within 0.1, answer scores within 0.25) and checks that they are the float32 bundle run with
`precision: 'int8'`.
"""


def card(variant, report, best, int8=None):
    name, mech, attention = VARIANTS[variant]
    names = ["shapes-vqa-coattn", "shapes-vqa-aoa"]
    r = report[name]
    s = report["_set"]
    dev = best["dev"]
    size = os.path.getsize(os.path.join(REPO, "models", name, "weights.safetensors")) / 1e6
    other = [n for n in names if n != name][0]
    if variant == "coattn":
        att = ("parallel co-attention (Lu 2016 eq. 3-4, the catalogue op `parallel_co_attention`): affinity "
               "C = tanh(Q W_b Vᵀ) [T × 49], H^v = tanh(W_v V + (W_q Q) C), H^q = tanh(W_q Q + (W_v V) Cᵀ), region "
               "attention a^v = softmax(w_hvᵀ H^v), word attention a^q = softmax(w_hqᵀ H^q)")
        maps = "`affinity` [T, 49], `region_attention` [7, 7], `word_attention` [T] per level"
        count = "m_n = Σ_t a^q_t relu(C_tn)"
    else:
        att = ("attention-over-attention (Cui 2017 §3, the catalogue op `attention_over_attention`, the regions as "
               "the document): M = V Qᵀ, α = softmax over the regions for each word, β = softmax over the words for "
               "each region, β̄ = mean of β over the regions, region attention s = α β̄, word attention β̄")
        maps = "`aoa_matching`, `aoa_alpha`, `aoa_beta` [T, 49] (word × region), `region_attention` [7, 7], " \
               "`word_attention` [T] per level"
        count = "m_n = Σ_t β̄_t relu(tanh(M_nt))"
    return f"""# {name}

Visual question answering over generated shapes scenes with {mech}: a question about a scene of 1-3 coloured
circles, squares and triangles ("what colour is the triangle?", "how many circles are there?", "is the square left
of the circle?", "what shape is the red object?") → one of 14 answers (5 colours, 3 shapes,
0-3, yes/no), with every attention map. Task `visual-question-answering` (`pipeline('visual-question-answering',
'{name}')`, `attnlens-cli vqa`, `VisualQA` in C++). Its twin `{other}` is the same recipe with the other attention.

## Held-out figures (the engine, {s['scenes']} test scenes, {s['questions']} questions)

Both variants side by side (test split, seed 3003, never read by training or selection; questions balanced per
type; the engine itself through `attnlens-cli vqa`):

{table(report, names)}

Accuracy: exact answers. Grounding: the question-level region attention's peak cell has its centre inside the box
of the object the question names (colour and shape questions: that object; relation questions: the subject);
"count, any": for counts of 1-3, the peak lies in one of the counted objects. Command (after a native build):

```sh
{EVAL_CMD}
/usr/bin/python3 models/training/vqa/make_cards.py --eval models/training/vqa/eval_test.json --eval-int8 models/training/vqa/eval_test_int8.json
```
{int8_section(report, int8)}
Against the issue's targets: answer accuracy ≥ 90% **{"met" if r['accuracy']['all'] >= 0.9 else "not met"}**
({pct(r['accuracy']['all'])}; colour {pct(r['accuracy']['colour'])}, shape {pct(r['accuracy']['shape'])}, count
{pct(r['accuracy']['count'])}, relation {pct(r['accuracy']['relation'])}); grounding ≥ 85%
**{"met" if r['grounding']['all'] >= 0.85 else "not met"}** ({pct(r['grounding']['all'])}). Training had a 12-minute budget
(`train.py --max-minutes 12`); the checkpoint chosen on dev is epoch {best['epoch']} (0-based).

Dev (300 scenes, {sum(dev['n'].values())} questions, PyTorch on cached features; used to select the epoch, {best['epoch']}):
accuracy {pct(dev['accuracy']['all'])}, grounding {pct(dev['grounding']['all'])}.

## Model

- Regions: the 7 × 7 cells of the shapes captioner's grid — MobileNetV2 `features` (the shared bundle
  `mobilenet-v2-imagenet`, 1280 channels), then each cell's mean input colour and its centre (1285 channels,
  config.json `encoder`); V = tanh(W_region x + b), d = 128.
- Question: lowercased, split as `\\w+|[^\\w\\s]` (unknown words → `<unk>`, listed in the result; at most
  24 words); word level Q_w = embeddings (d 128), question level Q_s = a one-layer LSTM over them.
- Attention at both levels, separate weights: {att}.
- Count readout (question level): {count}; count = Σ_n m_n.
- Relation readout: where = Σ_n a_s,n pos_n − Σ_n a_w,n pos_n, the question level's attention centroid minus
  the word level's, in cell units (pos_n = (column + 0.5, row + 0.5)); since the question level attends to the
  relation's subject A and the word level to A and B, it points from B towards A. r = tanh(W_r[where; mean_t
  Q_w,t]) (64 units): the answer to "is A left of B?" is read off where the two attention maps look.
- Answer (Lu 2016 eq. 7, two levels, plus r): h_w = tanh(W_w(q̂_w + v̂_w)), h_s = tanh(W_s[q̂_s + v̂_s; h_w;
  count]), logits = W_o [h_s; r] over the {14} answers.
- Maps in the trace: {maps}; `count_density` [7, 7] (layer 0 = word level, 1 = question level).
- Weights F16, {size:.2f} MB (+ the shared encoder bundle); config.json, vocab.txt, answers.txt.

## Training data and supervision

Synthetic: `models/training/captioning/shapes.py` scenes (train 3,000, seed 1001; dev 300, seed 2002) and the
questions of `models/training/vqa/questions.py` (colour / shape / count / relation yes-no, answers balanced per
type). **The region attention is supervised with the generator's boxes** (synthetic training scenes only): −log of
the question-level attention's mass on the cells inside the named object's box (relation: the subject), half that
weight for the word level on each named object (relation: both), and the count density m is regressed on the share
of each counted object's box in each cell. Without a box there is no attention term (a count of 0). Grounding on
the held-out scenes is measured, never supervised. Recipe and commands: `models/training/vqa/README.md`
(`run_vqa.sh`: features, then `train.py --variant {variant}`, Adam 2e-3, batch 128, selection on dev accuracy +
grounding; `export.py --variant {variant}` folds the training PCA into the region layer and writes the goldens).

## Parity and limits

The engine equals PyTorch on `golden.json` / `golden.safetensors` (scenes `tests/goldens/vqa/*.ppm`), natively
(`tests/cpp/test_model_vqa.cpp`) and in WASM (`tests/node/vqa.test.mjs`), within abs 1e-4 or rel 1e-3: the
encoder's whole 7 × 7 × 1285 grid of each scene; the VQA forward on PyTorch's grid (the model's exact input):
answer logits, the count and every map; and the answer from the pixels end to end. (From the pixels, the encoder's
float differences, ≤ 1e-4 per channel, pass through the region layer and can move a map entry by ~2e-4, so maps
are compared on the same grid.) Only shapes scenes of this generator: photos, other shapes or colours, more
than 3 objects, or questions outside the four templates are out of its world (it still answers one of its 14
answers). Relation questions ("is A left of B?") are answered from the attention maps' centroids (the relation readout):
when an attention map misses an object, the relation answer follows the map, not the scene. The first bundles,
without the readout, answered them at chance (55% / 54% on the same test questions) although their maps covered
both objects: the answer network pooled the two positions into sums it did not learn to compare; with the
centroid difference in [−1, 1] coordinates instead of cell units (a spread of ~0.4 instead of ~1.5), training
also stayed at chance. The maps show what the answer network pooled; grounding above says how often the peak is
on the named object.
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--eval", required=True)
    ap.add_argument("--eval-int8", default=None, help="evaluate.py's report on the int8 bundles")
    args = ap.parse_args()
    report = json.load(open(args.eval))
    int8 = json.load(open(args.eval_int8)) if args.eval_int8 else None
    for variant, (name, _, _) in VARIANTS.items():
        best = json.load(open(os.path.join(HERE, "runs", variant, "best.json")))
        path = os.path.join(REPO, "models", name, "MODEL_CARD.md")
        open(path, "w").write(card(variant, report, best, int8))
        print("wrote", path)


if __name__ == "__main__":
    main()
