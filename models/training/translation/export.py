"""Export trained weights (one checkpoint or the average of several) as an attnlens bundle, then read the bundle
back into the PyTorch model and check that it reproduces the exported model's outputs exactly.

  /usr/bin/python3 export.py --name de-en-transformer --checkpoints runs/transformer/epoch{16..20}.pt \
      --dtype F16 --alpha 0.6

Writes models/<name>/{config.json, weights.safetensors, bpe.vocab, bpe.merges}. With --dtype F16 the weights are
rounded to half precision; the engine computes in float32 from them, so the reference for every later check
(goldens, parity) is the model loaded back from the bundle.
"""
import argparse
import copy
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bundle import KIND_OF_NAME, average_checkpoints, load_bundle, write_bundle  # noqa: E402
from common import (BOS, DEFAULT_DATA_DIR, EOS, REPO, bpe_prefix, load_encoded, pad_batch)  # noqa: E402
from general import corpus_dir, load_general  # noqa: E402
from models import build_model  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--name", required=True, choices=sorted(KIND_OF_NAME))
    p.add_argument("--checkpoints", nargs="+", required=True)
    p.add_argument("--dtype", default="F16", choices=["F16", "F32"])
    p.add_argument("--alpha", type=float, default=0.6, help="default GNMT length-penalty exponent for beam search")
    p.add_argument("--beta", type=float, default=0.0)
    p.add_argument("--candidates-per-beam", type=int, default=1,
                   help="finished hypotheses the beam collects per beam for the final choice (decoding.py)")
    p.add_argument("--data-dir", default=DEFAULT_DATA_DIR)
    p.add_argument("--out-dir", help="default: models/<name> in the repo")
    p.add_argument("--verify-sentences", type=int, default=200)
    p.add_argument("--alignment-extraction", default="gdfa", choices=["argmax", "gdfa"],
                   help="default link extraction of a guided model's alignment head (chosen on the dev gold by "
                        "aer_engine.py: gdfa 19.6 vs argmax 21.6 AER after epoch 1)")
    args = p.parse_args()
    torch.set_num_threads(2)

    sd, meta = average_checkpoints(args.checkpoints)
    targs = meta["args"]
    kind = meta["kind"]
    if kind != KIND_OF_NAME[args.name]:
        raise SystemExit(f"checkpoints hold a {kind} model, not {args.name}")
    model = build_model(kind, meta["vocab_size"], {"dropout": 0.0, "d_ff": targs["d_ff"], "layers": targs["layers"],
                                                   "dec_layers": targs["dec_layers"]})
    model.load_state_dict(sd)
    model.eval()
    out_dir = args.out_dir or os.path.join(REPO, "models", args.name)
    decoding = {"num_beams": 4, "length_penalty": "gnmt: score / ((5 + L) / 6) ** alpha", "alpha": args.alpha,
                "coverage_penalty_beta": args.beta, "max_len_a": 2, "max_len_b": 10,
                "algorithm": "models/training/translation/decoding.py"}
    if args.candidates_per_beam != 1:
        decoding["candidates_per_beam"] = args.candidates_per_beam
    n_params = sum(p.numel() for p in model.parameters())
    extra = {"parameters": n_params,
             "training": {"recipe": "models/training/translation/train.py", "bpe_merges": targs["merges"],
                          "averaged_checkpoints": [os.path.basename(c) for c in args.checkpoints]}}
    general = targs.get("corpus") == "general"
    prefix = os.path.join(corpus_dir(targs["merges"]), "joint") if general else bpe_prefix(targs["merges"])
    if general:
        extra["training"].update({
            "corpus": "Multi30k train (x%d) + Tatoeba de-en (manythings.org/anki, tatoeba.org, CC-BY 2.0) minus the "
                      "tatoeba_dev groups (general.py)" % targs["multi30k_repeat"],
            "data_attribution": "Tatoeba sentences: tatoeba.org, via www.manythings.org/anki, CC-BY 2.0"})
    if targs.get("align_labels"):
        # Guided alignment (Garg et al. 2019): this head of this decoder layer was trained on word alignments.
        extra["alignment_head"] = {"layer": targs["align_layer"] % targs["layers"], "head": targs["align_head"],
                                   "labels": "models/training/translation/aligner.py (fast_align-style, gdfa)",
                                   "weight": targs["align_weight"]}
        extra["alignment"] = {"method": "head", "extraction": args.alignment_extraction}
    write_bundle(model, out_dir, args.name, prefix, args.dtype, decoding, extra)
    size = sum(os.path.getsize(os.path.join(out_dir, f)) for f in ("config.json", "weights.safetensors",
                                                                   "bpe.vocab", "bpe.merges"))
    print(f"wrote {out_dir}: {n_params} parameters, {size / 1e6:.2f} MB", flush=True)

    # Verification: bundle -> PyTorch must equal the exported weights bit for bit, so its logits equal those of
    # the in-memory model with the same rounding. The F32 -> F16 effect is reported too.
    loaded, _ = load_bundle(out_dir)
    rounded = copy.deepcopy(model)
    if args.dtype == "F16":
        with torch.no_grad():
            for prm in rounded.parameters():
                prm.copy_(prm.half().float())
    if general:
        _, enc, _, _ = load_general(targs["merges"], args.data_dir)
    else:
        _, enc = load_encoded(targs["merges"], args.data_dir)
    src, tgt = enc["val"]
    n = min(args.verify_sentences, len(src))
    worst_exact, worst_f32 = 0.0, 0.0
    with torch.no_grad():
        for b in range(0, n, 50):
            s = pad_batch(src[b:min(b + 50, n)], suffix=EOS)
            ti = pad_batch(tgt[b:min(b + 50, n)], prefix=BOS)
            keep = ti != 0
            lb, _ = loaded(s, ti)
            lr, _ = rounded(s, ti)
            lf, _ = model(s, ti)
            worst_exact = max(worst_exact, float((lb - lr)[keep].abs().max()))
            worst_f32 = max(worst_f32, float((lb - lf)[keep].abs().max()))
    print(f"verify on {n} val sentences: max |logit(bundle) - logit(exported model)| = {worst_exact:.3g}; "
          f"vs the unrounded float32 weights = {worst_f32:.3g}", flush=True)
    if worst_exact != 0.0:
        raise SystemExit("bundle does not reproduce the exported model")


if __name__ == "__main__":
    main()
