"""Export a trained captioner to an attnlens bundle, verify the bundle, and write the parity goldens.

  /usr/bin/python3 models/training/captioning/export.py --task flickr8k \
      --checkpoint models/training/captioning/runs/flickr8k/best.pt --out models/flickr8k-mobilenet
  /usr/bin/python3 models/training/captioning/export.py --task shapes \
      --checkpoint models/training/captioning/runs/shapes/best.pt --out models/shapes

The encoder is NOT copied into the bundle: config.json names the shared encoder bundle
models/mobilenet-v2-imagenet (export_encoder.py writes it once; run that first if it is missing), and
the engine/JS loader fetch it alongside. The bundle holds the decoder (F16 by default) and vocab.txt.

Verification (fails loudly): the bundle is read back with bundle.load_bundle and must reproduce, bit for bit, the
outputs of the checkpoint model whose weights were rounded to the bundle dtype in memory; the encoder bundle must
reproduce the .pth the features were cached from (grid features equal to float32 rounding); the report also prints
how far the bundle's outputs are from the float32 checkpoint (the cost of storing F16).

Goldens (tests/goldens/README.md): models/<name>/golden.json + golden.safetensors, computed from the bundles as
loaded back (encoder codes x scale, decoder F16 upcast). Tensors per case i (float32 unless said):
  case<i>/pixels            F16 [H, W, 4] the RGBA input exactly as the engine receives it (integers 0..255, exact
                                          in F16); left out when golden.json names a committed PPM instead
                                          ("pixels_ppm", RGB with alpha 255)
  case<i>/input_rows        [4, s, 3]     rows 0, 1, s/2, s-1 of the preprocessed input (HWC); s = the bundle's
                                          image.input_size (224: rows 0, 1, 112, 223), grid g = s/32 cells a side
  case<i>/grid_cells        [3, 1280]     grid cells 0, g*g/2, g*g-1 (row-major y*g+x; 224: 0, 24, 48) of the encoder
  case<i>/cell_colour       [g*g, 3]      bundles with encoder.cell_colour only: mobilenet.cell_colour of the input
                                          (encoder.cell_position's 2 coordinates are constants, checked by the tests)
  case<i>/imagenet_logits   [1000]        the encoder bundle's classifier output (encoder bundles that have one)
  case<i>/greedy/logits     [T, V]        decoder logits of every greedy step, T includes the step that chose <end>
  case<i>/greedy/attention  [T, g, g]     alpha_t for each of those steps (row-major grid)
  case<i>/greedy/beta       [T]           the gate beta_t
  case<i>/beam/attention    [T', g, g]    alpha of the best beam hypothesis, T' includes its <end> step
golden.json has for each case the image source, dims, and greedy/beam token ids and text.
Forced-caption goldens (teacher forcing of given captions on the same images): golden_forced.json +
golden_forced.safetensors, written by forced_goldens.py (see there).
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bundle  # noqa: E402
import forced_goldens  # noqa: E402
import mobilenet  # noqa: E402
from engine_io import read_ppm, to_rgba  # noqa: E402
import sat  # noqa: E402
import shapes  # noqa: E402
import text  # noqa: E402

SANITY = os.path.join(mobilenet.DEFAULT_DATA_DIR, "mobilenet_v2_imagenet", "sanity")
# the sanity images as committed PPMs (tests/goldens/captioning/make_captioning_goldens.py writes them)
SANITY_PPM = os.path.join(mobilenet.REPO_ROOT, "tests", "goldens", "captioning", "sanity")
GOLDEN_BEAMS = 3  # the goldens' beam search width (independent of the bundle's default decoding.num_beams)


def input_rows(size):
    """The preprocessed input rows a golden keeps (224: 0, 1, 112, 223)."""
    return [0, 1, size // 2, size - 1]


def grid_cells(size):
    """The grid cells a golden keeps: first, middle, last (224, 7x7: 0, 24, 48)."""
    g = size // 32
    return [0, g * g // 2, g * g - 1]


def golden_cases(task):
    """(name, source description, RGBA pixels, committed PPM path relative to the repo or None)."""
    cases = []
    if task == "flickr8k":
        cat_ppm = os.path.join(SANITY_PPM, "cat.ppm")
        cat = read_ppm(cat_ppm)
        assert np.array_equal(cat, mobilenet.load_image_rgb(os.path.join(SANITY, "cat.jpg")))
        cases.append(("cat", "mobilenet_v2_imagenet/sanity/cat.jpg (Apache-2.0), 224x224 RGB, alpha 255",
                      to_rgba(cat), os.path.relpath(cat_ppm, mobilenet.REPO_ROOT)))
        # parrot, resized by PIL to an odd non-square size, with an alpha ramp: exercises resize + compositing
        from PIL import Image
        par = np.asarray(Image.open(os.path.join(SANITY, "parrot.jpg")).convert("RGB").resize((157, 131),
                                                                                              Image.BILINEAR))
        alpha = np.tile(np.linspace(255, 0, 157).round().astype(np.uint8)[None, :], (131, 1))
        alpha[:40] = 255
        cases.append(("parrot_rgba", "sanity/parrot.jpg resized by PIL to 157x131, alpha = 255 in the top 40 rows, "
                      "then a left-to-right ramp 255..0", np.concatenate([par, alpha[:, :, None]], axis=2), None))
    else:
        px, meta = shapes.make_scene(shapes.SPLIT_SEEDS["test"], 0)
        cases.append(("scene_test_0", "shapes.make_scene(seed=%d, index=0), 224x224, alpha 255: %s" % (
            shapes.SPLIT_SEEDS["test"], meta["caption"]), to_rgba(px), None))
        # the same kind of scene as a larger RGBA image: scene 1 upscaled to 300x300 by nearest neighbour
        # (source index floor(i * 224 / 300)), alpha 0 on the top and left 12 px
        px, meta = shapes.make_scene(shapes.SPLIT_SEEDS["test"], 1)
        idx = (np.arange(300) * 224) // 300
        rgba = to_rgba(px[idx][:, idx]).copy()
        rgba[:12, :, 3] = 0
        rgba[:, :12, 3] = 0
        cases.append(("scene_test_1_300_rgba", "shapes.make_scene(seed=%d, index=1) upscaled to 300x300 (nearest, "
                      "source index floor(i*224/300)), alpha 0 on the top and left 12 px: %s" % (
                          shapes.SPLIT_SEEDS["test"], meta["caption"]), rgba, None))
    return cases


@torch.no_grad()
def run_case(enc, dec, pixels, cfg):
    x = mobilenet.preprocess_rgba(pixels, bundle.input_size(cfg))
    grid = mobilenet.decoder_grid(enc, x[None], cfg["encoder"].get("cell_colour") == "mean_rgb",
                                  cfg["encoder"].get("cell_position") == "xy")  # [1, g*g, D]
    g = sat.greedy_decode(dec, grid, max_len=cfg["decoder"]["max_len"])[0]
    b = sat.beam_decode(dec, grid[0], beam=GOLDEN_BEAMS, max_len=cfg["decoder"]["max_len"],
                        length_norm=cfg["decoding"]["length_norm"])
    logits_in = enc(x[None])[0]
    return x, grid[0], g, b, logits_in


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--task", choices=["flickr8k", "shapes"], required=True)
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--encoder-dir", default=os.path.join(mobilenet.REPO_ROOT, "models", bundle.ENCODER_BUNDLE),
                    help="the shared encoder bundle (export_encoder.py); the config names it by its folder name")
    ap.add_argument("--decoder-dtype", default="F16", choices=["F16", "F32"])
    ap.add_argument("--num-beams", type=int, default=3,
                    help="the bundle's default decoding.num_beams (chosen on dev: 3 for flickr8k, 1 for shapes)")
    ap.add_argument("--length-norm", type=float, default=0.0,
                    help="the bundle's decoding.length_norm: beam search answers the finished hypothesis with the best "
                         "score / len^length_norm (chosen on dev)")
    args = mobilenet.parse_args_with_threads(ap)
    name = os.path.basename(os.path.normpath(args.out))
    if not os.path.exists(os.path.join(args.encoder_dir, "config.json")):
        sys.exit("no encoder bundle at %s: run export_encoder.py first" % args.encoder_dir)
    cfg = bundle.export_bundle(args.checkpoint, args.out, name, "image-to-text", decoder_dtype=args.decoder_dtype,
                               encoder_bundle=os.path.basename(os.path.normpath(args.encoder_dir)),
                               num_beams=args.num_beams, length_norm=args.length_norm)
    size = os.path.getsize(os.path.join(args.out, "weights.safetensors"))
    print("wrote %s: decoder weights %.2f MB (%s); encoder: %s" % (args.out, size / 1e6, args.decoder_dtype,
                                                                   args.encoder_dir))

    # ---- verification: reload the bundle and compare with the checkpoint model ----
    enc_b, dec_b, itos, cfg = bundle.load_bundle(args.out, encoder_dir=args.encoder_dir)
    ck = torch.load(args.checkpoint)
    assert itos == ck["itos"]
    dec32 = sat.ShowAttendTell(len(itos), **ck["hp"])
    dec32.load_state_dict(ck["model"])
    dec32.eval()
    npdt = bundle.DTYPES[args.decoder_dtype]
    dec_r = sat.ShowAttendTell(len(itos), **ck["hp"])
    dec_r.load_state_dict({k: torch.from_numpy(v.numpy().astype(npdt).astype(np.float32))
                           for k, v in ck["model"].items()})
    dec_r.eval()
    enc32 = mobilenet.build_mobilenet_v2()
    for k, v in enc32.state_dict().items():  # codes x scale == the .pth, to float32 rounding
        if not k.endswith("num_batches_tracked"):
            d = float((v - enc_b.state_dict()[k]).abs().max())
            assert d <= 2e-6 * max(float(v.abs().max()), 1e-30), "encoder bundle differs from the .pth: %s (%g)" % (k, d)
    cases = golden_cases(args.task)
    cc = cfg["encoder"].get("cell_colour") == "mean_rgb"
    cp = cfg["encoder"].get("cell_position") == "xy"
    max_diff32 = 0.0
    same_caption = 0
    for cname, _, px, _ppm in cases:
        x = mobilenet.preprocess_rgba(px)[None]
        with torch.no_grad():
            gb = mobilenet.decoder_grid(enc_b, x, cc, cp)
            ob = sat.greedy_decode(dec_b, gb)[0]
            orr = sat.greedy_decode(dec_r, gb)[0]
            o32 = sat.greedy_decode(dec32, mobilenet.decoder_grid(enc32, x, cc, cp))[0]
        assert ob["tokens"] == orr["tokens"] and torch.equal(ob["logits"], orr["logits"]) and \
            torch.equal(ob["alphas"], orr["alphas"]), "bundle does not reproduce the rounded checkpoint"
        same_caption += ob["tokens"] == o32["tokens"]
        if ob["tokens"] == o32["tokens"]:
            max_diff32 = max(max_diff32, float((ob["logits"] - o32["logits"]).abs().max()))
        print("verify %-22s bundle: %r | fp32 checkpoint: %r" % (cname, text.decode(ob["tokens"], itos),
                                                               text.decode(o32["tokens"], itos)))
    print("OK: bundle reproduces the checkpoint (decoder rounded to %s) exactly; vs float32: same greedy caption on "
          "%d/%d cases, max |logit diff| %.2e" % (args.decoder_dtype, same_caption, len(cases), max_diff32))

    write_goldens(args.out, args.encoder_dir, args.task)


def write_goldens(out, encoder_dir, task="flickr8k"):
    """golden.json + golden.safetensors (and, through forced_goldens, golden_forced.*) of the bundle in `out`,
    computed from the bundle as loaded back (with its encoder bundle `encoder_dir`)."""
    enc_b, dec_b, itos, cfg = bundle.load_bundle(out, encoder_dir=encoder_dir)
    name = os.path.basename(os.path.normpath(out))
    cases = golden_cases(task)
    cc = cfg["encoder"].get("cell_colour") == "mean_rgb"
    enc_dir = encoder_dir or bundle.encoder_dir_for(out, cfg)
    has_classifier = "classifier" in json.load(open(os.path.join(enc_dir, "config.json")))
    size = bundle.input_size(cfg)
    side, rows, cells = size // 32, input_rows(size), grid_cells(size)
    # ---- goldens, from the bundle as loaded back ----
    tensors = {}
    gcases = []
    for i, (cname, src, px, ppm) in enumerate(cases):
        x, grid, g, b, logits_in = run_case(enc_b, dec_b, px, cfg)
        p = "case%d/" % i
        if ppm is None:
            tensors[p + "pixels"] = px
        tensors[p + "input_rows"] = x.permute(1, 2, 0)[rows].numpy()
        tensors[p + "grid_cells"] = grid[cells, :1280].numpy()
        if cc:
            tensors[p + "cell_colour"] = grid[:, 1280:1283].numpy()  # [g*g, 3]
        if has_classifier:  # a fine-tuned encoder bundle (export_finetuned.py) has no ImageNet classifier
            tensors[p + "imagenet_logits"] = logits_in.numpy()
        tensors[p + "greedy/logits"] = g["logits"].numpy()
        tensors[p + "greedy/attention"] = g["alphas"].reshape(-1, side, side).numpy()
        tensors[p + "greedy/beta"] = np.array(g["betas"], np.float32)
        tensors[p + "beam/attention"] = b["alphas"].reshape(-1, side, side).numpy()
        gcases.append(dict(
            name=cname, image=src, pixels_dims=list(px.shape), pixels_ppm=ppm, input_rows=rows,
            grid_cells=cells,
            greedy=dict(token_ids=g["tokens"], end_emitted=len(g["logits"]) > len(g["tokens"]),
                        text=text.decode(g["tokens"], itos), steps=len(g["logits"])),
            beam=dict(num_beams=GOLDEN_BEAMS, length_norm=cfg["decoding"]["length_norm"], token_ids=b["tokens"],
                      text=text.decode(b["tokens"], itos), score=b["score"], steps=len(b["alphas"])),
            tensors={k[len(p):]: list(v.shape) for k, v in tensors.items() if k.startswith(p)}))
        print("golden %s: greedy %r, beam %r" % (cname, gcases[-1]["greedy"]["text"], gcases[-1]["beam"]["text"]))
    tensors = {k: (v.astype(np.float16) if v.dtype == np.uint8 else v.astype(np.float32)) for k, v in tensors.items()}
    bundle.write_safetensors(os.path.join(out, "golden.safetensors"), tensors)
    json.dump(dict(model=name, generator="models/training/captioning/export.py", torch=torch.__version__,
                   tolerance="abs <= 1e-4 or rel <= 1e-3", cases=gcases),
              open(os.path.join(out, "golden.json"), "w"), indent=1)
    gsize = os.path.getsize(os.path.join(out, "golden.safetensors"))
    print("goldens: %d cases, golden.safetensors %.2f MB" % (len(cases), gsize / 1e6))
    # forced-caption goldens (teacher forcing, sat.forced_decode) on the same images: golden_forced.*
    forced_goldens.write_forced_goldens(out, encoder_dir)

    # (the ImageNet sanity fixtures of the encoder live in tests/goldens/captioning: make_captioning_goldens.py)
    # (example scenes for the page are web/examples/shapes-*.png, written once from shapes.make_scene: the bundle
    # itself carries no images, to stay small)

if __name__ == "__main__":
    main()
