"""Translate the judged sample of Tatoeba dev with one or more bundles and write what is still to be judged, blind.

  /usr/bin/python3 make_blind.py --system NAME=BUNDLE [--system NAME=BUNDLE ...] [--beam 4] [--cli CLI]
                                [--alpha A] [--coverage-beta B] [--candidates-per-beam C]

The sample (sample.jsonl, written on the first run and kept in the repository) is SAMPLE_SIZE distinct German
sentences of the Tatoeba dev split of ../general.py, drawn with random.Random(SAMPLE_SEED), each with every English
reference the split has for it. Each system translates every sample sentence through `attnlens-cli translate` (the
bundle's own decoding defaults, beam 4 unless told; --alpha, --coverage-beta and --candidates-per-beam override them
for every system of the call); its outputs go to hypotheses-NAME.jsonl.

blind.jsonl then lists, for each sentence, the hypotheses no judgement in judgements.jsonl covers yet (a judgement
belongs to a sentence and a hypothesis text, not to a system, so a hypothesis two systems share is judged once and a
new bundle only adds what it writes differently). The hypotheses of one sentence are shuffled and carry no system
name; which system wrote what stays in the hypotheses files, which the judge does not read until every line of
blind.jsonl is judged. score.py puts the two together.
"""
import argparse
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from evaluate_engine import find_engine_cli, run_translate  # noqa: E402
from general import read_tatoeba, split_tatoeba  # noqa: E402

SAMPLE_SIZE = 300
SAMPLE_SEED = 58
SAMPLE_FILE = os.path.join(HERE, "sample.jsonl")
JUDGEMENTS_FILE = os.path.join(HERE, "judgements.jsonl")
BLIND_FILE = os.path.join(HERE, "blind.jsonl")


def read_jsonl(path):
    if not os.path.isfile(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def make_sample():
    """[{id, source, references}]: SAMPLE_SIZE distinct dev sources in the split's order of first appearance."""
    pairs = read_tatoeba()
    _, dev = split_tatoeba(pairs)
    refs = {}
    for i in dev:
        de, en = pairs[i]
        refs.setdefault(de, []).append(en)
    sources = sorted(refs)  # a fixed order independent of dict insertion
    chosen = random.Random(SAMPLE_SEED).sample(sources, SAMPLE_SIZE)
    return [{"id": n, "source": de, "references": refs[de]} for n, de in enumerate(chosen)]


def load_systems():
    """{NAME: {id: hypothesis}} from every hypotheses-NAME.jsonl beside this script."""
    systems = {}
    for f in sorted(os.listdir(HERE)):
        if f.startswith("hypotheses-") and f.endswith(".jsonl"):
            systems[f[len("hypotheses-"):-len(".jsonl")]] = {
                r["id"]: r["hypothesis"] for r in read_jsonl(os.path.join(HERE, f))}
    return systems


def load_sample():
    sample = read_jsonl(SAMPLE_FILE)
    if not sample:
        sample = make_sample()
        write_jsonl(SAMPLE_FILE, sample)
    return sample


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--system", action="append", default=[], metavar="NAME=BUNDLE",
                   help="a system to translate the sample with (repeatable); NAME names hypotheses-NAME.jsonl")
    p.add_argument("--beam", type=int, default=4)
    p.add_argument("--alpha", type=float, help="GNMT length penalty exponent (default: each bundle's)")
    p.add_argument("--coverage-beta", type=float, help="GNMT coverage penalty weight (default: each bundle's)")
    p.add_argument("--candidates-per-beam", type=int, help="finished hypotheses per beam (default: each bundle's)")
    p.add_argument("--cli", help="attnlens-cli (default: build/attnlens-cli of the repository)")
    p.add_argument("--seed", type=int, default=1, help="seed of the shuffle of each sentence's hypotheses")
    args = p.parse_args()
    sample = load_sample()
    if args.system:
        cli = find_engine_cli(args.cli)
        for spec in args.system:
            name, sep, bundle = spec.partition("=")
            if not sep or not name or not bundle:
                p.error(f"--system wants NAME=BUNDLE, got {spec!r}")
            flags = ["--beams", args.beam]
            for flag, value in (("--alpha", args.alpha), ("--coverage-beta", args.coverage_beta),
                                ("--candidates-per-beam", args.candidates_per_beam)):
                if value is not None:
                    flags += [flag, value]
            outputs, seconds = run_translate(cli, bundle, [s["source"] for s in sample], flags)
            write_jsonl(os.path.join(HERE, f"hypotheses-{name}.jsonl"),
                        [{"id": s["id"], "hypothesis": h} for s, h in zip(sample, outputs)])
            print(f"{name}: {len(outputs)} sentences in {seconds:.1f} s", file=sys.stderr)

    judged = {(j["id"], j["hypothesis"]) for j in read_jsonl(JUDGEMENTS_FILE)}
    todo = {}
    for hyps in load_systems().values():
        for sid, hyp in hyps.items():
            if (sid, hyp) not in judged:
                todo.setdefault(sid, set()).add(hyp)
    rng = random.Random(args.seed)
    blind = []
    for s in sample:
        hyps = sorted(todo.get(s["id"], ()))
        rng.shuffle(hyps)
        if hyps:
            blind.append({"id": s["id"], "source": s["source"], "references": s["references"], "hypotheses": hyps})
    write_jsonl(BLIND_FILE, blind)
    print(f"{sum(len(b['hypotheses']) for b in blind)} hypotheses of {len(blind)} sentences to judge -> {BLIND_FILE}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
