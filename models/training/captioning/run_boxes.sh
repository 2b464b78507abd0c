#!/bin/sh
# flickr8k-mobilenet continued with box supervision (README "Box supervision on training photos"): the recipe of the
# bundle of 2026-11-29 (P352b), from that bundle (run_setup.sh), plus finetune.py --box-sup on the hand-drawn boxes
# of ground_train/train.jsonl (Flickr8k training photos only), as one resumable job.
# Start it, and resume it after any stop (the same command; it continues from RUN/last.pt, written every 10 minutes):
#   setsid nohup sh models/training/captioning/run_boxes.sh > /dev/null 2>&1 &
# Log: RUN/train.log (appended); per-epoch dev figures: RUN/history.json; epoch weights: RUN/epNN.pt.
# RUN defaults to /work/runs/captioning/P352box; DATA holds the unpacked 160px Flickr8k photos (made here from
# ../shared on the first start). EPOCHS=0 only builds the trunk cache. Runs under the team lock, two torch threads.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
SHARED=${SHARED:-$REPO/../shared}
RUN=${RUN:-/work/runs/captioning/P352box}
DATA=${DATA:-$(dirname "$RUN")/flickr8k-data}
EPOCHS=${EPOCHS:-2}
INIT=${INIT:-$RUN/init}  # another run's init/ (and a link to its cache_14_352.pt) reuses that run's trunk cache
mkdir -p "$RUN"
exec >> "$RUN/train.log" 2>&1
echo "=== $(date -u '+%Y-%m-%d %H:%M:%S UTC') run_boxes.sh from $REPO ($(git -C "$REPO" rev-parse --short HEAD)), $EPOCHS epochs"
. "$HERE/run_setup.sh"  # photos into DATA, the warm start into INIT, the allocator
EVAL=--eval-start
[ "$EPOCHS" = 0 ] && EVAL=
exec flock /tmp/attnlens-train.lock /usr/bin/python3 "$HERE/finetune.py" --data "$DATA" \
    --ground-dir "$SHARED/ground" --out "$RUN" --init-bundle "$INIT/flickr8k-mobilenet" \
    --context output --input-size 352 --cache-below 14 --train-from 14 --cell-position --init-state const \
    --score-smooth 3 --entropy 0.02 --occlude 0.5 --occlude-max 0.5 --occlude-pixels \
    --box-sup "${BOX_SUP:-1.0}" --box-file "$HERE/ground_train/train.jsonl" --box-batch 8 \
    --epochs "$EPOCHS" --max-minutes 100000 --batch-images 32 --lr 1e-4 --enc-lr 1.5e-5 --seed "${SEED:-4}" \
    --threads 2 --checkpoint-minutes 10 $EVAL --resume
