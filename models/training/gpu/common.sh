# sourced by check.sh and main.sh on the GPU machine, from the repository root; $OUT is the folder the results go to
set -u
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2
ROOT=$PWD
G=$ROOT/.gpu
T=$ROOT/models/training/translation
C=$T/cache/general-bpe10000
mkdir -p $C $T/runs
gunzip -c $G/tr/encoded.json.gz > $C/encoded.json
gunzip -c $G/tr/align-labels.json.gz > $C/align-labels.json
cp $G/tr/joint.* $G/tr/tatoeba_dev.* $C/
chmod +x $G/attnlens-cli
TR="--model transformer --corpus general --merges 10000 --threads 2 --layers 4 --d-ff 1024 --max-len 80 --val-bleu-from 1 \
 --align-labels $C/align-labels.json --align-weight 0.3 --align-layer 1 --align-head 0 \
 --drop-final-punct 0.25 --swap-numbers 0.5 --device cuda --bf16 --keep-epochs 4 \
 --cli $G/attnlens-cli --data-dir $G/data/multi30k --max-tokens 25000"
