"""Shared pieces of the Multi30k de->en recipes: data, the project's BPE (through attnlens-cli), batching,
BLEU (docs/DESIGN.md §13) and a small safetensors reader/writer (numpy + struct; no PyPI package here).

Token-id conventions (fixed by the project's BPE, src/text): <pad>=0, <unk>=1, <s>=2, </s>=3.
  source ids  = bpe(src) + [</s>]
  target in   = [<s>] + bpe(tgt)          (teacher forcing)
  target out  = bpe(tgt) + [</s>]
"""
import gzip
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
from collections import Counter

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from safetensors_io import read_safetensors, write_safetensors  # noqa: E402,F401  (models/training/)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
DEFAULT_DATA_DIR = os.path.join(REPO, "..", "shared", "data", "multi30k")
CACHE_DIR = os.path.join(HERE, "cache")
RUNS_DIR = os.path.join(HERE, "runs")

PAD, UNK, BOS, EOS = 0, 1, 2, 3
SPLITS = ("train", "val", "test_2016_flickr")


# ---------------------------------------------------------------- data
def read_lines(data_dir, split, lang):
    path = os.path.join(data_dir, f"{split}.{lang}.gz")
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


# ---------------------------------------------------------------- BPE via the engine's CLI
def find_cli(explicit=None):
    """The attnlens-cli binary: --cli, $ATTNLENS_CLI, or the first one found in a build dir of the repo."""
    candidates = [explicit, os.environ.get("ATTNLENS_CLI")]
    for build in ("build-translation", "build"):
        for sub in ("", "src/cli", "bin"):
            candidates.append(os.path.join(REPO, build, sub, "attnlens-cli"))
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    raise SystemExit("attnlens-cli not found: build it with `cmake -S . -B build-translation -DCMAKE_BUILD_TYPE=Release"
                     " && cmake --build build-translation -j2 --target attnlens-cli`, or pass --cli PATH")


def bpe_learn(cli, merges, files, prefix, min_frequency=None):
    cmd = [cli, "bpe", "learn", "--merges", str(merges), "--output", prefix]
    if min_frequency is not None:
        cmd += ["--min-frequency", str(min_frequency)]
    subprocess.run(cmd + list(files), check=True)


def run_bpe(cli, args, lines, expected=None):
    """`attnlens-cli bpe ARGS` on the lines (newlines inside a line become spaces); its output lines, checked to
    be `expected` many when given."""
    text = "".join(line.replace("\n", " ") + "\n" for line in lines)
    out = subprocess.run([cli, "bpe"] + args, input=text.encode("utf-8"),
                         stdout=subprocess.PIPE, check=True).stdout.decode("utf-8").split("\n")
    if out and out[-1] == "":
        out = out[:-1]
    if expected is not None and len(out) != expected:
        raise RuntimeError(f"bpe {args[0]} returned {len(out)} lines for {expected} inputs")
    return out


def bpe_encode_ids(cli, prefix, lines):
    """Encode lines with the project's BPE; returns a list of id lists (no BOS/EOS added)."""
    out = run_bpe(cli, ["encode", "--model", prefix, "--ids"], lines, len(lines))
    return [[int(t) for t in line.split()] for line in out]


def bpe_encode_pieces(cli, prefix, lines):
    return [line.split() for line in run_bpe(cli, ["encode", "--model", prefix], lines)]


def bpe_decode_ids(cli, prefix, id_lists):
    """Detokenize id lists (specials are the caller's to strip) with the project's BPE."""
    return run_bpe(cli, ["decode", "--model", prefix, "--ids"], [" ".join(str(i) for i in ids) for ids in id_lists],
                   len(id_lists))


def vocab_size(prefix):
    """Number of entries in PREFIX.vocab (one piece per line, line number = id)."""
    with open(prefix + ".vocab", encoding="utf-8") as f:
        return sum(1 for _ in f)


def bpe_prefix(merges):
    return os.path.join(CACHE_DIR, f"bpe{merges}", "joint")


def load_encoded(merges, data_dir, cli=None):
    """Encoded corpus {split: (src_ids, tgt_ids)} for the joint BPE with `merges` merges, cached as JSON.
    The BPE is learned on train.de + train.en only (never on val/test)."""
    prefix = bpe_prefix(merges)
    cache = prefix + ".encoded.json"
    if os.path.isfile(cache):
        with open(cache) as f:
            enc = json.load(f)
        return prefix, {k: (v[0], v[1]) for k, v in enc.items()}
    cli = find_cli(cli)
    os.makedirs(os.path.dirname(prefix), exist_ok=True)
    if not os.path.isfile(prefix + ".merges"):
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            files = []
            for lang in ("de", "en"):
                p = os.path.join(tmp, f"train.{lang}")
                with open(p, "w", encoding="utf-8") as f:
                    f.write("\n".join(read_lines(data_dir, "train", lang)) + "\n")
                files.append(p)
            bpe_learn(cli, merges, files, prefix)
    enc = {}
    for split in SPLITS:
        enc[split] = (bpe_encode_ids(cli, prefix, read_lines(data_dir, split, "de")),
                      bpe_encode_ids(cli, prefix, read_lines(data_dir, split, "en")))
    with open(cache, "w") as f:
        json.dump(enc, f)
    return prefix, enc


# ---------------------------------------------------------------- batching
def make_batches(src, tgt, max_tokens, rng=None, max_len=None):
    """Token-bucketed batches: sentences sorted by (source, target) length, cut so that
    batch_size * max(padded src, padded tgt) <= max_tokens; batch order shuffled by `rng` (deterministic)."""
    idx = list(range(len(src)))
    if max_len is not None:
        idx = [i for i in idx if len(src[i]) + 1 <= max_len and len(tgt[i]) + 1 <= max_len]
    if rng is not None:
        rng.shuffle(idx)  # random order among equal lengths, then a stable sort
    idx.sort(key=lambda i: (len(src[i]), len(tgt[i])))
    batches, cur, cur_max = [], [], 0
    for i in idx:
        longest = max(cur_max, len(src[i]) + 1, len(tgt[i]) + 1)
        if cur and longest * (len(cur) + 1) > max_tokens:
            batches.append(cur)
            cur, longest = [], max(len(src[i]) + 1, len(tgt[i]) + 1)
        cur.append(i)
        cur_max = longest
    if cur:
        batches.append(cur)
    if rng is not None:
        rng.shuffle(batches)
    return batches


def pad_batch(seqs, prefix=None, suffix=None):
    import torch
    rows = [([prefix] if prefix is not None else []) + list(s) + ([suffix] if suffix is not None else []) for s in seqs]
    n = max(len(r) for r in rows)
    out = torch.full((len(rows), n), PAD, dtype=torch.long)
    for i, r in enumerate(rows):
        out[i, :len(r)] = torch.tensor(r, dtype=torch.long)
    return out


# ---------------------------------------------------------------- BLEU (docs/DESIGN.md §13)
_TOKEN_RE = re.compile(r"\w+|[^\w\s]")


def bleu_tokens(text, lowercase=True):
    return _TOKEN_RE.findall(text.lower() if lowercase else text)


def corpus_bleu(hyps, refs, lowercase=True):
    """BLEU-4 (nltk corpus_bleu, default weights, no smoothing) x 100, one reference per line."""
    import warnings
    from nltk.translate.bleu_score import corpus_bleu as nltk_bleu
    warnings.filterwarnings("ignore", message=r"\s*The hypothesis contains 0 counts", category=UserWarning)
    h = [bleu_tokens(x, lowercase) for x in hyps]
    r = [[bleu_tokens(x, lowercase)] for x in refs]
    return 100.0 * nltk_bleu(r, h)


def bleu_fields(hyps, refs):
    """The two BLEU figures every evaluation reports: lowercased tokenized and cased detokenized, 2 decimals."""
    return {"bleu_lc_tok": round(corpus_bleu(hyps, refs, lowercase=True), 2),
            "bleu_cased_detok": round(corpus_bleu(hyps, refs, lowercase=False), 2)}


def report_result(results, res, hyps=None, hyps_path=None):
    """Adds an evaluation record to `results`, prints it as a JSON line and, given hyps_path, writes the hypotheses
    there one a line."""
    results.append(res)
    print(json.dumps(res), flush=True)
    if hyps_path:
        with open(hyps_path, "w", encoding="utf-8") as f:
            f.write("\n".join(hyps) + "\n")


def append_jsonl(path, records):
    """Appends the records to a JSON-lines file (no-op without a path)."""
    if path:
        with open(path, "a") as f:
            for r in records:
                f.write(json.dumps(r) + "\n")


def alignment_report_args(doc):
    """The command line the alignment reports share: --bundle DIR... --cli --data-dir --json-out (add more after)."""
    import argparse
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle", nargs="+", required=True)
    ap.add_argument("--cli")
    ap.add_argument("--data-dir", default=DEFAULT_DATA_DIR)
    ap.add_argument("--json-out")
    return ap


def set_seed(seed):
    import torch
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def copy_tokenizer(prefix, out_dir):
    shutil.copyfile(prefix + ".vocab", os.path.join(out_dir, "bpe.vocab"))
    shutil.copyfile(prefix + ".merges", os.path.join(out_dir, "bpe.merges"))
