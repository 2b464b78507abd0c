#!/bin/sh
# The retrain of flickr8k-mobilenet against its language prior (README "Retraining against the language prior"):
# the recipe of the bundle of 2026-11-29 (P352b) continued from that bundle (run_setup.sh) with the image-contrast
# loss (finetune.py --contrast), as one resumable job.
# Start it, and resume it after any stop (the same command; it continues from RUN/last.pt, written every 10 minutes):
#   setsid nohup sh models/training/captioning/run_contrast.sh > /dev/null 2>&1 &
# Log: RUN/train.log (appended); per-epoch dev figures: RUN/history.json; epoch weights: RUN/epNN.pt.
# RUN defaults to /work/runs/captioning/P352con (outside the git worktrees, so it outlives them); DATA holds the
# unpacked 160px Flickr8k photos (made here from ../shared on the first start). Runs under the team lock, niced,
# one torch thread.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
SHARED=${SHARED:-$REPO/../shared}
RUN=${RUN:-/work/runs/captioning/P352con}
DATA=${DATA:-$(dirname "$RUN")/flickr8k-data}
mkdir -p "$RUN"
exec >> "$RUN/train.log" 2>&1
echo "=== $(date -u '+%Y-%m-%d %H:%M:%S UTC') run_contrast.sh from $REPO ($(git -C "$REPO" rev-parse --short HEAD))"
INIT=$RUN/init
. "$HERE/run_setup.sh"  # photos into DATA, the warm start into INIT, the allocator
exec nice -n 10 flock /tmp/attnlens-train.lock /usr/bin/python3 "$HERE/finetune.py" --data "$DATA" \
    --ground-dir "$SHARED/ground" --out "$RUN" --init-bundle "$INIT/flickr8k-mobilenet" \
    --context output --input-size 352 --cache-below 14 --train-from 14 --cell-position --init-state const \
    --score-smooth 3 --entropy 0.02 --occlude 0.5 --occlude-max 0.5 --occlude-pixels \
    --contrast 0.5 --contrast-margin 1.0 \
    --epochs 6 --max-minutes 100000 --batch-images 32 --lr 2e-4 --enc-lr 3e-5 --seed 3 \
    --threads 1 --checkpoint-minutes 10 --eval-start --resume
