"""Export a trained VQA checkpoint to an attnlens bundle and write its PyTorch goldens.

  /usr/bin/python3 models/training/vqa/export.py --variant coattn --out models/shapes-vqa-coattn
  /usr/bin/python3 models/training/vqa/export.py --variant aoa --out models/shapes-vqa-aoa

Bundle: config.json (architecture "vqa", naming the shared encoder bundle mobilenet-v2-imagenet and the shapes
captioner's cell channels), weights.safetensors (F16), vocab.txt, answers.txt. The PCA of training (train.py) is
folded into the region layer here, so region.weight reads the grid's 1285 channels:
  W x197 + b = (W_pca Pᵀ / s) f + W_rest [rgb; xy] + (b - W_pca Pᵀ μ / s)

Goldens (models/<name>/golden.json + golden.safetensors), computed by model.py from the bundle as loaded back (F16
weights upcast) on the example scenes of tests/goldens/vqa/*.ppm (written here from shapes.make_scene; also saved
as web/examples/*.png): per case i
  <scene>/grid              [49, 1285]  the grid PyTorch computed for the scene (encoder bundle + cell colour +
                                        position): the VQA model's exact input, so the engine's VQA forward is
                                        compared on the same input (answer_grid), and its encoder on this grid
  case<i>/grid_cells        [3, 1285]   grid cells 0, 24, 48
  case<i>/logits            [A]
  case<i>/count             [1]
  case<i>/<map>/<layer>     every map the engine records (src/models/vqa.h), layer 0 (word level) and 1
                            (question level): region_attention [7, 7], word_attention [T], affinity [T, 49]
                            (coattn) or aoa_matching / aoa_alpha / aoa_beta [T, 49] (aoa, word x region);
                            count_density/1 [7, 7]
golden.json: for each case the scene file, question, tokens, token ids, answer.
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "captioning"))
import bundle as capbundle  # noqa: E402
from engine_io import write_ppm  # noqa: E402
import mobilenet  # noqa: E402
import model as M  # noqa: E402
import questions as Q  # noqa: E402
import shapes  # noqa: E402

REPO = mobilenet.REPO_ROOT
ENCODER = "mobilenet-v2-imagenet"
# (file stem, split seed, index): the two page examples of the captioner (test split) and two more
SCENES = [("shapes-1", 3003, 5), ("shapes-2", 3003, 17), ("shapes-3", 2002, 7), ("shapes-4", 2002, 12)]
GOLDEN_QUESTIONS = {
    "shapes-1": ["what colour is the square ?", "how many triangles are there ?",
                 "is the green object left of the blue object ?", "what shape is the blue object ?"],
    "shapes-2": ["what color is the circle", "how many purple objects are there ?",
                 "is the circle above the yellow object ?", "what shape is the yellow thing please ?"],
    "shapes-3": ["how many objects are there ?", "what shape is the red object ?"],
}
MAPS_COATTN = ("affinity", "region_attention", "word_attention")
MAPS_AOA = ("aoa_matching", "aoa_alpha", "aoa_beta", "region_attention", "word_attention")
GRID_CELLS = [0, 24, 48]


def fold_region(state, pca, pca_dims):
    w, b = state["region.weight"].double(), state["region.bias"].double()
    comps, mean, scale = (torch.from_numpy(pca[k]).double() if k != "scale" else float(pca[k])
                          for k in ("comps", "mean", "scale"))
    w_pca, w_rest = w[:, :pca_dims], w[:, pca_dims:]
    w_f = w_pca @ comps.t() / scale                                   # [d, 1280]
    b_f = b - w_pca @ (comps.t() @ mean) / scale
    return torch.cat([w_f, w_rest], 1).float(), b_f.float()


def config_for(variant, model, name):
    return {
        "format": "attnlens-bundle", "version": 1, "architecture": "vqa", "task": "visual-question-answering",
        "name": name, "weights": "weights.safetensors", "weights_dtype": "F16",
        "image": capbundle.IMAGE_CONFIG if hasattr(capbundle, "IMAGE_CONFIG") else None,
        "encoder": {"bundle": ENCODER, "type": "mobilenet_v2", "grid": [7, 7], "feat_dim": M.GRID_DIM,
                    "cell_colour": "mean_rgb", "cell_position": "xy",
                    "cell_rule": "as the shapes captioner: 1280 MobileNetV2 channels, then the cell's mean "
                                 "preprocessed R, G, B, then its centre ((c + 0.5) / 7 * 2 - 1, (r + 0.5) / 7 * 2 - 1)"},
        "vqa": {"attention": "parallel-co-attention" if variant == "coattn" else "attention-over-attention",
                "grid_dim": M.GRID_DIM, "d": model.d, "k": model.k, "hidden": model.hidden,
                "vocab_size": len(Q.VOCAB), "num_answers": len(Q.ANSWERS), "answers": "answers.txt",
                "relation_units": model.relation.out_features if model.where else 0,
                "max_question_words": Q.MAX_WORDS, "levels": ["word (embeddings)", "question (LSTM)"]},
        "tokenizer": {"type": "word", "vocab": "vocab.txt", "lowercase": True, "split_regex": "\\w+|[^\\w\\s]",
                      "pad_id": 0, "unk_id": 1},
        "files": ["answers.txt"],
        "training": "models/training/vqa (see MODEL_CARD.md)",
    }


def load_bundle_model(out_dir):
    """The bundle as the engine reads it: F16 weights upcast to float32, in a model.py VQAModel."""
    cfg = json.load(open(os.path.join(out_dir, "config.json")))
    v = cfg["vqa"]
    variant = "coattn" if v["attention"] == "parallel-co-attention" else "aoa"
    units = v.get("relation_units", 0)
    model = M.VQAModel(variant, d=v["d"], k=v["k"], hidden=v["hidden"], where=units > 0, relation_units=units or 64)
    w, _ = capbundle.read_safetensors(os.path.join(out_dir, "weights.safetensors"))
    model.load_state_dict({k: torch.from_numpy(a.astype(np.float32)) for k, a in w.items()})
    model.eval()
    return model, cfg


def scene_grid(enc, px):
    x = mobilenet.preprocess_rgba(px)[None]
    with torch.no_grad():
        return mobilenet.decoder_grid(enc, x, True, True)[0]            # [49, 1285]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--variant", choices=("coattn", "aoa"), required=True)
    ap.add_argument("--checkpoint", default=None)
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", default=os.path.join(HERE, "runs"))
    args = ap.parse_args()
    torch.set_num_threads(2)
    ck = torch.load(args.checkpoint or os.path.join(args.runs, args.variant, "best.pt"))
    z = np.load(os.path.join(args.runs, "pca.npz"))
    pca = dict(mean=z["mean"], comps=z["comps"], scale=float(z["scale"]))
    state = dict(ck["model"])
    state["region.weight"], state["region.bias"] = fold_region(state, pca, ck["pca_dims"])
    name = os.path.basename(os.path.normpath(args.out))
    os.makedirs(args.out, exist_ok=True)
    model = M.VQAModel(args.variant, where="relation.weight" in state)
    cfg = config_for(args.variant, model, name)
    if cfg["image"] is None:
        del cfg["image"]
    json.dump(cfg, open(os.path.join(args.out, "config.json"), "w"), indent=2)
    capbundle.write_safetensors(os.path.join(args.out, "weights.safetensors"),
                                {k: v.numpy().astype(np.float16) for k, v in state.items()},
                                {"format": "pt", "source": "models/training/vqa/train.py"})
    open(os.path.join(args.out, "vocab.txt"), "w").write("\n".join(Q.VOCAB) + "\n")
    open(os.path.join(args.out, "answers.txt"), "w").write("\n".join(Q.ANSWERS) + "\n")

    # the folded, F16 bundle against the checkpoint on the dev questions' grids is checked by evaluate.py; here:
    # goldens from the bundle as loaded back
    model, cfg = load_bundle_model(args.out)
    enc = capbundle.load_encoder_bundle(os.path.join(REPO, "models", ENCODER))
    gdir = os.path.join(REPO, "tests", "goldens", "vqa")
    os.makedirs(gdir, exist_ok=True)
    tensors, cases = {}, []
    maps = MAPS_COATTN if args.variant == "coattn" else MAPS_AOA
    for stem, seed, index in SCENES:
        px, meta = shapes.make_scene(seed, index)
        write_ppm(os.path.join(gdir, stem + ".ppm"), px)
        png = os.path.join(REPO, "web", "examples", stem + ".png")
        if not os.path.exists(png):
            from PIL import Image
            Image.fromarray(px).save(png)
        if stem not in GOLDEN_QUESTIONS:
            continue
        grid = scene_grid(enc, px)
        tensors["%s/grid" % stem] = grid.numpy()                      # the model's exact input [49, 1285]
        for question in GOLDEN_QUESTIONS[stem]:
            toks, ids = Q.encode(question)
            with torch.no_grad():
                out = model(grid[None], torch.tensor([ids]))
            i = len(cases)
            p = "case%d/" % i
            tensors[p + "grid_cells"] = grid[GRID_CELLS].numpy()
            tensors[p + "logits"] = out["logits"][0].numpy()
            tensors[p + "count"] = out["count"].numpy().reshape(1)
            for level, lv in ((0, "w"), (1, "s")):
                for m in maps:
                    key = {"affinity": "affinity", "region_attention": "region", "word_attention": "words",
                           "aoa_matching": "matching", "aoa_alpha": "alpha", "aoa_beta": "beta"}[m]
                    a = out["%s/%s" % (lv, key)][0].numpy()
                    if m.startswith("aoa_"):
                        a = a.T                                       # [N, T] -> word x region [T, N]
                    if m == "region_attention":
                        a = a.reshape(7, 7)
                    tensors[p + "%s/%d" % (m, level)] = np.ascontiguousarray(a, np.float32)
            tensors[p + "count_density/1"] = out["density"][0].numpy().reshape(7, 7)
            answer = Q.ANSWERS[int(out["logits"][0].argmax())]
            cases.append(dict(name="case%d" % i, scene="tests/goldens/vqa/%s.ppm" % stem, grid="%s/grid" % stem,
                              question=question,
                              tokens=[t if t in Q.VOCAB else "<unk>" for t in toks], token_ids=ids, answer=answer,
                              maps=[m for m in maps] + ["count_density"]))
            print("golden %s %s %r -> %s (count %.3f)" % (name, stem, question, answer, float(out["count"][0])))
    capbundle.write_safetensors(os.path.join(args.out, "golden.safetensors"),
                                {k: np.ascontiguousarray(v, np.float32) for k, v in tensors.items()})
    json.dump(dict(model=name, tolerance="abs 1e-4 or rel 1e-3", grid_cells=GRID_CELLS, cases=cases),
              open(os.path.join(args.out, "golden.json"), "w"), indent=1)
    print("wrote", args.out, "weights %.2f MB, goldens %.2f MB" % (
        os.path.getsize(os.path.join(args.out, "weights.safetensors")) / 1e6,
        os.path.getsize(os.path.join(args.out, "golden.safetensors")) / 1e6))


if __name__ == "__main__":
    main()
