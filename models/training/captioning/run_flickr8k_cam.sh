#!/bin/sh
# A flickr8k-mobilenet retrained with weak attention supervision (no boxes), then measured through
# the engine next to the shipped bundle -- one lock-holding job (features are resumed where they stopped):
#   nohup flock /tmp/attnlens-train.lock sh models/training/captioning/run_flickr8k_cam.sh > models/training/captioning/runs/run_cam.log 2>&1 &
# 1. concepts.py: word detectors over the 7x7 grid learned from the training captions (multiple-instance learning),
#    whose cell scores are the words' class activation maps; their own grounding on the dev boxes is printed.
# 2. train.py --cam-sup: the shipped recipe (lambda 0.01, 256/384/256) plus the cross entropy of each detector word's
#    attention towards softmax(CAM / T). The decoder equations are unchanged, so the engine runs it as it is.
# 3. export to a scratch bundle (runs/cam/bundle/), then the engine's dev grounding (ground.py), dev BLEU
#    (evaluate_engine.py) and the deletion test on dev (first 300 photos), for it and the shipped bundle.
# No `set -e`: every step logs its own error. CLI: an attnlens-cli built from this tree (CLI=...).
cd "$(dirname "$0")/../../.."
R=models/training/captioning
T=${THREADS:-1}
CLI=${CLI:-build/attnlens-cli}
RUN=${RUN:-$R/runs/cam}
mkdir -p $RUN
date -u
/usr/bin/python3 $R/extract_features.py --threads 2 --max-minutes 40 --splits train dev
date -u
[ -f $R/runs/concepts.pt ] || /usr/bin/python3 $R/concepts.py --threads 2 --out $R/runs/concepts.pt \
    --ground-out $R/runs/concepts_dev_ground.jsonl
date -u
/usr/bin/python3 $R/train.py --task flickr8k --threads $T --run-dir $RUN --epochs ${EPOCHS:-3} --max-minutes ${TRAIN_MINUTES:-40} \
    --batch 64 --lr 1e-3 --lam ${LAM:-0.01} --dropout 0.3 --min-count 5 --max-len 25 --proj-dim 256 --embed-dim 256 \
    --hidden-dim 384 --att-dim 256 --cam-sup ${CAM_SUP:-1.0} --cam-temp ${CAM_TEMP:-1.0} --cam-file $R/runs/concepts.pt --resume
date -u
B=$RUN/bundle/flickr8k-mobilenet
mkdir -p $RUN/bundle
[ -e $RUN/bundle/mobilenet-v2-imagenet ] || ln -s "$(pwd)/models/mobilenet-v2-imagenet" $RUN/bundle/mobilenet-v2-imagenet
/usr/bin/python3 $R/export.py --task flickr8k --threads 2 --checkpoint $RUN/best.pt --out $B --num-beams 5 --length-norm 1.0
date -u
/usr/bin/python3 $R/ground.py --bundle $B --cli $CLI --out-dir $RUN/ground
/usr/bin/python3 $R/evaluate_engine.py --bundle $B --cli $CLI --split dev --beams 1 5 --out $RUN/dev_engine.json
/usr/bin/python3 $R/deletion.py --bundle $B --cli $CLI --split dev --limit 300 --out $RUN/deletion_dev300.json
/usr/bin/python3 $R/deletion.py --bundle models/flickr8k-mobilenet --cli $CLI --split dev --limit 300 --out $R/runs/deletion_old_dev300.json
date -u
# 4. the held-out figures of this candidate (Flickr8k test; the held-out box set is not in this repository):
#    BLEU with the bundle's default decoding, and the deletion test over all 1,000 test photos
/usr/bin/python3 $R/evaluate_engine.py --bundle $B --cli $CLI --split test --beams 5 --out $RUN/test_engine.json
/usr/bin/python3 $R/deletion.py --bundle $B --cli $CLI --split test --out $RUN/deletion_test.json
date -u
