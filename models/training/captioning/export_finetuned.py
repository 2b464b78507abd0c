"""Export a finetune.py checkpoint (encoder fine-tuned with the decoder) as two bundles: the captioner (decoder,
vocabulary, config naming its encoder) and its own encoder bundle (architecture mobilenet-v2, no ImageNet
classifier), then verify them and write the goldens as export.py does.

  /usr/bin/python3 models/training/captioning/export_finetuned.py --checkpoint runs/e2e/ep24.pt \\
      --out models/flickr8k-mobilenet --encoder-out models/flickr8k-mobilenet-encoder --num-beams 5 --length-norm 1.0 \\
      [--goldens]

finetune.py saves its weights as float16, so the F16 bundles hold exactly the checkpoint's weights (BatchNorm
statistics and affine stay the ImageNet ones, frozen during fine-tuning: F32 as in the shared encoder bundle).
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
import mobilenet  # noqa: E402
import sat  # noqa: E402

SHARED_ENCODER = os.path.join(mobilenet.REPO_ROOT, "models", bundle.ENCODER_BUNDLE)


def write_encoder_bundle(weights, out_dir, name, source, input_size):
    """weights: the checkpoint's "enc.*" tensors. Conv weights F16 (as trained), BatchNorm F32."""
    cfg = json.load(open(os.path.join(SHARED_ENCODER, "config.json")))
    cfg["name"] = name
    cfg["task"] = "image-features"
    cfg["weights_dtype"] = "conv weights F16 (the fine-tuned values exactly); BatchNorm F32 (ImageNet statistics)"
    cfg["source"] = source
    cfg["image"] = bundle.image_config(input_size)
    cfg["encoder"]["grid"] = [input_size // 32, input_size // 32]
    cfg.pop("classifier", None)
    tensors = {}
    for k, v in weights.items():
        if not k.startswith("enc.features.") or k.endswith("num_batches_tracked"):
            continue
        name_ = k[len("enc."):]
        v = v.float().numpy()
        tensors[name_] = v.astype(np.float16) if v.ndim == 4 else v.astype(np.float32)
    os.makedirs(out_dir, exist_ok=True)
    bundle.write_safetensors(os.path.join(out_dir, "weights.safetensors"), tensors)
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    lic = os.path.join(SHARED_ENCODER, "LICENSE")
    if os.path.exists(lic):
        open(os.path.join(out_dir, "LICENSE"), "w").write(open(lic).read())
    return tensors


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--encoder-out", required=True)
    ap.add_argument("--num-beams", type=int, default=5)
    ap.add_argument("--length-norm", type=float, default=1.0)
    ap.add_argument("--goldens", action="store_true", help="also write golden.* and golden_forced.* (export.py's)")
    args = ap.parse_args()
    torch.set_num_threads(2)
    ck = torch.load(args.checkpoint, map_location="cpu")
    a = ck["args"]
    name = os.path.basename(os.path.normpath(args.out))
    enc_name = os.path.basename(os.path.normpath(args.encoder_out))
    src = ("mobilenet-v2-imagenet fine-tuned with the %s captioner on Flickr8k train (models/training/captioning/"
           "finetune.py, run %s epoch %d)" % (name, os.path.basename(os.path.dirname(os.path.abspath(args.checkpoint))),
                                          ck["epoch"]))
    write_encoder_bundle(ck["weights"], args.encoder_out, enc_name, src, a["input_size"])
    dec = {"decoder." + k[len("dec."):]: v.float().numpy().astype(np.float16)
           for k, v in ck["weights"].items() if k.startswith("dec.")}
    extra = {"cell_position": True} if a.get("cell_position") else {}
    bundle.write_decoder_bundle(args.out, name, "image-to-text", dec, ck["itos"], ck["hp"], a["max_len"], "F16",
                                extra, enc_name, args.num_beams, args.length_norm, size=a["input_size"])
    # verify: the bundles, loaded back, give the checkpoint model's outputs
    enc_b, dec_b, itos, cfg = bundle.load_bundle(args.out, encoder_dir=args.encoder_out)
    assert itos == ck["itos"]
    import finetune
    ns = argparse.Namespace(**a)
    ns.encoder_bundle, ns.mobilenet = None, None
    ns.init_bundle, ns.init_checkpoint, ns.cache_below = None, None, 0  # the checkpoint's weights, read from the photo
    m = finetune.Captioner(len(itos), ns)
    m.load_state_dict({k: v.float() for k, v in ck["weights"].items()})
    m.eval()
    x = mobilenet.preprocess_rgba(np.random.default_rng(0).integers(0, 256, (96, 128, 3), dtype=np.uint8),
                                  a["input_size"])[None]
    with torch.no_grad():
        g1 = m.grid_features(x)
        g2 = mobilenet.decoder_grid(enc_b, x, False, bool(a.get("cell_position")))
        o1 = sat.greedy_decode(m.dec, g1)[0]
        o2 = sat.greedy_decode(dec_b, g2)[0]
    d = float((g1 - g2).abs().max())
    assert d < 1e-4 and o1["tokens"] == o2["tokens"], (d, o1["tokens"], o2["tokens"])
    print("OK: bundles reproduce the checkpoint (grid max |diff| %.2e, same greedy caption %r)" % (
        d, " ".join(itos[t] for t in o2["tokens"])))
    if args.goldens:
        import export
        export.write_goldens(args.out, args.encoder_out)


if __name__ == "__main__":
    main()
