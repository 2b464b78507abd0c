"""BLEU of a translator (PyTorch reference implementation) over a whole Multi30k split.

  /usr/bin/python3 evaluate.py --bundle ../../de-en-transformer --split test_2016_flickr --beam 4
  /usr/bin/python3 evaluate.py --checkpoints runs/transformer/epoch18.pt runs/transformer/epoch19.pt ... \
      --split val --beam 4 --alpha 0.6 1.0       (several alphas cost one search: alpha acts on the final choice)

Metrics (docs/DESIGN.md §13): BLEU-4 = nltk corpus_bleu, default weights, no smoothing, x100, one hypothesis per
source line, one reference.
  bleu_lc_tok:       hypothesis and reference lowercased and split by the regex \\w+|[^\\w\\s]
  bleu_cased_detok:  the detokenized hypothesis (bpe decode) against the raw reference, case kept, same split
--beam 1 is greedy decoding.
"""
import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bundle import average_checkpoints, load_bundle  # noqa: E402
from common import (DEFAULT_DATA_DIR, EOS, append_jsonl, bleu_fields, bpe_decode_ids, bpe_encode_ids,  # noqa: E402
                    bpe_prefix, find_cli, pad_batch, read_lines, report_result)
from decoding import beam_finished, choose_finished, greedy_batch, strip_specials  # noqa: E402
from models import build_model  # noqa: E402


def load_model(args):
    if args.bundle:
        model, cfg = load_bundle(args.bundle)
        return model, os.path.join(args.bundle, "bpe"), cfg.get("max_positions")
    sd, meta = average_checkpoints(args.checkpoints)
    targs = meta["args"]
    model = build_model(meta["kind"], meta["vocab_size"],
                        {"dropout": 0.0, "d_ff": targs["d_ff"], "layers": targs["layers"],
                         "dec_layers": targs["dec_layers"]})
    model.load_state_dict(sd)
    model.eval()
    return model, bpe_prefix(targs["merges"]), getattr(model, "max_positions", None)


def translate(model, src_ids, beam, alphas, beta, log_every=200):
    """Returns {alpha: [id lists]} (greedy: the same list for every alpha)."""
    out = {a: [None] * len(src_ids) for a in alphas}
    if beam == 1:
        order = sorted(range(len(src_ids)), key=lambda i: len(src_ids[i]))
        for b in range(0, len(order), 100):
            idx = order[b:b + 100]
            hyps = greedy_batch(model, pad_batch([src_ids[i] for i in idx]))
            for i, h in zip(idx, hyps):
                for a in alphas:
                    out[a][i] = h
        return out
    t0 = time.time()
    for i, s in enumerate(src_ids):
        finished = beam_finished(model, s, beam=beam)
        for a in alphas:
            out[a][i] = choose_finished(finished, alpha=a, beta=beta)
        if log_every and (i + 1) % log_every == 0:
            print(f"  {i + 1}/{len(src_ids)} sentences, {time.time() - t0:.0f}s", file=sys.stderr, flush=True)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--bundle", help="bundle folder (models/<name>)")
    g.add_argument("--checkpoints", nargs="+", help="epoch checkpoints; several are averaged")
    p.add_argument("--split", default="val", choices=["val", "test_2016_flickr"])
    p.add_argument("--data-dir", default=DEFAULT_DATA_DIR)
    p.add_argument("--cli")
    p.add_argument("--beam", type=int, default=4)
    p.add_argument("--alpha", type=float, nargs="+", default=[0.6], help="GNMT length penalty exponent(s)")
    p.add_argument("--beta", type=float, default=0.0, help="GNMT coverage penalty weight (0 = off)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--hyps-out", help="write detokenized hypotheses here (first alpha)")
    p.add_argument("--limit", type=int, help="first N sentences only: code checks, never a reported number")
    p.add_argument("--json-out", help="append the result as one JSON line here")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    cli = find_cli(args.cli)
    model, prefix, max_positions = load_model(args)
    src_text = read_lines(args.data_dir, args.split, "de")
    refs = read_lines(args.data_dir, args.split, "en")
    if args.limit:
        src_text, refs = src_text[:args.limit], refs[:args.limit]
    src_ids = [ids + [EOS] for ids in bpe_encode_ids(cli, prefix, src_text)]
    if max_positions:
        src_ids = [s if len(s) <= max_positions else s[:max_positions - 1] + [EOS] for s in src_ids]
    t0 = time.time()
    hyps = translate(model, src_ids, args.beam, args.alpha, args.beta)
    seconds = time.time() - t0
    results = []
    for a in args.alpha:
        text = bpe_decode_ids(cli, prefix, [strip_specials(h) for h in hyps[a]])
        res = {"model": args.bundle or args.checkpoints, "split": args.split, "sentences": len(text),
               "beam": args.beam, "alpha": a if args.beam > 1 else None, "beta": args.beta if args.beam > 1 else None,
               **bleu_fields(text, refs),
               "decode_seconds": round(seconds, 1), "limited": bool(args.limit), "threads": args.threads, "engine": "pytorch-reference"}
        report_result(results, res, text, args.hyps_out if a == args.alpha[0] else None)
    append_jsonl(args.json_out, results)


if __name__ == "__main__":
    main()
