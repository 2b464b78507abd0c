"""The general de->en corpus: Multi30k train + Tatoeba (manythings.org/anki deu-eng, CC-BY 2.0, tatoeba.org), with a
Tatoeba development split carved out by whole groups of pairs that share a sentence.

  tatoeba dev   = 2,000+ pairs: groups of pairs linked by a shared English or German sentence (union-find), shuffled
                  with random.Random(2027) and taken whole until 2,000 pairs are reached, so no dev sentence appears in
                  training on either side (../shared/data/tatoeba_deu_eng/SOURCE.md asks for exactly this).
  train         = Multi30k train (repeated --multi30k-repeat times, default 2, so the image-description domain keeps
                  its weight next to ~166k short Tatoeba pairs) + the remaining Tatoeba pairs.
  Multi30k val / test_2016_flickr stay as they are (val for selection, test read only by the evaluation scripts).

The joint BPE is learned on the (un-repeated) training sides, de and en together, with the project's tokenizer
(attnlens-cli bpe learn). Everything derived is cached under cache/general-bpe<N>/ (git-ignored).
"""
import gzip
import json
import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (CACHE_DIR, DEFAULT_DATA_DIR, REPO, bpe_encode_ids, bpe_learn, find_cli,  # noqa: E402
                    read_lines)

TATOEBA_FILE = os.path.join(REPO, "..", "shared", "data", "tatoeba_deu_eng", "deu.txt.gz")
DEV_PAIRS = 2000
DEV_SEED = 2027


def read_tatoeba(path=TATOEBA_FILE):
    """[(de, en)] in file order. The file is English<TAB>German per line."""
    pairs = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            en, de = line.split("\t")[:2]
            pairs.append((de, en))
    return pairs


def split_tatoeba(pairs, dev_pairs=DEV_PAIRS, seed=DEV_SEED):
    """(train_indices, dev_indices): groups of pairs sharing a German or an English sentence never straddle."""
    parent = list(range(len(pairs)))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    first = {}
    for i, (de, en) in enumerate(pairs):
        for key in (("de", de), ("en", en)):
            j = first.setdefault(key, i)
            if j != i:
                a, b = find(i), find(j)
                if a != b:
                    parent[max(a, b)] = min(a, b)
    groups = {}
    for i in range(len(pairs)):
        groups.setdefault(find(i), []).append(i)
    order = sorted(groups)
    random.Random(seed).shuffle(order)
    dev = []
    for root in order:
        if len(dev) >= dev_pairs:
            break
        dev.extend(groups[root])
    dev_set = set(dev)
    train = [i for i in range(len(pairs)) if i not in dev_set]
    return train, sorted(dev)


def corpus_dir(merges):
    return os.path.join(CACHE_DIR, f"general-bpe{merges}")


def load_general(merges, data_dir=DEFAULT_DATA_DIR, cli=None, multi30k_repeat=2):
    """(prefix, enc, text): enc = {split: (src_ids, tgt_ids)} for train, val, tatoeba_dev, test_2016_flickr;
    text = {split: (de_lines, en_lines)} for val and tatoeba_dev (references). Cached as JSON."""
    d = corpus_dir(merges)
    prefix = os.path.join(d, "joint")
    cache = os.path.join(d, "encoded.json")
    if os.path.isfile(cache):
        with open(cache) as f:
            blob = json.load(f)
    else:
        cli = find_cli(cli)
        os.makedirs(d, exist_ok=True)
        tat = read_tatoeba()
        tr_idx, dev_idx = split_tatoeba(tat)
        m30 = {s: (read_lines(data_dir, s, "de"), read_lines(data_dir, s, "en"))
               for s in ("train", "val", "test_2016_flickr")}
        tat_train = ([tat[i][0] for i in tr_idx], [tat[i][1] for i in tr_idx])
        tat_dev = ([tat[i][0] for i in dev_idx], [tat[i][1] for i in dev_idx])
        if not os.path.isfile(prefix + ".merges"):
            with tempfile.TemporaryDirectory() as tmp:
                files = []
                for k, lang in enumerate(("de", "en")):
                    p = os.path.join(tmp, f"train.{lang}")
                    with open(p, "w", encoding="utf-8") as f:
                        f.write("\n".join(m30["train"][k] + tat_train[k]) + "\n")
                    files.append(p)
                bpe_learn(cli, merges, files, prefix)
        blob = {"text": {"val": m30["val"], "tatoeba_dev": tat_dev, "test_2016_flickr": m30["test_2016_flickr"]},
                "tatoeba_dev_index": dev_idx, "n_multi30k_train": len(m30["train"][0]), "enc": {}}
        for name, (de, en) in (("multi30k_train", m30["train"]), ("tatoeba_train", tat_train),
                               ("val", m30["val"]), ("tatoeba_dev", tat_dev),
                               ("test_2016_flickr", m30["test_2016_flickr"])):
            blob["enc"][name] = (bpe_encode_ids(cli, prefix, de), bpe_encode_ids(cli, prefix, en))
        with open(cache, "w") as f:
            json.dump(blob, f)
        with open(os.path.join(d, "tatoeba_dev.de"), "w", encoding="utf-8") as f:
            f.write("\n".join(tat_dev[0]) + "\n")
        with open(os.path.join(d, "tatoeba_dev.en"), "w", encoding="utf-8") as f:
            f.write("\n".join(tat_dev[1]) + "\n")
    e = blob["enc"]
    m_src, m_tgt = e["multi30k_train"]
    t_src, t_tgt = e["tatoeba_train"]
    enc = {"train": (m_src * multi30k_repeat + t_src, m_tgt * multi30k_repeat + t_tgt),
           "val": tuple(e["val"]), "tatoeba_dev": tuple(e["tatoeba_dev"]),
           "test_2016_flickr": tuple(e["test_2016_flickr"])}
    # Which training rows are which corpus sentence (for alignment labels, computed once per distinct pair).
    n_m = len(m_src)
    origin = [("multi30k_train", i) for _ in range(multi30k_repeat) for i in range(n_m)]
    origin += [("tatoeba_train", i) for i in range(len(t_src))]
    return prefix, enc, {k: tuple(v) for k, v in blob["text"].items()}, origin


def read_split_text(merges, split):
    """(de_lines, en_lines) of a split of the general corpus (tatoeba_dev, val, test_2016_flickr)."""
    with open(os.path.join(corpus_dir(merges), "encoded.json")) as f:
        blob = json.load(f)
    return tuple(blob["text"][split])


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description="build (or show) the cached general corpus")
    ap.add_argument("--merges", type=int, default=10000)
    ap.add_argument("--cli")
    a = ap.parse_args()
    prefix, enc, text, origin = load_general(a.merges, cli=a.cli)
    for k, (s, t) in enc.items():
        print(k, len(s), "pairs,", sum(map(len, s)), "source pieces,", sum(map(len, t)), "target pieces")
    print("tatoeba dev examples:", list(zip(*text["tatoeba_dev"]))[:3])
