"""attnlens bundles for the translators: write (config.json + weights.safetensors + bpe.vocab/bpe.merges) and
read back into the PyTorch model (the export-side loader that verifies a bundle)."""
import json
import os

import numpy as np
import torch

from common import BOS, EOS, PAD, UNK, read_safetensors, write_safetensors
from models import RnnAdditive, RnnGeneral, TransformerSeq2Seq
from safetensors_io import load_float32_state  # noqa: E402  (models/training/, put on sys.path by common)

KIND_OF_NAME = {"de-en-transformer": "transformer", "de-en-rnn-general": "rnn-general",
                "de-en-rnn-additive": "rnn-additive", "de-en-general": "transformer"}


def model_config(model):
    """The config.json fields that describe the forward pass (everything but the tokenizer and file names)."""
    c = dict(model.cfg)
    c.pop("dropout", None)  # training only
    if isinstance(model, TransformerSeq2Seq):
        c.update(norm="pre", layer_norm_eps=1e-5, activation="relu", positional_encoding="sinusoidal",
                 embedding_scale=float(np.sqrt(c["d_model"])), shared_embeddings="source,target,output",
                 output_bias=False, attention="scaled_dot", final_norms=True)
    else:
        c.update(shared_embeddings="source,target,output", output_bias=True)
        if isinstance(model, RnnAdditive):
            c.update(decoder_init="tanh(init_proj(backward state at the first source token))",
                     readout="tanh(readout([s_t; c_t; E y_{t-1}]))")
        else:
            c.update(decoder_init="[h_fwd_last; h_bwd_first], [c_fwd_last; c_bwd_first] for every layer",
                     attentional_vector_dim=c["embedding_dim"])
    return c


def write_bundle(model, out_dir, name, bpe_prefix, dtype="F16", decoding=None, extra=None):
    os.makedirs(out_dir, exist_ok=True)
    np_dtype = {"F16": np.float16, "F32": np.float32}[dtype]
    tensors = {k: v.detach().cpu().numpy().astype(np_dtype) for k, v in model.state_dict().items()}
    write_safetensors(os.path.join(out_dir, "weights.safetensors"), tensors,
                      metadata={"format": "attnlens-bundle", "name": name})
    for ext in ("vocab", "merges"):
        with open(bpe_prefix + "." + ext, "rb") as f, open(os.path.join(out_dir, "bpe." + ext), "wb") as g:
            g.write(f.read())
    cfg = {"format": "attnlens-bundle", "version": 1, "architecture": model.architecture, "task": "translation",
           "name": name, "source_language": "de", "target_language": "en"}
    cfg.update(model_config(model))
    cfg["tokenizer"] = {"type": "bpe", "vocab": "bpe.vocab", "merges": "bpe.merges", "joint": True,
                        "pad_id": PAD, "unk_id": UNK, "bos_id": BOS, "eos_id": EOS,
                        "source": "bpe(text) + [</s>]", "target_start": "<s>",
                        "implementation": "src/text/bpe.h (attnlens-cli bpe encode/decode)"}
    cfg["decoding"] = decoding or {}
    cfg["weights"] = "weights.safetensors"
    cfg["weights_dtype"] = dtype
    if extra:
        cfg.update(extra)
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2, ensure_ascii=False)
        f.write("\n")
    return cfg


def load_bundle(bundle_dir):
    """Reads a bundle back into the PyTorch model (float32 weights, eval mode). Strict: every tensor of the model
    must be present with its shape, and no other tensor may be in the file."""
    with open(os.path.join(bundle_dir, "config.json")) as f:
        cfg = json.load(f)
    if cfg.get("format") != "attnlens-bundle" or cfg.get("version") != 1:
        raise ValueError(f"{bundle_dir}: not an attnlens-bundle v1")
    arch = cfg["architecture"]
    if arch == "transformer-seq2seq":
        model = TransformerSeq2Seq(cfg["vocab_size"], d_model=cfg["d_model"], heads=cfg["heads"], d_ff=cfg["d_ff"],
                                   enc_layers=cfg["encoder_layers"], dec_layers=cfg["decoder_layers"], dropout=0.0,
                                   max_positions=cfg["max_positions"])
    elif arch == "rnn-seq2seq" and cfg["attention"] == "additive":
        model = RnnAdditive(cfg["vocab_size"], emb=cfg["embedding_dim"], hidden=cfg["encoder_hidden"],
                            dec_hidden=cfg["decoder_hidden"], attn=cfg["attention_dim"], dropout=0.0)
    elif arch == "rnn-seq2seq" and cfg["attention"] == "general":
        model = RnnGeneral(cfg["vocab_size"], emb=cfg["embedding_dim"], hidden=cfg["encoder_hidden"],
                           dec_layers=cfg["decoder_layers"], dropout=0.0)
    else:
        raise ValueError(f"{bundle_dir}: unknown architecture {arch!r}")
    tensors, _ = read_safetensors(os.path.join(bundle_dir, cfg["weights"]))
    return load_float32_state(model, tensors, bundle_dir), cfg


def average_checkpoints(paths):
    """Element-wise mean of the weights of several epoch checkpoints (Vaswani 2017 averaged the last checkpoints)."""
    avg, meta = None, None
    for p in paths:
        ck = torch.load(p)
        sd = ck["model"]
        if avg is None:
            avg = {k: v.double().clone() for k, v in sd.items()}
            meta = ck
        else:
            for k in avg:
                avg[k] += sd[k].double()
    return {k: (v / len(paths)).float() for k, v in avg.items()}, meta
