"""attnlens bundle I/O for the captioners: safetensors writer/reader (numpy + struct, no external package), export of a
trained checkpoint, and the export-side loader that rebuilds the PyTorch models from a bundle.

Bundle layout (models/<name>/):
  config.json          {"format": "attnlens-bundle", "version": 1, "architecture": "show-attend-tell", ...}
  weights.safetensors  tensors named "encoder.<torchvision mobilenet_v2 state_dict name>" and
                       "decoder.<sat.ShowAttendTell state_dict name>"; BatchNorm tensors are stored unfolded
                       (weight, bias, running_mean, running_var; eps in config), num_batches_tracked is omitted.
  vocab.txt            one token per line, line i = token id i (ids 0-3: <pad> <start> <end> <unk>)

safetensors: 8-byte little-endian header length N, then N bytes of JSON {name: {"dtype", "shape",
"data_offsets": [begin, end]}} (offsets relative to the end of the header, tensors packed in header order,
header padded with spaces to a multiple of 8), then raw little-endian data.
"""
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mobilenet  # noqa: E402
import sat  # noqa: E402

sys.path.insert(0, os.path.dirname(HERE))
import safetensors_io  # noqa: E402  (models/training/)

DTYPES = safetensors_io.DTYPES
write_safetensors = safetensors_io.write_safetensors


def read_safetensors(path):
    return safetensors_io.read_safetensors(path)[0]


def export_bundle(ckpt_path, out_dir, name, task, encoder_dtype="F32", decoder_dtype="F16", include_classifier=True,
                  extra_config=None):
    """Writes config.json, weights.safetensors, vocab.txt for a train.py checkpoint.

    The encoder stays F32 by default: it is then bit-identical to the .pth the features were cached from, so the
    cached features are exactly what the bundle's encoder computes."""
    ck = torch.load(ckpt_path)
    itos = ck["itos"]
    hp = ck["hp"]
    if hp["feat_dim"] != 1280 or ck["args"].get("grid", "grid7") != "grid7":
        raise ValueError("export supports the 7x7x1280 grid (features after features.18) only")
    os.makedirs(out_dir, exist_ok=True)
    enc = mobilenet.build_mobilenet_v2()
    tensors = {}
    for k, v in enc.state_dict().items():
        if k.endswith("num_batches_tracked"):
            continue
        if k.startswith("classifier") and not include_classifier:
            continue
        tensors["encoder." + k] = v.numpy().astype(DTYPES[encoder_dtype])
    for k, v in ck["model"].items():
        tensors["decoder." + k] = v.numpy().astype(DTYPES[decoder_dtype])
    write_safetensors(os.path.join(out_dir, "weights.safetensors"), tensors)
    with open(os.path.join(out_dir, "vocab.txt"), "w") as f:
        f.write("\n".join(itos) + "\n")
    config = {
        "format": "attnlens-bundle",
        "version": 1,
        "architecture": "show-attend-tell",
        "task": task,
        "name": name,
        "weights": "weights.safetensors",
        "weights_dtype": {"encoder": encoder_dtype, "decoder": decoder_dtype},
        "image": {
            "input_size": [mobilenet.INPUT_SIZE, mobilenet.INPUT_SIZE],
            "channels": "RGB",
            "alpha_background": list(mobilenet.BACKGROUND_RGB),
            "alpha_composite": "c = (rgb * a + background * (255 - a)) / 255 per source pixel, float32",
            "resize": "bilinear, half-pixel centres, no antialias, whole image squashed to 224x224 (no crop): "
                      "s = (dst + 0.5) * in/out - 0.5, clamped below at 0; i0 = floor(s), i1 = min(i0 + 1, in - 1)",
            "normalize": "x = v / 127.5 - 1",
            "layout": "CHW",
        },
        "encoder": {
            "type": "mobilenet_v2",
            "width_mult": 1.0,
            "tensor_prefix": "encoder.",
            "bn_eps": 1e-5,
            "activation": "relu6",
            "same_pad_convs": list(mobilenet.SAME_PAD_CONVS),
            "same_pad": "zero pad right 1 and bottom 1, then padding 0 (TF 'SAME' for stride 2, 3x3, even size)",
            "grid_layer": "features (after features.18)",
            "grid": [7, 7],
            "feat_dim": hp["feat_dim"],
            "has_classifier": include_classifier,
            "classifier_labels": "ImageNet: output i = line i+1 of imagenet_labels.txt (line 0 is background)"
            if include_classifier else None,
        },
        "decoder": {
            "type": "sat-soft-lstm",
            "tensor_prefix": "decoder.",
            "vocab_size": len(itos),
            "proj_dim": hp["proj_dim"],
            "embed_dim": hp["embed_dim"],
            "hidden_dim": hp["hidden_dim"],
            "att_dim": hp["att_dim"],
            "gate": "scalar",
            "lstm_gate_order": "i,f,g,o",
            "max_len": ck["args"]["max_len"],
        },
        "tokenizer": {
            "type": "word",
            "vocab": "vocab.txt",
            "lowercase": True,
            "split_regex": "\\w+|[^\\w\\s]",
            "pad_id": sat.PAD, "start_id": sat.START, "end_id": sat.END, "unk_id": sat.UNK,
            "detokenize": "join with single spaces",
        },
        "decoding": {"num_beams": 3, "length_norm": 0.0,
                     "beam_rule": "sat.beam_decode: each step extend every active hypothesis by every word, keep "
                                  "the num_beams best extensions overall (score = sum of log-softmax); kept ones "
                                  "ending in <end> are finished and leave the active set; stop when num_beams are "
                                  "finished, none is active, or after max_len steps; answer = best finished "
                                  "(best active only if none finished)"},
    }
    if extra_config:
        config.update(extra_config)
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    return config


def load_bundle(bundle_dir):
    """Export-side loader: rebuilds (encoder, decoder, itos, config) from a bundle, tensors upcast to float32."""
    config = json.load(open(os.path.join(bundle_dir, "config.json")))
    assert config["format"] == "attnlens-bundle" and config["architecture"] == "show-attend-tell"
    w = read_safetensors(os.path.join(bundle_dir, config["weights"]))
    itos = open(os.path.join(bundle_dir, config["tokenizer"]["vocab"])).read().rstrip("\n").split("\n")
    enc = mobilenet.build_mobilenet_v2()
    esd = enc.state_dict()
    for k in list(esd):
        if k.endswith("num_batches_tracked"):
            continue
        if "encoder." + k in w:
            esd[k] = torch.from_numpy(w["encoder." + k].astype(np.float32))
        elif not k.startswith("classifier"):
            raise KeyError("bundle lacks encoder." + k)
    enc.load_state_dict(esd)
    d = config["decoder"]
    dec = sat.ShowAttendTell(d["vocab_size"], feat_dim=config["encoder"]["feat_dim"], proj_dim=d["proj_dim"],
                             embed_dim=d["embed_dim"], hidden_dim=d["hidden_dim"], att_dim=d["att_dim"])
    dsd = {k[len("decoder."):]: torch.from_numpy(v.astype(np.float32)) for k, v in w.items()
           if k.startswith("decoder.")}
    dec.load_state_dict(dsd, strict=True)
    dec.eval()
    assert len(itos) == d["vocab_size"]
    return enc, dec, itos, config
