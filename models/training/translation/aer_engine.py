"""Alignment Error Rate of the ENGINE's word alignments (attnlens-cli align: forced decoding of the gold English)
on the hand-aligned Multi30k val pairs of ../shared/align, for every extraction method of every given bundle.
No torch needed; alignment_eval.py is the PyTorch twin and gives the same links.

  /usr/bin/python3 aer_engine.py --bundle ../../de-en-general ../../de-en-transformer ../../de-en-rnn-general \
      ../../de-en-rnn-additive [--cli ../../../build/attnlens-cli] [--json-out F]

Methods (src/analysis/word_alignment.h; words = BPE pieces merged, source word = SUM of its pieces' columns, target
word = MEAN of its pieces' rows):
  layer-mean L, argmax | gdfa     mean of decoder layer L's cross heads (Transformer), every L
  head L.H, argmax | gdfa         one head: the bundle's trained alignment head (when it has one)
  cross, argmax | gdfa            an RNN's one cross map
  default                         the bundle's own default (config.json "alignment" / "alignment_head")
AER = 1 − (|A∩S| + |A∩P|) / (|A| + |S|), micro-averaged over the 120 pairs (aer.py). Lower is better.
"""
import gzip
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from aligner import ALIGN_DIR, gold_pairs  # noqa: E402
from common import alignment_report_args  # noqa: E402
from evaluate_engine import find_engine_cli  # noqa: E402

sys.path.insert(0, ALIGN_DIR)
import aer as aer_mod  # noqa: E402


def pairs_tsv(data_dir):
    de = [x.rstrip("\n") for x in gzip.open(os.path.join(data_dir, "val.de.gz"), "rt", encoding="utf-8")]
    en = [x.rstrip("\n") for x in gzip.open(os.path.join(data_dir, "val.en.gz"), "rt", encoding="utf-8")]
    return "".join(f"{de[i]}\t{en[i]}\n" for i, _, _ in gold_pairs())


def run_align(cli, bundle, tsv, options):
    out = subprocess.run([cli, "align", "--model", bundle, *options], input=tsv.encode("utf-8"),
                         stdout=subprocess.PIPE, check=True).stdout.decode("utf-8").split("\n")
    return out[:-1] if out and out[-1] == "" else out


def score(hyp_lines):
    gold = aer_mod.read_lines(os.path.join(ALIGN_DIR, "val.talp"))
    precision, recall, err, _ = aer_mod.aer(gold, hyp_lines)
    return {"aer": round(100 * err, 2), "precision": round(100 * precision, 2), "recall": round(100 * recall, 2)}


def methods_of(cfg):
    if cfg["architecture"] != "transformer-seq2seq":
        return {f"cross, {e}": ["--extraction", e] for e in ("argmax", "gdfa")}
    out = {}
    for layer in range(cfg["decoder_layers"]):
        for e in ("argmax", "gdfa"):
            out[f"layer-mean {layer}, {e}"] = ["--method", "layer-mean", "--layer", str(layer), "--extraction", e]
    if "alignment_head" in cfg:
        h = cfg["alignment_head"]
        for e in ("argmax", "gdfa"):
            out[f"head {h['layer']}.{h['head']}, {e}"] = ["--method", "head", "--extraction", e]
    return out


def main():
    ap = alignment_report_args(__doc__)
    ap.add_argument("--markdown", action="store_true", help="also print one Markdown table per bundle (model cards)")
    args = ap.parse_args()
    cli = find_engine_cli(args.cli)
    tsv = pairs_tsv(args.data_dir)
    report = {}
    for bundle in args.bundle:
        with open(os.path.join(bundle, "config.json"), encoding="utf-8") as f:
            cfg = json.load(f)
        res = {name: score(run_align(cli, bundle, tsv, opts)) for name, opts in methods_of(cfg).items()}
        default_lines = run_align(cli, bundle, tsv, ["--json"])
        default_method = json.loads(default_lines[0])["alignment_method"]
        links = [" ".join(f"{s}-{t}" for s, t in json.loads(x)["alignment"]) for x in default_lines]
        res[f"default ({default_method})"] = score(links)
        report[cfg["name"]] = res
        print(f"== {cfg['name']}")
        for name, v in sorted(res.items(), key=lambda kv: kv[1]["aer"]):
            print(f"  {name:28s} AER {v['aer']:6.2f}  precision {v['precision']:6.2f}  recall {v['recall']:6.2f}")
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(report, f, indent=1)
    if args.markdown:
        for name, res in report.items():
            print(f"\n{name}\n\n| method | AER | precision | recall |\n|---|---|---|---|")
            for method, v in sorted(res.items(), key=lambda kv: kv[1]["aer"]):
                print(f"| {method} | {v['aer']:.2f} | {v['precision']:.2f} | {v['recall']:.2f} |")


if __name__ == "__main__":
    main()
