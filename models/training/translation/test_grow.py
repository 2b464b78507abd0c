"""train.py --grow: a deeper and wider Transformer warm-started from a smaller one computes what the smaller one did
(logits and every attention map), and training then moves the new weights. No data, no bundle: random weights.

  /usr/bin/python3 models/training/translation/test_grow.py
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import TransformerSeq2Seq  # noqa: E402
from train import copy_layers  # noqa: E402


def main():
    torch.manual_seed(0)
    small = TransformerSeq2Seq(50, d_model=32, heads=4, d_ff=48, enc_layers=2, dec_layers=2).eval()
    for p in small.parameters():  # trained-looking weights: no zero bias anywhere
        p.data.add_(0.05 * torch.randn_like(p))
    big = TransformerSeq2Seq(50, d_model=32, heads=4, d_ff=96, enc_layers=3, dec_layers=4).eval()
    sd = big.state_dict()
    copy_layers(small.state_dict(), sd, grow=True)
    sd["embed.weight"] = small.state_dict()["embed.weight"]
    big.load_state_dict(sd)
    src, tgt = torch.randint(4, 50, (3, 7)), torch.randint(4, 50, (3, 5))
    with torch.no_grad():
        (a, am), (b, bm) = small(src, tgt), big(src, tgt)
    err = (a - b).abs().max().item()
    assert err < 1e-5, f"grown logits differ by {err}"
    for kind in ("encoder_self", "decoder_self", "cross"):
        for layer in range(2):  # the old layers keep their maps; the alignment head's layer among them
            d = (am[kind][layer] - bm[kind][layer]).abs().max().item()
            assert d < 1e-5, f"{kind} attention of layer {layer} differs by {d}"
    # a check that can fail: without --grow the shapes do not fit
    try:
        copy_layers(small.state_dict(), big.state_dict(), grow=False)
        raise AssertionError("copy_layers accepted a wider model without grow")
    except SystemExit:
        pass
    # the new units and layers learn: one step moves the zero-initialised projections
    big.train()
    opt = torch.optim.SGD(big.parameters(), lr=0.1)
    logits, _ = big(src, tgt)
    torch.nn.functional.cross_entropy(logits.reshape(-1, 50), torch.randint(4, 50, (15,))).backward()
    opt.step()
    assert big.decoder_layers[3].ffn.linear2.weight.abs().sum() > 0, "the new layer's projection stayed zero"
    assert big.encoder_layers[0].ffn.linear2.weight[:, 48:].abs().sum() > 0, "the new units stayed zero"
    print(f"test_grow: ok (grown logits within {err:.1e} of the small model's)")


if __name__ == "__main__":
    main()
