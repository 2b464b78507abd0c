#!/bin/sh
# Heavy steps of the shapes recipe (the settings of the shipped models/shapes; its MODEL_CARD.md has the timings):
#   nohup flock /tmp/attnlens-train.lock sh models/training/captioning/run_shapes.sh > models/training/captioning/runs/run_shapes.log 2>&1 &
# Optional guard for a job with a deadline: NOT_AFTER=HHMM (UTC) makes the job exit at once if it only gets the
# lock after that time. No `set -e`: every step logs its own error. Every step resumes / is cheap to repeat.
cd "$(dirname "$0")/../../.."
R=models/training/captioning
T=${THREADS:-1}
RUN=${RUN:-$R/runs/shapes}
now=$(date -u +%H%M)
if [ -n "$NOT_AFTER" ] && [ "$now" -gt "$NOT_AFTER" ]; then echo "got the lock at $now, after $NOT_AFTER: not starting"; exit 0; fi
date -u
# scenes + MobileNetV2 grid features + per-cell colours (resumable; re-run until it prints "all done")
/usr/bin/python3 $R/make_shapes.py --threads $T --train ${TRAIN_SCENES:-12000} --dev 300 --test 500 --max-minutes ${SHAPES_MINUTES:-60}
date -u
# cell colour + position channels, learned-constant h_0/c_0, attention supervision on the training boxes
/usr/bin/python3 $R/train.py --task shapes --threads $T --run-dir $RUN --epochs ${EPOCHS:-15} --max-minutes ${TRAIN_MINUTES:-30} \
    --batch 32 --lr 1e-3 --lam 0.01 --dropout 0.3 --min-count 1 --max-len 20 --proj-dim 256 --embed-dim 64 \
    --hidden-dim 256 --att-dim 128 --init-state const --att-sup 1.0 --cell-colour --cell-position
date -u
/usr/bin/python3 $R/eval_shapes.py --threads $T --checkpoint $RUN/best.pt --split dev --beam 1 3 --out $RUN/dev_eval.json
date -u
