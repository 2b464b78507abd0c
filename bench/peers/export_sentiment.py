"""ONNX export of the SST-2 classifiers (sst2-selfattn, sst2-relation) for the peer benchmark, float32, batch 1
(one sentence, no padding: what the engine classifies). Two variants each:
  <name>.maps.onnx     ids int64 [1,T] -> probabilities [1,2], attention ([1,hops,T] or [1,T,T])
  <name>.nomaps.onnx   ids int64 [1,T] -> probabilities [1,2]
Weights from the bundle (models/<name>/weights.safetensors, the F16 embedding widened to float32) into the recipe's
modules (models/training/sentiment/common.py); the forward is the recipe's with the padding machinery removed
(one unpadded sentence), so the graphs compute its maths.

  /usr/bin/python3 bench/peers/export_sentiment.py --bundle models/sst2-selfattn --out bench/peers/out
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_common import OPSET, Graph, export, finish, parse_args, recipe  # noqa: E402  (exits without PyTorch)

recipe("sentiment")
import numpy as np  # noqa: E402
import torch  # noqa: E402

import common  # noqa: E402


class SelfAttn(Graph):
    def forward(self, ids):
        m = self.m
        h, _ = m.lstm(m.embedding(ids))                                   # (1,T,2u)
        att = torch.softmax(m.ws2(torch.tanh(m.ws1(h))).transpose(1, 2), dim=2)  # (1,r,T)
        z = torch.relu(m.fc(torch.bmm(att, h).reshape(1, -1)))
        probs = torch.softmax(m.out(z), dim=1)
        return (probs, att) if self.maps else probs


class Relation(Graph):
    def forward(self, ids):
        m = self.m
        E = m.emb_dim
        x = m.embedding(ids)
        w1, b1 = m.g_fc1.weight, m.g_fc1.bias
        g = torch.relu((x @ w1[:, :E].t() + b1)[:, :, None, :] + (x @ w1[:, E:].t())[:, None, :, :])
        g = torch.relu(m.g_fc2(g))                                        # (1,T,T,h)
        a1, ab1 = m.att_fc1.weight, m.att_fc1.bias
        ai = x @ a1[:, :E].t() + ab1
        aj = x @ a1[:, E:].t()
        s = m.att_fc2(torch.tanh(ai[:, :, None, :] + aj[:, None, :, :]))[..., 0]
        att = torch.softmax(torch.sigmoid(s), dim=2)                      # (1,T,T)
        r = (att[..., None] * g).sum(dim=2)
        sent = r.sum(dim=1) / ids.shape[1]
        probs = torch.softmax(m.out(torch.relu(m.fc(sent))), dim=1)
        return (probs, att) if self.maps else probs


def main():
    args = parse_args(__doc__)
    name = os.path.basename(os.path.normpath(args.bundle))
    with open(os.path.join(args.bundle, "config.json")) as f:
        cfg = json.load(f)
    model = common.build_model(cfg)
    tensors, _ = common.read_safetensors(os.path.join(args.bundle, cfg.get("weights", "weights.safetensors")))
    try:
        common.load_float32_state(model, tensors, args.bundle)
    except ValueError as e:
        sys.exit(str(e))
    wrap = SelfAttn if cfg["architecture"] == "selfattn-classifier" else Relation
    written = []
    ids = torch.tensor([[5, 6, 7, 8, 9]], dtype=torch.long)
    with torch.no_grad():
        for maps in (False, True):
            path = os.path.join(args.out, f"{name}.{'maps' if maps else 'nomaps'}.onnx")
            outs = ["probabilities"] + (["attention"] if maps else [])
            axes = {"ids": {1: "T"}}
            if maps:
                axes["attention"] = {2: "T"} if wrap is SelfAttn else {1: "T", 2: "T"}
            export(wrap(model, maps), (ids,), path, input_names=["ids"], output_names=outs, dynamic_axes=axes)
            written.append(path)
    finish(args.out, name, {"name": name, "architecture": cfg["architecture"], "torch": torch.__version__,
                            "opset": OPSET}, written)


if __name__ == "__main__":
    main()
