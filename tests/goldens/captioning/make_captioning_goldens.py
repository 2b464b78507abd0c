"""Goldens for the captioning engine tests (tests/cpp/test_model_captioning.cpp, tests/node/captioning.test.mjs).

  /usr/bin/python3 tests/goldens/captioning/make_captioning_goldens.py

Needs PyTorch, the committed encoder bundle models/mobilenet-v2-imagenet (models/training/captioning/export_encoder.py)
and, for the sanity images only, ../shared/data/mobilenet_v2_imagenet/sanity. Writes (all small, all committed):

  sanity/<name>.ppm       the four ImageNet sanity images (Apache-2.0, google-coral/test_data) as PIL decodes the
                          JPEGs: binary PPM (P6) 224x224 RGB — the engine has no JPEG decoder
  tiny-sat/               a randomly initialised Show-Attend-Tell decoder bundle (seeded; F16 weights, 13 words) that
                          names the real encoder bundle, so the whole path pixels -> caption is tested before a
                          trained decoder exists
  golden.safetensors      F32 tensors computed by PyTorch from the bundles as the engine reads them (encoder weights
                          = codes x scale, decoder F16 upcast):
    sanity/<name>/imagenet_logits [1000]
    case<i>/pixels            F16 [H, W, 4] RGBA input (integers, exact in F16)
    case<i>/input_rows        [4, 224, 3]  rows 0, 1, 112, 223 of the preprocessed input (HWC)
    case<i>/grid_cells        [3, 1280]    grid cells 0, 24, 48 (row-major y*7+x)
    case<i>/imagenet_logits   [1000]
    case<i>/greedy/logits     [T, V]   every greedy step, T includes the step that chose <end>
    case<i>/greedy/attention  [T, 7, 7]
    case<i>/greedy/beta       [T]
    case<i>/beam/attention    [T', 7, 7]  best beam hypothesis (num_beams 3), T' includes its <end> step
  golden.json             per case: source, dims, greedy/beam token ids, text, beam score; sanity expected top-5
  tiny-sat-output/        the same kind of random decoder with decoder.context = "output" (sat.py: the LSTM reads
                          the words alone, attention after it, logits from [h ; beta z]), with its goldens in the
                          trained bundles' format (export.write_goldens: golden.*, golden_forced.*)

  /usr/bin/python3 tests/goldens/captioning/make_captioning_goldens.py --only-context-output   # that folder only
"""
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "models", "training", "captioning"))
import bundle  # noqa: E402
from engine_io import write_ppm  # noqa: E402
import mobilenet  # noqa: E402
import sat  # noqa: E402

ENCODER_DIR = os.path.join(ROOT, "models", bundle.ENCODER_BUNDLE)
SANITY = os.path.join(mobilenet.DEFAULT_DATA_DIR, "mobilenet_v2_imagenet", "sanity")
TINY_WORDS = ["a", "dog", "cat", "runs", "on", "the", "grass", "red", "ball", "in", "snow", ".", "two"]
TINY_SEED, TINY_END_BIAS = 1, 0.5
INPUT_ROWS = [0, 1, 112, 223]
GRID_CELLS = [0, 24, 48]


def tiny_decoder(seed=TINY_SEED, end_bias=TINY_END_BIAS, context="lstm"):
    """A seeded random SAT decoder over the real 1280-channel grid (tens of KB in F16)."""
    torch.manual_seed(seed)
    itos = sat.SPECIALS + TINY_WORDS
    hp = dict(feat_dim=1280, proj_dim=8, embed_dim=6, hidden_dim=10, att_dim=7)
    if context != "lstm":
        hp["context"] = context
    dec = sat.ShowAttendTell(len(itos), dropout=0.0, **hp)
    with torch.no_grad():
        for name, p in dec.named_parameters():
            if name == "feat_proj.weight":
                p.copy_(torch.randn_like(p) * (2.0 / 1280 ** 0.5))
            elif name == "feat_proj.bias":
                p.copy_(torch.randn_like(p) * 0.5)
            else:
                p.copy_(torch.randn_like(p) * 0.6)
        dec.fc.bias[sat.END] += end_bias  # captions of several words, some ending before max_len
    return dec, itos, hp


def cases():
    """(name, description, RGBA uint8 [H, W, 4])."""
    from PIL import Image
    out = []
    par = np.asarray(Image.open(os.path.join(SANITY, "parrot.jpg")).convert("RGB").resize((48, 40), Image.BILINEAR))
    alpha = np.tile(np.linspace(255, 0, 48).round().astype(np.uint8)[None, :], (40, 1))
    alpha[:10] = 255
    out.append(("parrot_48x40_rgba", "sanity/parrot.jpg resized by PIL to 48x40; alpha 255 in the top 10 rows, then "
                "a left-to-right ramp 255..0", np.concatenate([par, alpha[:, :, None]], axis=2)))
    out.append(("one_pixel", "1x1 RGBA (200, 30, 90, 255)", np.array([[[200, 30, 90, 255]]], np.uint8)))
    rng = np.random.default_rng(7)
    tall = rng.integers(0, 256, size=(301, 5, 4), dtype=np.uint8)
    tall[:, :, 3] = 255
    out.append(("noise_5x301", "5 wide x 301 tall uniform random RGB (numpy default_rng(7)), alpha 255", tall))
    return out


@torch.no_grad()
def write_context_output():
    """tiny-sat-output/: a random context="output" decoder and its goldens (greedy, beam 3, forced captions)."""
    sys.path.insert(0, os.path.join(ROOT, "models", "training", "captioning"))
    import export  # noqa: E402
    dec32, itos, hp = tiny_decoder(seed=2, end_bias=1.5, context="output")  # one caption ends, one runs to max_len
    out = os.path.join(HERE, "tiny-sat-output")
    dtensors = {"decoder." + k: v.numpy().astype(np.float16) for k, v in dec32.state_dict().items()}
    bundle.write_decoder_bundle(out, "tiny-sat-output", "image-to-text", dtensors, itos, hp, max_len=12,
                                extra_config={"note": "random weights (tests only): " + __doc__.split("\n")[0]})
    export.write_goldens(out, ENCODER_DIR, task="flickr8k")


@torch.no_grad()
def main():
    torch.set_num_threads(1)
    if "--only-context-output" in sys.argv[1:]:
        write_context_output()
        return
    enc = bundle.load_encoder_bundle(ENCODER_DIR)
    tensors, meta = {}, {"generator": "tests/goldens/captioning/make_captioning_goldens.py", "torch": torch.__version__,
                         "tolerance": "abs <= 1e-4 or rel <= 1e-3", "encoder_bundle": "models/" + bundle.ENCODER_BUNDLE}

    # ---- ImageNet sanity images ----
    expected = json.load(open(os.path.join(SANITY, "expected_top5.json")))
    os.makedirs(os.path.join(HERE, "sanity"), exist_ok=True)
    meta["sanity"] = {}
    for img in sorted(expected):
        key = img.rsplit(".", 1)[0]
        px = mobilenet.load_image_rgb(os.path.join(SANITY, img))
        write_ppm(os.path.join(HERE, "sanity", key + ".ppm"), px)
        lg = enc(mobilenet.preprocess_rgba(px)[None])[0]
        tensors["sanity/%s/imagenet_logits" % key] = lg.numpy().astype(np.float32)
        top5 = [int(i) for i in lg.topk(5).indices]
        exp5 = [e[0] for e in expected[img]["torch_tf_same_padding_top5"]]
        assert top5 == exp5, (img, top5, exp5)
        meta["sanity"][key] = dict(ppm="sanity/%s.ppm" % key, top5=top5,
                                   labels=[e[1] for e in expected[img]["torch_tf_same_padding_top5"]],
                                   tflite_reference_top1=expected[img]["tflite_reference_top5"][0][0])
        print("sanity %s: top5 %s" % (key, top5))

    # ---- tiny decoder bundle ----
    dec32, itos, hp = tiny_decoder()
    tiny_dir = os.path.join(HERE, "tiny-sat")
    dtensors = {"decoder." + k: v.numpy().astype(np.float16) for k, v in dec32.state_dict().items()}
    bundle.write_decoder_bundle(tiny_dir, "tiny-sat", "image-to-text", dtensors, itos, hp, max_len=12,
                                extra_config={"note": "random weights (tests only): " + __doc__.split("\n")[0]})
    _, dec, itos_b, cfg = bundle.load_bundle(tiny_dir, encoder_dir=ENCODER_DIR)
    assert itos_b == itos
    max_len, beams = cfg["decoder"]["max_len"], cfg["decoding"]["num_beams"]

    meta["cases"] = []
    for i, (name, desc, px) in enumerate(cases()):
        x = mobilenet.preprocess_rgba(px)  # [3, 224, 224]
        grid = mobilenet.grid_features(enc, x[None])  # [1, 49, 1280]
        g = sat.greedy_decode(dec, grid, max_len=max_len)[0]
        b = sat.beam_decode(dec, grid[0], beam=beams, max_len=max_len)
        p = "case%d/" % i
        tensors[p + "pixels"] = px.astype(np.float16)
        tensors[p + "input_rows"] = x.permute(1, 2, 0)[INPUT_ROWS].numpy()
        tensors[p + "grid_cells"] = grid[0, GRID_CELLS].numpy()
        tensors[p + "imagenet_logits"] = enc(x[None])[0].numpy()
        tensors[p + "greedy/logits"] = g["logits"].numpy()
        tensors[p + "greedy/attention"] = g["alphas"].reshape(-1, 7, 7).numpy()
        tensors[p + "greedy/beta"] = np.array(g["betas"], np.float32)
        tensors[p + "beam/attention"] = b["alphas"].reshape(-1, 7, 7).numpy()
        meta["cases"].append(dict(
            name=name, image=desc, pixels_dims=list(px.shape), input_rows=INPUT_ROWS, grid_cells=GRID_CELLS,
            greedy=dict(token_ids=g["tokens"], text=" ".join(itos[t] for t in g["tokens"]), steps=len(g["logits"])),
            beam=dict(num_beams=beams, token_ids=b["tokens"], text=" ".join(itos[t] for t in b["tokens"]),
                      score=b["score"], steps=len(b["alphas"]))))
        print("case %s: greedy %r (%d steps), beam %r (%d steps, %.4f)" % (
            name, meta["cases"][-1]["greedy"]["text"], len(g["logits"]), meta["cases"][-1]["beam"]["text"],
            len(b["alphas"]), b["score"]))
    tensors = {k: (v if v.dtype == np.float16 else v.astype(np.float32)) for k, v in tensors.items()}
    bundle.write_safetensors(os.path.join(HERE, "golden.safetensors"), tensors)
    with open(os.path.join(HERE, "golden.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    write_context_output()
    print("wrote", HERE)


if __name__ == "__main__":
    main()
