#!/bin/sh
# Heavy steps of the flickr8k-mobilenet recipe, as one lock-holding job (features are resumed where they stopped):
#   nohup flock /tmp/attnlens-train.lock sh models/training/captioning/run_flickr8k.sh > models/training/captioning/runs/run_flickr8k.log 2>&1 &
# No `set -e`: every step logs its own error.
cd "$(dirname "$0")/../../.."
R=models/training/captioning
T=${THREADS:-1}
date -u
/usr/bin/python3 $R/extract_features.py --threads $T --max-minutes 20
date -u
/usr/bin/python3 $R/train.py --task flickr8k --threads $T --epochs ${EPOCHS:-4} --max-minutes ${TRAIN_MINUTES:-40} --batch 64 \
    --lr 1e-3 --lam 1.0 --dropout 0.3 --min-count 5 --max-len 25 --proj-dim 256 --embed-dim 256 --hidden-dim 384 \
    --att-dim 256
date -u
/usr/bin/python3 $R/evaluate.py --threads $T --checkpoint $R/runs/flickr8k/best.pt --split dev --beam 1 3 5
date -u
