"""Fixtures and goldens for the three encoder architectures (BERT, DistilBERT, ViT): seeded random-weight models of
several sizes saved as Hugging Face folders (config.json + model.safetensors + tokenizer.json or
preprocessor_config.json), and the PyTorch goldens the engine is checked against
(tests/goldens/hf/<arch>-<size>.{json,safetensors}). The HF-folder and golden writers are decoder_fixtures.py's.

  /usr/bin/python3 models/training/hf/encoder_fixtures.py [--only bert|distilbert|vit]
  then, per fixture, the converted bundle the engine tests read (wasm/convert):
  node wasm/cli.js convert tests/fixtures/hf/<f>/hf tests/fixtures/hf/<f>/bundle --name <f>

One row of SIZES per fixture: the HF class, seed, layout and config fields. The sizes differ on purpose: a
classification head with more than two labels and one without a head per architecture, erf and tanh GELU and ReLU,
different layer_norm_eps, DistilBERT's sinusoidal position table, a non-square head split. "legacy" BERT folders carry
what old checkpoints hold (LayerNorm.gamma/beta, the embeddings.position_ids buffer, a cls.* pre-training head).

Goldens (safetensors keys "case<i>/<what>", float32 row-major):
  logits [labels] (with a head); pooled [d] (BERT's tanh pooler, DistilBERT's ReLU(pre_classifier(CLS)), ViTModel's
  pooler; absent where the model has none); last_hidden_state [T, d] (ViT: after vit.layernorm); attention.<l> [H, T, T];
  hidden_states.<l> [T, d] (l = 0..layers: the embeddings' output, then every layer's); ViT also pixel_values [3, h, w].
The JSON holds each case's input ids (text models) and the labels.
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bert  # noqa: E402
import distilbert  # noqa: E402
import vit  # noqa: E402
from decoder_fixtures import ROOT, STD, TOKENIZERS, np_state, write_goldens, write_hf_folder  # noqa: E402

LABELS3 = {"0": "negative", "1": "neutral", "2": "positive"}
LABELS5 = {str(i): name for i, name in enumerate(["cat", "dog", "bird", "fish", "horse"])}

SIZES = {
    "bert-tiny": {"arch": "bert", "cls": "BertForSequenceClassification", "seed": 31, "layout": "legacy",
                  "tokenizer": "wordpiece",
                  "config": {"hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 4,
                             "intermediate_size": 32, "max_position_embeddings": 24, "id2label": LABELS3}},
    "bert-small": {"arch": "bert", "cls": "BertModel", "seed": 32, "layout": "save_pretrained",
                   "tokenizer": "wordpiece-cased",
                   "config": {"hidden_size": 30, "num_hidden_layers": 3, "num_attention_heads": 3,
                              "intermediate_size": 48, "max_position_embeddings": 40, "hidden_act": "gelu_new",
                              "layer_norm_eps": 1e-7}},
    "distilbert-tiny": {"arch": "distilbert", "cls": "DistilBertForSequenceClassification", "seed": 41,
                        "layout": "save_pretrained", "tokenizer": "wordpiece",
                        "config": {"dim": 16, "n_layers": 2, "n_heads": 2, "hidden_dim": 40,
                                   "max_position_embeddings": 24, "sinusoidal_pos_embds": True,
                                   "id2label": {"0": "NEGATIVE", "1": "POSITIVE"}}},
    "distilbert-small": {"arch": "distilbert", "cls": "DistilBertModel", "seed": 42, "layout": "save_pretrained",
                         "tokenizer": "wordpiece",
                         "config": {"dim": 24, "n_layers": 3, "n_heads": 4, "hidden_dim": 36,
                                    "max_position_embeddings": 32, "activation": "relu"}},
    "vit-tiny": {"arch": "vit", "cls": "ViTForImageClassification", "seed": 51, "layout": "save_pretrained",
                 "config": {"hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 4,
                            "intermediate_size": 32, "image_size": 16, "patch_size": 4, "id2label": LABELS5}},
    "vit-small": {"arch": "vit", "cls": "ViTModel", "seed": 52, "layout": "save_pretrained",
                  "config": {"hidden_size": 24, "num_hidden_layers": 3, "num_attention_heads": 3,
                             "intermediate_size": 48, "image_size": 24, "patch_size": 6, "hidden_act": "gelu_new",
                             "layer_norm_eps": 1e-6}},
}
MODULES = {"bert": bert, "distilbert": distilbert, "vit": vit}
MODEL_TYPE = {"bert": "bert", "distilbert": "distilbert", "vit": "vit"}


def hf_config(spec):
    cfg = {"architectures": [spec["cls"]], "model_type": MODEL_TYPE[spec["arch"]]}
    if "tokenizer" in spec:
        tok = json.load(open(os.path.join(TOKENIZERS, spec["tokenizer"], "tokenizer.json")))
        cfg["vocab_size"] = len(tok["model"]["vocab"])
        cfg["pad_token_id"] = tok["model"]["vocab"]["[PAD]"]
    cfg.update(spec["config"])
    if "id2label" in cfg:
        cfg["label2id"] = {v: int(k) for k, v in cfg["id2label"].items()}
    return cfg


def checkpoint(model, spec, cfg):
    """The state_dict as the layout's checkpoint stores it."""
    state = np_state(model)
    if spec["layout"] != "legacy":
        return state
    out = {}
    for k, v in state.items():
        out[k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta")] = v
    n = cfg["max_position_embeddings"]
    out["bert.embeddings.position_ids"] = np.arange(n, dtype=np.int64).reshape(1, n)
    h = cfg["hidden_size"]
    out["cls.predictions.transform.dense.weight"] = np.zeros((h, h), np.float32)  # a head the engine drops
    return out


def extra_files(folder, spec, cfg):
    if spec["arch"] == "vit":
        s = cfg["image_size"]
        processor = {"do_resize": True, "size": {"height": s, "width": s}, "resample": 2, "do_rescale": True,
                     "rescale_factor": 1 / 255, "do_normalize": True, "image_mean": [0.5, 0.5, 0.5],
                     "image_std": [0.5, 0.5, 0.5], "image_processor_type": "ViTImageProcessor"}
        with open(os.path.join(folder, "preprocessor_config.json"), "w") as f:
            json.dump(processor, f, indent=2)
            f.write("\n")
        return []
    return [spec["tokenizer"] + "/tokenizer.json"]


def make(name):
    spec = SIZES[name]
    module = MODULES[spec["arch"]]
    cfg = hf_config(spec)
    head = "id2label" in cfg
    model = bert.random_state(module.build(cfg, head), spec["seed"], STD)
    if spec["arch"] == "bert":
        for m in model.modules():
            m.config = cfg
    if spec["arch"] == "distilbert":
        distilbert.fix_sinusoidal(model)
    folder = os.path.join(ROOT, "tests", "fixtures", "hf", name, "hf")
    os.makedirs(folder, exist_ok=True)
    write_hf_folder(folder, cfg, checkpoint(model, spec, cfg), extra_files(folder, spec, cfg))
    g = torch.Generator().manual_seed(spec["seed"] + 1000)
    cases, tensors = [], {}
    if spec["arch"] == "vit":
        s = cfg["image_size"]
        inputs = [torch.rand((3, s, s), generator=g) * 2 - 1 for _ in range(2)]
    else:
        n = cfg["max_position_embeddings"]
        inputs = [torch.randint(0, cfg["vocab_size"], (length,), generator=g) for length in (1, 7, n)]
    for i, x in enumerate(inputs):
        with torch.no_grad():
            out = model(x)
        if head:
            logits, pooled, attentions, hidden = out
            tensors[f"case{i}/logits"] = logits
            last = hidden[-1] if spec["arch"] != "vit" else pooled
            if spec["arch"] != "vit":
                tensors[f"case{i}/pooled"] = pooled
        else:
            last, pooled, attentions, hidden = out
            if pooled is not None:
                tensors[f"case{i}/pooled"] = pooled
        tensors[f"case{i}/last_hidden_state"] = last
        for l, w in enumerate(attentions):
            tensors[f"case{i}/attention.{l}"] = w
        for l, h in enumerate(hidden):
            tensors[f"case{i}/hidden_states.{l}"] = h
        if spec["arch"] == "vit":
            tensors[f"case{i}/pixel_values"] = x
            cases.append({"pixel_values": list(x.shape)})
        else:
            cases.append({"input_ids": x.tolist()})
    meta = {"generator": "models/training/hf/encoder_fixtures.py", "architecture": "hf-" + spec["arch"],
            "class": spec["cls"], "labels": [cfg["id2label"][str(i)] for i in range(len(cfg["id2label"]))] if head
            else None, "cases": cases}
    write_goldens(name, meta, tensors)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=sorted(MODULES))
    args = ap.parse_args()
    torch.set_num_threads(2)
    for name, spec in SIZES.items():
        if args.only in (None, spec["arch"]):
            make(name)
            print("wrote", name)


if __name__ == "__main__":
    main()
