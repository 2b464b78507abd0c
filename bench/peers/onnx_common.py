"""What the peer benchmark's ONNX exporters (export_translation.py, export_sentiment.py, export_captioning.py) share:
the recipe on sys.path, the command line (--bundle, --out), one torch.onnx.export setting, the base of the graph
wrappers, and the manifest <name>.json with the list of written files.

Each exporter imports it before torch: `recipe("translation")` puts models/training/translation on sys.path and
exits with how to install PyTorch when it is missing.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
OPSET = 17

try:
    import torch
    import torch.nn as nn
except ImportError:
    sys.exit("bench/peers: PyTorch is missing; install it with `apt-get install python3-torch python3-torchvision` "
             "(see models/training/README files)")


def recipe(name):
    """Puts models/training/<name> first on sys.path, so its modules import as the recipe's own scripts do."""
    sys.path.insert(0, os.path.join(REPO, "models", "training", name))


def parse_args(doc, extra=None, bundle=None):
    """--bundle DIR (required unless `bundle` gives a default) and --out DIR (bench/peers/out), plus what
    `extra(parser)` adds; one torch thread, the output folder created."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bundle", required=bundle is None, default=bundle)
    p.add_argument("--out", default=os.path.join(HERE, "out"))
    if extra:
        extra(p)
    args = p.parse_args()
    torch.set_num_threads(1)
    os.makedirs(args.out, exist_ok=True)
    return args


def export(module, inputs, path, **kw):
    """torch.onnx.export at the benchmark's opset, constants folded."""
    torch.onnx.export(module, inputs, path, opset_version=OPSET, do_constant_folding=True, **kw)


class Graph(nn.Module):
    """A graph around a recipe module `m`; `maps`: whether the attention maps are outputs too."""

    def __init__(self, m, maps=False):
        super().__init__()
        self.m, self.maps = m, maps


def kv_cache_io(layers, maps):
    """The Transformer translators' graph interface (export_translation.py, export_hf.py): the encoder graph's outputs
    and dynamic axes (src_ids [1,S] -> cross_k_l, cross_v_l [1,H,S,dh] [+ encoder_self [L,1,H,S,S]]), and the decoder
    step's input names, output names and dynamic axes (token [N,1], pos [1], past_k_l / past_v_l [N,H,t,dh],
    cross_k_l / cross_v_l -> logits [N,V], present_k_l / present_v_l [N,H,t+1,dh] [+ decoder_self [L,N,H,t+1],
    cross [L,N,H,S]])."""
    kv = [f"{{}}_{kv}_{i}" for i in range(layers) for kv in ("k", "v")]
    enc_out = [x.format("cross") for x in kv] + (["encoder_self"] if maps else [])
    enc_axes = {"src_ids": {1: "S"}}
    for o in enc_out:
        enc_axes[o] = {2: "S"} if o.startswith("cross") else {3: "S", 4: "S"}
    in_names = ["token", "pos"] + [x.format("past") for x in kv] + [x.format("cross") for x in kv]
    out_names = ["logits"] + [x.format("present") for x in kv] + (["decoder_self", "cross"] if maps else [])
    dec_axes = {"token": {0: "N"}, "logits": {0: "N"}}
    for nm in in_names[2:]:
        dec_axes[nm] = {0: "N", 2: "T" if nm.startswith("past") else "S"}
    for nm in out_names[1:]:
        dec_axes[nm] = {0: "N", 2: "T1"} if nm.startswith("present") else {1: "N", 3: "T1" if nm == "decoder_self" else "S"}
    return enc_out, enc_axes, in_names, out_names, dec_axes


def write_tatoeba_dev(out):
    """Writes out/tatoeba_dev.de, the Tatoeba development split of the general corpus
    (models/training/translation/general.py: sentences never seen in training), when the corpus is there; returns
    its path, or None."""
    sys.path.insert(0, os.path.join(REPO, "models", "training", "translation"))
    try:
        from general import TATOEBA_FILE, read_tatoeba, split_tatoeba
    except ImportError:
        return None
    finally:
        sys.path.pop(0)
    if not os.path.exists(TATOEBA_FILE):
        return None
    pairs = read_tatoeba()
    _, dev = split_tatoeba(pairs)
    path = os.path.join(out, "tatoeba_dev.de")
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(pairs[i][0] + "\n" for i in dev))
    return path


def finish(out, name, meta, written, indent=None):
    """Writes the manifest out/<name>.json and prints each written file with its size."""
    with open(os.path.join(out, f"{name}.json"), "w") as f:
        json.dump(meta, f, indent=indent)
    for w in written:
        print(f"wrote {os.path.relpath(w)} ({os.path.getsize(w) / 1e6:.1f} MB)")
