#!/bin/sh
# Fill .gpu/ (git-ignored) with what check.sh and main.sh read on a GPU machine that has the repository's
# models/training/ but not ../shared or the build: the translation corpus cache (gzipped), the warm-start bundle,
# Multi30k train/val and a native attnlens-cli (x86-64, glibc >= 2.34). About 40 MB.
# Run from the repository root after `node scripts/build.mjs native` and
# `(cd models/training/translation && python3 general.py && python3 aligner.py labels)`.
set -eu
T=models/training/translation/cache/general-bpe10000
S=../shared/data
mkdir -p .gpu/tr .gpu/data/multi30k .gpu/init/de-en-general
gzip -c $T/encoded.json > .gpu/tr/encoded.json.gz
gzip -c $T/align-labels.json > .gpu/tr/align-labels.json.gz
cp $T/joint.vocab $T/joint.merges $T/tatoeba_dev.de $T/tatoeba_dev.en .gpu/tr/
cp $S/multi30k/val.de.gz $S/multi30k/val.en.gz $S/multi30k/train.de.gz $S/multi30k/train.en.gz .gpu/data/multi30k/
cp models/de-en-general/config.json models/de-en-general/weights.safetensors models/de-en-general/bpe.vocab \
   models/de-en-general/bpe.merges models/de-en-general/manifest.json .gpu/init/de-en-general/
cp build/attnlens-cli .gpu/
cp models/training/gpu/common.sh models/training/gpu/check.sh models/training/gpu/main.sh .gpu/
du -sh .gpu
