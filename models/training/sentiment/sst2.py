"""SST-2's TSV files without torch (evaluate_engine.py runs on the engine alone; common.py builds on it)."""


def read_sst2_sentences(path):
    """Rows of `sentence<TAB>label` after the header line `sentence<TAB>label` -> list of (sentence, label), the
    sentence stripped of surrounding whitespace."""
    rows = []
    with open(path, encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
        if header != ["sentence", "label"]:
            raise ValueError(f"{path}: unexpected header {header}")
        for line in f:
            sentence, label = line.rstrip("\n").split("\t")
            rows.append((sentence.strip(), int(label)))
    return rows
