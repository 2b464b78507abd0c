"""Golden dumps for engine parity (format: tests/goldens/README.md), computed from an exported bundle.

  /usr/bin/python3 make_goldens.py --bundle ../../de-en-transformer [--cases 20]

For each case (val sentences, picked deterministically: every 37th line whose source and reference have at most
20 BPE ids, until --cases are found) golden.json holds the source text, its pieces and ids (with </s>), the
reference and its teacher-forcing ids, and the greedy and beam outputs (ids with </s>, detokenized text) of the
decoders in decoding.py with the bundle's decoding settings. golden.safetensors holds, keyed case<i>/<what>:
  logits                      (T,V)   teacher-forced logits of the reference, case 0 only (size)
  logits_top_ids/_values      (T,16)  the 16 largest logits per step (descending; ties -> lower id), every case
  logits_logsumexp, logits_mean (T)   over the whole vocabulary, every case (catches errors outside the top 16)
  Transformer: encoder_self/layer<l> (H,S,S), decoder_self/layer<l> (H,T,T), cross/layer<l> (H,T,S)
  RNNs:        cross (T,S)      attention over source positions at every teacher-forced step
T counts target positions (<s> + reference ids), S source ids (with </s>). Rows of every map sum to 1.
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bundle import load_bundle  # noqa: E402
from common import (BOS, DEFAULT_DATA_DIR, EOS, bpe_decode_ids, bpe_encode_ids, bpe_encode_pieces,  # noqa: E402
                    find_cli, read_lines, write_safetensors)
from decoding import beam_search, greedy_batch, strip_specials  # noqa: E402

TOP_K = 16


def add_logit_goldens(tensors, key, logits, full):
    """A case's logits [T, V] as goldens: KEY/logits itself when `full`, and always the top TOP_K ids and values
    (stable sort, ties by id), the log-sum-exp and the mean of each row (computed in float64, stored as float32)."""
    lg = logits.double()
    if full:
        tensors[f"{key}/logits"] = lg.float().numpy()
    order = torch.sort(lg, dim=-1, descending=True, stable=True)
    tensors[f"{key}/logits_top_ids"] = order.indices[:, :TOP_K].numpy().astype(np.int32)
    tensors[f"{key}/logits_top_values"] = order.values[:, :TOP_K].float().numpy()
    tensors[f"{key}/logits_logsumexp"] = torch.logsumexp(lg, -1).float().numpy()
    tensors[f"{key}/logits_mean"] = lg.mean(-1).float().numpy()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bundle", required=True)
    p.add_argument("--cases", type=int, default=20)
    p.add_argument("--full-logits-cases", type=int, default=1)
    p.add_argument("--data-dir", default=DEFAULT_DATA_DIR)
    p.add_argument("--cli")
    p.add_argument("--tatoeba-cases", type=int, default=0,
                   help="also this many everyday cases from the Tatoeba dev split (general.py), same rule")
    p.add_argument("--examples", help="file of German sentences (one a line): PyTorch greedy and beam outputs "
                   "stored under \"examples\" (no reference, no maps) for tests of the shipped bundle's output")
    args = p.parse_args()
    torch.set_num_threads(2)
    cli = find_cli(args.cli)
    model, cfg = load_bundle(args.bundle)
    prefix = os.path.join(args.bundle, "bpe")
    dec = cfg["decoding"]
    # The bundle's beam settings as decoding.beam_search takes them (the same for the cases and the examples).
    beam_settings = dict(beam=dec["num_beams"], alpha=dec["alpha"], beta=dec["coverage_penalty_beta"],
                         max_len_a=dec["max_len_a"], max_len_b=dec["max_len_b"],
                         candidates_per_beam=dec.get("candidates_per_beam", 1))
    src_text = read_lines(args.data_dir, "val", "de")
    ref_text = read_lines(args.data_dir, "val", "en")
    origin = [("val", i + 1) for i in range(len(src_text))]
    src_all = bpe_encode_ids(cli, prefix, src_text)
    ref_all = bpe_encode_ids(cli, prefix, ref_text)
    picked = []
    for i in range(0, len(src_text), 37):
        if len(src_all[i]) + 1 <= 20 and len(ref_all[i]) + 1 <= 20:
            picked.append(i)
        if len(picked) == args.cases:
            break
    if args.tatoeba_cases:
        from general import read_tatoeba, split_tatoeba
        pairs = read_tatoeba()
        dev = split_tatoeba(pairs)[1]
        t_src, t_ref = [pairs[i][0] for i in dev], [pairs[i][1] for i in dev]
        t_src_ids, t_ref_ids = bpe_encode_ids(cli, prefix, t_src), bpe_encode_ids(cli, prefix, t_ref)
        base, n = len(src_text), 0
        src_text, ref_text = src_text + t_src, ref_text + t_ref
        src_all, ref_all = src_all + t_src_ids, ref_all + t_ref_ids
        origin += [("tatoeba_dev", k) for k in range(len(t_src))]
        for k in range(0, len(t_src), 97):
            if len(t_src_ids[k]) >= 4 and len(t_src_ids[k]) + 1 <= 20 and len(t_ref_ids[k]) + 1 <= 20:
                picked.append(base + k)
                n += 1
            if n == args.tatoeba_cases:
                break
    pieces = bpe_encode_pieces(cli, prefix, [src_text[i] for i in picked])
    tensors, cases = {}, []
    worst_incremental = 0.0
    for c, i in enumerate(picked):
        src_ids = src_all[i] + [EOS]
        tgt_in = [BOS] + ref_all[i]
        s = torch.tensor([src_ids])
        ti = torch.tensor([tgt_in])
        with torch.no_grad():
            logits, attn = model(s, ti)
            # The engine decodes incrementally (KV cache / recurrent state): check that it equals teacher forcing.
            enc = model.encode(s)
            state = model.init_state(enc)
            steps = []
            for t in range(len(tgt_in)):
                lg, state, _ = model.step(enc, state, ti[:, t])
                steps.append(lg)
            worst_incremental = max(worst_incremental, float((torch.stack(steps, 1) - logits).abs().max()))
        key = f"case{c}"
        add_logit_goldens(tensors, key, logits[0], c < args.full_logits_cases)
        maps = []
        if cfg["architecture"] == "transformer-seq2seq":
            for name in ("encoder_self", "decoder_self", "cross"):
                for layer, a in enumerate(attn[name]):
                    k = f"{key}/{name}/layer{layer}"
                    tensors[k] = a[0].float().numpy()
                    maps.append({"name": name, "layer": layer, "key": k, "dims": list(a[0].shape),
                                 "axes": ["head", "query", "key"]})
        else:
            k = f"{key}/cross"
            tensors[k] = attn["cross"][0].float().numpy()
            maps.append({"name": "cross", "layer": -1, "key": k, "dims": list(attn["cross"][0].shape),
                         "axes": ["step", "source"]})
        greedy = greedy_batch(model, s, max_len_a=dec["max_len_a"], max_len_b=dec["max_len_b"])[0]
        beam = beam_search(model, src_ids, **beam_settings)
        g_text, b_text = bpe_decode_ids(cli, prefix, [strip_specials(greedy), strip_specials(beam)])
        cases.append({"name": key, origin[i][0] + ("_line" if origin[i][0] == "val" else "_index"): origin[i][1],
                      "source": src_text[i], "source_pieces": pieces[c],
                      "source_ids": src_ids, "reference": ref_text[i], "target_in_ids": tgt_in,
                      "target_out_ids": ref_all[i] + [EOS], "full_logits": c < args.full_logits_cases,
                      "attentions": maps,
                      "greedy": {"ids": greedy, "text": g_text},
                      f"beam{dec['num_beams']}": {"ids": beam, "text": b_text}})
    golden = {"model": cfg["name"], "architecture": cfg["architecture"],
              "generator": "models/training/translation/make_goldens.py", "torch": torch.__version__,
              "tolerance": {"abs": 1e-4, "rel": 1e-3}, "top_k": TOP_K,
              "decoding": {"greedy": {"max_len_a": dec["max_len_a"], "max_len_b": dec["max_len_b"]},
                           "beam": {**{k: dec[k] for k in ("num_beams", "alpha", "coverage_penalty_beta",
                                                           "max_len_a", "max_len_b")},
                                    "candidates_per_beam": dec.get("candidates_per_beam", 1)}},
              "cases": cases}
    if args.examples:
        with open(args.examples, encoding="utf-8") as f:
            sentences = [line.rstrip("\n") for line in f if line.strip()]
        examples = []
        for sent, ids in zip(sentences, bpe_encode_ids(cli, prefix, sentences)):
            src_ids = ids + [EOS]
            with torch.no_grad():
                greedy = greedy_batch(model, torch.tensor([src_ids]), max_len_a=dec["max_len_a"],
                                      max_len_b=dec["max_len_b"])[0]
                beam = beam_search(model, src_ids, **beam_settings)
            g_text, b_text = bpe_decode_ids(cli, prefix, [strip_specials(greedy), strip_specials(beam)])
            examples.append({"source": sent, "greedy": {"ids": greedy, "text": g_text},
                             f"beam{dec['num_beams']}": {"ids": beam, "text": b_text}})
            print(f"  example: {sent}\n    greedy: {g_text}\n    beam:   {b_text}", flush=True)
        golden["examples"] = examples
    with open(os.path.join(args.bundle, "golden.json"), "w") as f:
        json.dump(golden, f, indent=1, ensure_ascii=False)
        f.write("\n")
    write_safetensors(os.path.join(args.bundle, "golden.safetensors"), tensors,
                      metadata={"generator": "models/training/translation/make_goldens.py"})
    size = os.path.getsize(os.path.join(args.bundle, "golden.safetensors")) + \
        os.path.getsize(os.path.join(args.bundle, "golden.json"))
    print(f"{len(cases)} cases, goldens {size / 1e6:.2f} MB; incremental vs teacher-forced max |diff| "
          f"{worst_incremental:.2g}", flush=True)
    for c in cases[:5]:
        print(f"  {c['source']}\n    greedy: {c['greedy']['text']}\n    beam:   {c['beam4']['text'] if 'beam4' in c else ''}")


if __name__ == "__main__":
    main()
