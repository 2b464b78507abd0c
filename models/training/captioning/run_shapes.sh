#!/bin/sh
# Heavy steps of the shapes recipe, as one lock-holding job:
#   nohup flock /tmp/attnlens-train.lock sh models/training/captioning/run_shapes.sh > models/training/captioning/runs/run_shapes.log 2>&1 &
# Optional guard for a session with a deadline: NOT_AFTER=HHMM (UTC) makes the job exit at once if it only gets the
# lock after that time. No `set -e`: every step logs its own error.
cd "$(dirname "$0")/../../.."
R=models/training/captioning
T=${THREADS:-1}
LAM=${LAM:-0.01}
now=$(date -u +%H%M)
if [ -n "$NOT_AFTER" ] && [ "$now" -gt "$NOT_AFTER" ]; then echo "got the lock at $now, after $NOT_AFTER: not starting"; exit 0; fi
date -u
/usr/bin/python3 $R/make_shapes.py --threads $T --train 2000 --dev 100 --test 300 --max-minutes ${SHAPES_MINUTES:-8}
date -u
/usr/bin/python3 $R/train.py --task shapes --threads $T --run-dir $R/runs/shapes --epochs 15 --max-minutes ${TRAIN_MINUTES:-4} \
    --batch 32 --lr 1e-3 --lam $LAM --dropout 0.1 --min-count 1 --max-len 20 --proj-dim 256 --embed-dim 64 \
    --hidden-dim 256 --att-dim 128
date -u
/usr/bin/python3 $R/eval_shapes.py --threads $T --checkpoint $R/runs/shapes/best.pt --split dev --out $R/runs/shapes/dev_eval.json
/usr/bin/python3 $R/export.py --threads $T --task shapes --checkpoint $R/runs/shapes/best.pt --out models/shapes
/usr/bin/python3 $R/eval_shapes.py --threads $T --bundle models/shapes --cached --split test --beam 1 3 --out $R/runs/shapes/test_eval.json
date -u
