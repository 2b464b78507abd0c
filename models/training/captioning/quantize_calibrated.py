"""Calibrated int8 codes for a captioner and its MobileNetV2 encoder: GPTQ rounding (Frantar et al., "GPTQ: Accurate
Post-Training Quantization for Generative Pre-trained Transformers", 2022) with the scales of scripts/quantize.mjs.

  /usr/bin/python3 models/training/captioning/quantize_calibrated.py [--bundle models/flickr8k-mobilenet] [--images 256]

Writes int8-codes.safetensors into the captioning bundle and into its encoder bundle: for every matrix that
scripts/quantize.mjs stores as int8 (2-D float weights of at least 1024 values; an encoder's convolution weights,
one row per output channel), the int8 codes of the same shape. scripts/quantize.mjs takes the codes from there
instead of rounding to nearest; the scale of each row stays its rule, s = fround(max|w_row| / 127), so the int8
bundle's format and the engine's arithmetic do not change, only which of the two neighbouring codes (or, where the
compensation carries far enough, a code further away) a weight gets.

Round to nearest makes each weight's own error as small as it can be, but the errors of one row add up in the
product w·x. GPTQ rounds the columns of a row one after another and spreads each rounding error over the columns not
yet rounded, in proportion to how the inputs of those columns vary together (H = Σ x xᵀ over calibration inputs), so
that the error of the product, (w − ŵ)ᵀ H (w − ŵ), is what gets small. Columns go in order of decreasing H_jj
("act order"), H is damped by 1 % of its mean diagonal, and a row's codes stay in [-127, 127].

Calibration inputs: --images Flickr8k *training* images (a fixed sample, seed 0; never dev or test), each through the
bundle's own encoder (PyTorch, bundle.load_bundle) and teacher-forced with two of its reference captions
(sat.forced_decode); a forward hook on every Linear, LSTMCell and Conv2d sums H for its weight (a depthwise
convolution: one 9×9 H per channel). The word embedding has no product of its own: its rows are looked up, then
multiplied by the LSTM's W_ih, so its H is W_ihᵀ W_ih. Matrices whose H is zero (init_h and init_c of
flickr8k-mobilenet are all zeros) get round to nearest. Deterministic (one thread, fixed sample): a second run writes
the same bytes.

What it buys (models/flickr8k-mobilenet/MODEL_CARD.md "int8"): per matrix, the calibration error of the product falls
1.3–53×, printed here; and the int8 captioner's captions match float32's more often.
"""
import argparse
import hashlib
import json
import os
import sys
import tarfile
import time

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bundle  # noqa: E402
from engine_io import flickr8k_captions  # noqa: E402
import mobilenet  # noqa: E402
import sat  # noqa: E402
import text  # noqa: E402

sys.path.insert(0, os.path.dirname(HERE))
import safetensors_io  # noqa: E402  (models/training/)

CODES_FILE = "int8-codes.safetensors"  # scripts/quantize.mjs reads this name
MIN_VALUES = 1024  # scripts/quantize.mjs MIN_VALUES = io::kInt8MinValues


def row_scales(w):
    """scripts/quantize.mjs: s = fround(fround(max|w_row|) / 127), w [rows, cols] float32."""
    amax = np.abs(w.astype(np.float32)).max(axis=1)
    return (amax / np.float32(127)).astype(np.float32)


def gptq_codes(w, h, s, damp=0.01):
    """int8 codes [R, C] for weights w [R, C] (float32 values), input second moment h [C, C] (float64), scales s [R]."""
    W = torch.tensor(w, dtype=torch.float64)
    H = torch.tensor(h, dtype=torch.float64) if not torch.is_tensor(h) else h.clone().double()
    S = torch.tensor(s, dtype=torch.float64)
    S = torch.where(S == 0, torch.ones_like(S), S)  # an all-zero row: every code 0 whatever S is
    R, C = W.shape
    dead = torch.diag(H) == 0
    H[dead, dead] = 1.0
    W[:, dead] = 0.0  # no input ever reaches these columns: their rounding error costs nothing, so round to nearest
    order = torch.argsort(torch.diag(H), descending=True, stable=True)
    W, H = W[:, order], H[order][:, order]
    H += damp * torch.mean(torch.diag(H)) * torch.eye(C, dtype=torch.float64)
    U = torch.linalg.cholesky(torch.cholesky_inverse(torch.linalg.cholesky(H)), upper=True)  # H⁻¹ = Uᵀ U
    Q = torch.zeros_like(W)
    dead_cols = dead[order]
    block = 128
    for a in range(0, C, block):
        b = min(a + block, C)
        Wb, Eb, Ub = W[:, a:b].clone(), torch.zeros(R, b - a, dtype=torch.float64), U[a:b, a:b]
        for j in range(b - a):
            q = torch.clamp(torch.round(Wb[:, j] / S), -127, 127)
            Q[:, a + j] = q
            if dead_cols[a + j]:
                continue
            e = (Wb[:, j] - q * S) / Ub[j, j]
            Wb[:, j:] -= e[:, None] * Ub[j, j:][None, :]
            Eb[:, j] = e
        W[:, b:] -= Eb @ U[a:b, b:]
    Q = Q[:, torch.argsort(order)]
    # the dead columns: round to nearest of the original weights
    orig = torch.tensor(w, dtype=torch.float64)
    Q[:, dead] = torch.clamp(torch.round(orig[:, dead] / S[:, None]), -127, 127)
    return Q.numpy().astype(np.int8)


def product_error(w, q, s, h):
    """tr((w − q·s) H (w − q·s)ᵀ): the squared error of the product summed over the calibration inputs."""
    d = torch.tensor(w.astype(np.float64) - q.astype(np.float64) * s.astype(np.float64)[:, None])
    if h.dim() == 3:
        return float(torch.einsum("rk,rkm,rm->", d, h, d))
    return float(torch.einsum("rk,km,rm->", d, h, d))


class Moments:
    """Σ x xᵀ per weight name, filled by forward hooks."""

    def __init__(self):
        self.h = {}

    def add(self, name, x):
        x = x.reshape(-1, x.shape[-1]).double()
        self.h[name] = self.h.get(name, 0) + x.T @ x

    def add_conv(self, name, mod, x):
        pad = mod.padding
        if isinstance(mod, mobilenet.SamePadConv2d):
            x, pad = F.pad(x, (0, 1, 0, 1)), (0, 0)
        cols = F.unfold(x, mod.kernel_size, dilation=mod.dilation, padding=pad, stride=mod.stride)  # [B, Cin·k·k, L]
        b, ck, length = cols.shape
        if mod.groups == 1:
            self.add(name, cols.transpose(1, 2))
            return
        assert mod.groups == mod.in_channels == mod.out_channels, name  # depthwise: one H per channel
        c = cols.reshape(b, mod.groups, ck // mod.groups, length).double()
        self.h[name] = self.h.get(name, 0) + torch.einsum("bgkl,bgml->gkm", c, c)


def calibration_images(data_dir, n, seed=0):
    names = [ln.strip() for ln in open(os.path.join(data_dir, "flickr8k", "Flickr_8k.trainImages.txt")) if ln.strip()]
    pick = np.random.default_rng(seed).choice(len(names), n, replace=False)
    return [names[i] for i in sorted(pick)]


@torch.no_grad()
def collect(enc, dec, itos, cfg, data_dir, n_images):
    m = Moments()
    hooks = []
    for name, mod in enc.named_modules():
        if isinstance(mod, torch.nn.Conv2d):
            hooks.append(mod.register_forward_hook(lambda mod, inp, out, n=name: m.add_conv(n + ".weight", mod, inp[0])))
    for name, mod in dec.named_modules():
        if isinstance(mod, torch.nn.Linear):
            hooks.append(mod.register_forward_hook(lambda mod, inp, out, n=name: m.add("decoder.%s.weight" % n, inp[0])))
        elif isinstance(mod, torch.nn.LSTMCell):
            def lstm_hook(mod, inp, out, n=name):
                m.add("decoder.%s.weight_ih" % n, inp[0])
                m.add("decoder.%s.weight_hh" % n, inp[1][0])
            hooks.append(mod.register_forward_hook(lstm_hook))
    stoi = {w: i for i, w in enumerate(itos)}
    caps = flickr8k_captions(data_dir)
    size = bundle.input_size(cfg)
    cc = cfg["encoder"].get("cell_colour") == "mean_rgb"
    cp = cfg["encoder"].get("cell_position") == "xy"
    names = calibration_images(data_dir, n_images)
    t0 = time.time()
    with tarfile.open(os.path.join(data_dir, "flickr8k", "flickr8k_images_160.tar")) as tar:
        members = {os.path.basename(x.name): x for x in tar.getmembers() if x.isfile()}
        for i, name in enumerate(names):
            with Image.open(tar.extractfile(members[name])) as im:
                rgb = np.asarray(im.convert("RGB"), dtype=np.uint8)
            grid = mobilenet.decoder_grid(enc, mobilenet.preprocess_rgba(rgb, size)[None], cc, cp)[0]
            for cap in caps[name][:2]:
                sat.forced_decode(dec, grid, [stoi.get(w, sat.UNK) for w in text.tokenize(cap)])
            if (i + 1) % 32 == 0:
                print("calibration: %d/%d images (%.0f s)" % (i + 1, len(names), time.time() - t0), flush=True)
    for h in hooks:
        h.remove()
    # the embedding's rows are multiplied by W_ih next
    wih = dec.lstm.weight_ih.detach().double()
    m.h["decoder.embed.weight"] = wih[:, :dec.embed.weight.shape[1]].T @ wih[:, :dec.embed.weight.shape[1]]
    return m.h


def codes_metadata(weights_path):
    """The codes file's metadata: what it is, and the SHA-256 of the weights file it was made for (scripts/quantize.mjs
    refuses codes made for other weights: a re-exported bundle needs this script run again)."""
    with open(weights_path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    return {"codes": "int8, GPTQ rounding with scripts/quantize.mjs's scales (models/training/captioning/"
                     "quantize_calibrated.py)", "weights_sha256": digest}


def write_codes(bundle_dir, tensors, moments):
    """Codes for every tensor of the bundle's weights file that scripts/quantize.mjs makes int8."""
    config = json.load(open(os.path.join(bundle_dir, "config.json")))
    weights, _ = safetensors_io.read_safetensors(os.path.join(bundle_dir, config["weights"]))
    conv_ok = config["architecture"] == "mobilenet-v2"
    out = {}
    for name, v in weights.items():
        if v.dtype not in (np.float32, np.float16) or v.size < MIN_VALUES:
            continue
        if not (v.ndim == 2 or (conv_ok and v.ndim == 4 and name + "_scale" not in weights)):
            continue
        w = tensors[name].detach().numpy().astype(np.float32).reshape(v.shape[0], -1)
        assert np.array_equal(w, v.astype(np.float32).reshape(v.shape[0], -1)), name  # the bundle's own values
        s = row_scales(w)
        rtn = np.clip(np.round(w.astype(np.float64) / np.where(s == 0, 1, s)[:, None]), -127, 127).astype(np.int8)
        h = moments.get(name)
        if h is None or (torch.is_tensor(h) and float(h.abs().sum()) == 0.0) or not np.any(w):
            q = rtn
            print("%-44s round to nearest (no calibration input)" % name, flush=True)
        elif h.dim() == 3:  # depthwise: each row (channel) its own H
            q = np.concatenate([gptq_codes(w[r:r + 1], h[r], s[r:r + 1]) for r in range(w.shape[0])])
        else:
            q = gptq_codes(w, h, s)
        if h is not None and q is not rtn:
            e0, e1 = product_error(w, rtn, s, h), product_error(w, q, s, h)
            print("%-44s product error %.4g -> %.4g (%.1fx less), %.1f%% of codes differ from round to nearest" % (
                name, e0, e1, e0 / max(e1, 1e-300), 100.0 * np.mean(q != rtn)), flush=True)
        out[name] = q.reshape(v.shape)
    path = os.path.join(bundle_dir, CODES_FILE)
    safetensors_io.write_safetensors(path, out, codes_metadata(os.path.join(bundle_dir, config["weights"])))
    print("wrote %s (%d tensors)" % (path, len(out)), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bundle", default=os.path.join(mobilenet.REPO_ROOT, "models", "flickr8k-mobilenet"))
    ap.add_argument("--data-dir", default=mobilenet.DEFAULT_DATA_DIR)
    ap.add_argument("--images", type=int, default=256, help="calibration images from the training split")
    args = ap.parse_args()
    torch.set_num_threads(1)
    config = json.load(open(os.path.join(args.bundle, "config.json")))
    encoder_dir = bundle.encoder_dir_for(args.bundle, config)
    enc, dec, itos, cfg = bundle.load_bundle(args.bundle)
    moments = collect(enc, dec, itos, cfg, args.data_dir, args.images)
    write_codes(args.bundle, {"decoder." + k: v for k, v in dec.state_dict().items()}, moments)
    write_codes(encoder_dir, dict(enc.state_dict()), moments)


if __name__ == "__main__":
    main()
