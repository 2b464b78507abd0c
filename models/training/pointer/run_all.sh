#!/bin/sh
# Train, export and evaluate the pointer-sort model in one hold of the training lock:
#   flock /tmp/attnlens-train.lock sh models/training/pointer/run_all.sh
# Re-running resumes the training from runs/<RUN>/last.pt. The bundle goes to OUT (default runs/<RUN>/bundle, so a
# late run never replaces the shipped models/pointer-sort; copy it there, then `npm run digests -- pointer-sort`).
# With CLI=path/to/attnlens-cli the engine's own curve (evaluate_engine.py) is measured too.
set -e
R=$(dirname "$0")
RUN=${RUN:-main}
OUT=${OUT:-$R/runs/$RUN/bundle}
date -u
/usr/bin/python3 "$R/train.py" --run "$R/runs/$RUN" --steps "${STEPS:-8000}" --max-minutes "${TRAIN_MIN:-25}" --threads 1
date -u
/usr/bin/python3 "$R/export.py" --ckpt "$R/runs/$RUN/last.pt" --out "$OUT"
/usr/bin/python3 "$R/evaluate.py" --bundle "$OUT" --out "$R/runs/$RUN/eval_torch.json"
if [ -n "${CLI:-}" ] && [ -x "$CLI" ]; then
  /usr/bin/python3 "$R/evaluate_engine.py" --bundle "$OUT" --cli "$CLI" --out "$R/runs/$RUN/eval_engine.json" --markdown
fi
date -u
