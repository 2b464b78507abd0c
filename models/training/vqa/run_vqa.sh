#!/bin/sh
# The heavy steps of the VQA recipe as one lock-holding job (settings used for the shipped bundles):
#   nohup flock /tmp/attnlens-train.lock sh models/training/vqa/run_vqa.sh > models/training/vqa/runs/run_vqa.log 2>&1 &
# 1. render the shapes scenes and cache their MobileNetV2 grids + cell colours (../captioning/make_shapes.py, resumable)
# 2. train both variants (train.py, checkpointed every epoch; rerun to resume)
set -e
HERE=$(dirname "$0")
mkdir -p "$HERE/runs"
/usr/bin/python3 "$HERE/../captioning/make_shapes.py" --cache-dir "$HERE/cache" --train 3000 --dev 300 --test 1 \
    --threads 2 --max-minutes 40
/usr/bin/python3 "$HERE/train.py" --variant coattn --max-minutes 12 --resume
/usr/bin/python3 "$HERE/train.py" --variant aoa --max-minutes 12 --resume
