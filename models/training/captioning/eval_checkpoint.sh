#!/bin/sh
# Dev figures of one finetune.py epoch through the engine: the figures a retrain is selected on (README,
# "Retraining against the language prior"); no test photo, no held-out box and no everyday photo is read here.
#   sh models/training/captioning/eval_checkpoint.sh /work/runs/captioning/P352con 3
# Writes RUN/epNN/flickr8k-mobilenet(+-encoder)/ (float32 bundles, the shipped default decoding), RUN/epNN/dev.json
# (evaluate_engine.py --out), RUN/epNN/ground/ (ground.py --out-dir) and prints dev BLEU-1..4, the dev-box grounding
# and prior_words.py's figures. CLI: the native attnlens-cli of this tree (CLI=... to change).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
CLI=${CLI:-$REPO/build/attnlens-cli}
RUN=$1
EP=$(printf %02d "$2")
D=$RUN/ep$EP
B=$D/flickr8k-mobilenet
if [ ! -f "$B/config.json" ]; then
    /usr/bin/python3 "$HERE/export_finetuned.py" --checkpoint "$RUN/ep$EP.pt" --out "$B" \
        --encoder-out "$D/flickr8k-mobilenet-encoder" --num-beams 10 --length-norm 0.7
fi
/usr/bin/python3 "$HERE/evaluate_engine.py" --bundle "$B" --cli "$CLI" --split dev --beams 10 --out "$D/dev.json"
/usr/bin/python3 "$HERE/ground.py" --bundle "$B" --cli "$CLI" --out-dir "$D/ground"
/usr/bin/python3 "$HERE/prior_words.py" "$D/dev.json"
