"""attnlens bundle I/O for the captioners: safetensors writer/reader (numpy + struct, no external package), export of a
trained checkpoint, and the export-side loader that rebuilds the PyTorch models from a bundle.

Bundle layout (models/<name>/):
  config.json          {"format": "attnlens-bundle", "version": 1, "architecture": "show-attend-tell", ...,
                        "encoder": {"bundle": "mobilenet-v2-imagenet", ...}}
  weights.safetensors  the decoder only: "decoder.<sat.ShowAttendTell state_dict name>"
  vocab.txt            one token per line, line i = token id i (ids 0-3: <pad> <start> <end> <unk>)
The encoder weights live once, in the sibling bundle models/mobilenet-v2-imagenet/ (export_encoder.py: torchvision
mobilenet_v2 state_dict names, conv weights F16, BatchNorm unfolded F32, eps in config), which every captioning
bundle names in config.json "encoder.bundle" (resolved as ../<name>/ next to the captioning bundle).
(Older bundles with "encoder.*" tensors inside the weights file still load with load_bundle.)

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
ENCODER_BUNDLE = "mobilenet-v2-imagenet"


def image_config(size=mobilenet.INPUT_SIZE):
    """config.json "image" of a bundle whose encoder reads size x size pixels (a multiple of 32: the grid is size/32
    cells a side; the engine takes 32 ... 512)."""
    assert size % 32 == 0 and 32 <= size <= 512, size
    return {
        "input_size": [size, size],
        "channels": "RGB",
        "alpha_background": list(mobilenet.BACKGROUND_RGB),
        "alpha_composite": "c = (rgb * a + background * (255 - a)) / 255 per source pixel, float32",
        "resize": "bilinear, half-pixel centres, no antialias, whole image squashed to %dx%d (no crop): "
                  "s = (dst + 0.5) * in/out - 0.5, clamped below at 0; i0 = floor(s), i1 = min(i0 + 1, in - 1)"
                  % (size, size),
        "normalize": "x = v / 127.5 - 1",
        "layout": "CHW",
    }


IMAGE_CONFIG = image_config()


def input_size(config):
    """The side a bundle's config.json gives its encoder's input (224 when it names none)."""
    return int(config.get("image", {}).get("input_size", [mobilenet.INPUT_SIZE])[0])
# the recipes' one safetensors reader and writer (read_safetensors returns (tensors, metadata))
read_safetensors = safetensors_io.read_safetensors
write_safetensors = safetensors_io.write_safetensors


def encoder_tensors(encoder_dir):
    """An encoder bundle's weights as float32 torch tensors under torchvision's names: integer codes x their one
    float32 scale where a "<name>_scale" is stored (export_encoder.py), else the values upcast."""
    config = json.load(open(os.path.join(encoder_dir, "config.json")))
    assert config["architecture"] == "mobilenet-v2", encoder_dir
    w, _ = read_safetensors(os.path.join(encoder_dir, config["weights"]))
    out = {}
    for k, v in w.items():
        if k.endswith("_scale"):
            continue
        v = v.astype(np.float32)
        if k + "_scale" in w:
            v = v * w[k + "_scale"].astype(np.float32)[0]
        out[k] = torch.from_numpy(v.astype(np.float32))
    return out


def load_encoder_bundle(encoder_dir, weights_path=None):
    """The MobileNetV2 of an encoder bundle, in eval mode. A bundle without the ImageNet classifier (a fine-tuned
    captioning encoder) keeps the classifier of the .pth it is built on (weights_path, default ../shared/data)."""
    enc = mobilenet.build_mobilenet_v2(weights_path=weights_path)
    esd = enc.state_dict()
    tensors = encoder_tensors(encoder_dir)
    missing = [k for k in esd if k not in tensors and not k.endswith("num_batches_tracked")
               and not k.startswith("classifier.")]
    if missing:
        raise KeyError("encoder bundle %s lacks %s" % (encoder_dir, ", ".join(missing[:5])))
    esd.update(tensors)
    enc.load_state_dict(esd)
    enc.eval()
    return enc


def encoder_dir_for(bundle_dir, config):
    """Where a captioning bundle's encoder bundle is: ../<config.encoder.bundle>/ next to it."""
    return os.path.join(os.path.dirname(os.path.abspath(os.path.normpath(bundle_dir))), config["encoder"]["bundle"])


def export_bundle(ckpt_path, out_dir, name, task, decoder_dtype="F16", extra_config=None,
                  encoder_bundle=ENCODER_BUNDLE, num_beams=3, length_norm=0.0):
    """Writes config.json, weights.safetensors (the decoder), vocab.txt for a train.py checkpoint. The encoder is
    the shared bundle `encoder_bundle` (export_encoder.py), named in config.json, not copied."""
    ck = torch.load(ckpt_path)
    itos = ck["itos"]
    hp = ck["hp"]
    cell_colour = bool(ck["args"].get("cell_colour", False))
    cell_position = bool(ck["args"].get("cell_position", False))
    if hp["feat_dim"] != 1280 + (3 if cell_colour else 0) + (2 if cell_position else 0) or \
            ck["args"].get("grid", "grid7") != "grid7":
        raise ValueError("export supports the 7x7x1280 grid (features after features.18) only, plus the 3 cell "
                         "colours of --cell-colour and the 2 coordinates of --cell-position")
    extra_config = dict(extra_config or {})
    if cell_colour:
        extra_config["cell_colour"] = "mean_rgb"
    if cell_position:
        extra_config["cell_position"] = "xy"
    os.makedirs(out_dir, exist_ok=True)
    tensors = {}
    for k, v in ck["model"].items():
        tensors["decoder." + k] = v.numpy().astype(DTYPES[decoder_dtype])
    return write_decoder_bundle(out_dir, name, task, tensors, itos, hp, ck["args"]["max_len"], decoder_dtype,
                                extra_config, encoder_bundle, num_beams, length_norm)


def write_decoder_bundle(out_dir, name, task, tensors, itos, hp, max_len, decoder_dtype="F16", extra_config=None,
                         encoder_bundle=ENCODER_BUNDLE, num_beams=3, length_norm=0.0, size=mobilenet.INPUT_SIZE):
    """tensors: {"decoder.<name>": array}; hp: the ShowAttendTell sizes (feat_dim, proj_dim, ...); size: the encoder's
    input side (grid size/32 cells a side)."""
    g = size // 32
    os.makedirs(out_dir, exist_ok=True)
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
        "weights_dtype": {"decoder": decoder_dtype},
        "image": image_config(size),
        "encoder": {
            "bundle": encoder_bundle,
            "type": "mobilenet_v2",
            "grid_layer": "features (after features.18)",
            "grid": [g, g],
            "feat_dim": hp["feat_dim"],
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
            "max_len": max_len,
        },
        "tokenizer": {
            "type": "word",
            "vocab": "vocab.txt",
            "lowercase": True,
            "split_regex": "\\w+|[^\\w\\s]",
            "pad_id": sat.PAD, "start_id": sat.START, "end_id": sat.END, "unk_id": sat.UNK,
            "detokenize": "join with single spaces",
        },
        "decoding": {"num_beams": num_beams, "length_norm": float(length_norm),
                     "beam_rule": "sat.beam_decode: each step extend every active hypothesis by every word, keep "
                                  "the num_beams best extensions overall (score = sum of log-softmax); kept ones "
                                  "ending in <end> are finished and leave the active set; stop when num_beams are "
                                  "finished, none is active, or after max_len steps; answer = best finished "
                                  "(best active only if none finished)"},
    }
    if hp.get("score_smooth"):
        k = hp["score_smooth"]
        config["decoder"]["score_smoothing"] = k
        config["decoder"]["score_smoothing_rule"] = (
            "before the softmax, each cell's attention score e_i becomes the mean of the scores of the cells of the "
            "%dx%d window centred on it that lie inside the grid (sat.smooth_scores)" % (k, k))
    if hp.get("context", "lstm") == "output":
        config["decoder"]["context"] = "output"
        config["decoder"]["context_rule"] = (
            "the LSTM reads E[y_{t-1}] alone; alpha_t, z_t and beta_t come from the state h_t after it; logits = "
            "fc([h_t ; beta_t z_t]) (sat.py, context=\"output\")")
    extra_config = dict(extra_config or {})
    if extra_config.pop("cell_colour", None):
        # mobilenet.cell_colour: appended to every cell's 1280 features, so encoder.feat_dim is 1283
        config["encoder"]["cell_colour"] = "mean_rgb"
        config["encoder"]["cell_colour_rule"] = ("each cell (r, c) of the %dx%d grid gets 3 more channels: the mean of "
                                                 "the preprocessed input x over pixels [32r, 32r+32) x [32c, 32c+32), "
                                                 "channels R, G, B, after its 1280 MobileNetV2 channels" % (g, g))
    if extra_config.pop("cell_position", None):
        # mobilenet.cell_position: appended after the cell colour
        config["encoder"]["cell_position"] = "xy"
        config["encoder"]["cell_position_rule"] = ("then 2 more channels per cell (r, c): its centre "
                                                   "((c + 0.5) / %d * 2 - 1, (r + 0.5) / %d * 2 - 1)" % (g, g))
    if extra_config:
        config.update(extra_config)
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    return config


def load_bundle(bundle_dir, encoder_dir=None):
    """Export-side loader: rebuilds (encoder, decoder, itos, config) from a bundle, tensors upcast to float32. The
    encoder comes from the encoder bundle the config names (or `encoder_dir`); old bundles that carry "encoder.*"
    tensors themselves load those."""
    config = json.load(open(os.path.join(bundle_dir, "config.json")))
    assert config["format"] == "attnlens-bundle" and config["architecture"] == "show-attend-tell"
    w, _ = read_safetensors(os.path.join(bundle_dir, config["weights"]))
    itos = open(os.path.join(bundle_dir, config["tokenizer"]["vocab"])).read().rstrip("\n").split("\n")
    if "bundle" in config["encoder"]:
        enc = load_encoder_bundle(encoder_dir or encoder_dir_for(bundle_dir, config))
    else:
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
                             embed_dim=d["embed_dim"], hidden_dim=d["hidden_dim"], att_dim=d["att_dim"],
                             score_smooth=d.get("score_smoothing", 0), context=d.get("context", "lstm"))
    dsd = {k[len("decoder."):]: torch.from_numpy(v.astype(np.float32)) for k, v in w.items()
           if k.startswith("decoder.")}
    dec.load_state_dict(dsd, strict=True)
    dec.eval()
    assert len(itos) == d["vocab_size"]
    return enc, dec, itos, config
