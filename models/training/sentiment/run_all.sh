#!/bin/sh
# The whole SST-2 recipe in one lock-holding job, from the repo root:
#   nohup flock /tmp/attnlens-train.lock sh models/training/sentiment/run_all.sh > models/training/sentiment/runs/run_all.log 2>&1 &
# Budgets (minutes of training, excluding dev evaluations) can be overridden: SELFATTN_MIN=10 RELATION_MIN=6.
# THREADS=1 by default: on this shared, oversubscribed 2-core machine one torch thread ran a training step with
# ~25x less CPU than two (OpenMP threads spin waiting for a descheduled partner); see README.md.
# CLI (default build/attnlens-cli): when it exists, the engine's dev accuracy of sst2-selfattn and of its int8 variant
# (scripts/quantize.mjs, what the npm package ships) is measured too and goes into the card.
# OUT (bundles), RUNS (checkpoints) and REPORTS (json reports) default to the real locations; a smoke test
# points them elsewhere.
set -eu
D=models/training/sentiment
SELFATTN_MIN=${SELFATTN_MIN:-20}
RELATION_MIN=${RELATION_MIN:-6}
THREADS=${THREADS:-1}
OUT=${OUT:-models}
RUNS=${RUNS:-$D/runs}
REPORTS=${REPORTS:-$D}
PY=/usr/bin/python3
CLI=${CLI:-build/attnlens-cli}
mkdir -p $D/cache "$RUNS" "$REPORTS"
date -u +"start %FT%TZ"
[ -f $D/cache/vec_ppmi200.npy ] || $PY $D/word_vectors.py --out $D/cache/vec_ppmi200.npy
RESUME_S=""; [ -f "$RUNS/selfattn_adv/last.pt" ] && RESUME_S="--resume"
$PY $D/train.py --model selfattn --vectors $D/cache/vec_ppmi200.npy --max-minutes "$SELFATTN_MIN" --epochs 20 \
    --schedule cosine-time --warmup-steps 200 --ema 0.999 --sparse-embedding --threads "$THREADS" --seed 1 --adv-eps 1 \
    --run "$RUNS/selfattn_adv" $RESUME_S
date -u +"selfattn done %FT%TZ"
RESUME_R=""; [ -f "$RUNS/relation_ppmi/last.pt" ] && RESUME_R="--resume"
$PY $D/train.py --model relation --vectors $D/cache/vec_ppmi200.npy --threads "$THREADS" \
    --max-minutes "$RELATION_MIN" --run "$RUNS/relation_ppmi" $RESUME_R
date -u +"relation done %FT%TZ"
$PY $D/export.py --checkpoint "$RUNS/selfattn_adv/final.pt" --out "$OUT/sst2-selfattn" --report-dir "$REPORTS"
$PY $D/export.py --checkpoint "$RUNS/relation_ppmi/best.pt" --out "$OUT/sst2-relation" --report-dir "$REPORTS"
$PY $D/evaluate.py --bundle "$OUT/sst2-selfattn" > "$REPORTS/eval_sst2-selfattn.json"
$PY $D/evaluate.py --bundle "$OUT/sst2-relation" > "$REPORTS/eval_sst2-relation.json"
if [ -x "$CLI" ]; then
    Q=$(mktemp -d)
    node scripts/quantize.mjs "$OUT/sst2-selfattn" "$Q/sst2-selfattn"
    $PY $D/evaluate_engine.py --cli "$CLI" --bundle "$OUT/sst2-selfattn" --json "$REPORTS/eval_engine_sst2-selfattn.json"
    $PY $D/evaluate_engine.py --cli "$CLI" --bundle "$Q/sst2-selfattn" --json "$REPORTS/eval_engine_sst2-selfattn_int8.json"
    rm -r "$Q"
fi
$PY $D/make_model_card.py --models-dir "$OUT" --runs-dir "$RUNS" --report-dir "$REPORTS"
date -u +"end %FT%TZ"
