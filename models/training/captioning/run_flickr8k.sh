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
# the shipped models/flickr8k-mobilenet: lambda 0.01, 5 epochs (run dir runs/flickr8k-lam001); the first try was
# lambda 1.0 with EPOCHS=8 TRAIN_MINUTES=55 into runs/flickr8k
RUN=${RUN:-$R/runs/flickr8k-lam001}
/usr/bin/python3 $R/train.py --task flickr8k --threads $T --run-dir $RUN --epochs ${EPOCHS:-5} --max-minutes ${TRAIN_MINUTES:-75} \
    --batch 64 --lr 1e-3 --lam ${LAM:-0.01} --dropout 0.3 --min-count 5 --max-len 25 --proj-dim 256 --embed-dim 256 \
    --hidden-dim 384 --att-dim 256
date -u
/usr/bin/python3 $R/evaluate.py --threads $T --checkpoint $RUN/best.pt --split dev --beam 1 3 5
date -u
