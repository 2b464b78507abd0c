#!/bin/sh
# Resume check of finetune.py (about a minute on one core; needs the unpacked 160px Flickr8k photos, DATA=...):
# a self-test run stopped after step 6 (mid-epoch, --stop-after-steps) and resumed with --resume must end with the
# same weights, bit for bit, as the same run done in one go. It exercises the contrast loss, occlusion and dropout,
# so the data order, the occlusion generator and torch's random state must all be restored.
#   DATA=/work/runs/captioning/flickr8k-data sh models/training/captioning/test_resume.sh
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=${DATA:-/work/runs/captioning/flickr8k-data}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
A="--self-test --data $DATA --context output --init-state const --cell-position --contrast 1.0 --occlude 0.5 --threads 1"
/usr/bin/python3 "$HERE/finetune.py" $A --out "$OUT/whole" > "$OUT/whole.log" 2>&1 || { cat "$OUT/whole.log"; exit 1; }
/usr/bin/python3 "$HERE/finetune.py" $A --out "$OUT/parts" --stop-after-steps 6 > "$OUT/parts.log" 2>&1 || { cat "$OUT/parts.log"; exit 1; }
grep -q "stopped after step 6" "$OUT/parts.log" || { echo "FAIL: the first part did not stop after step 6"; exit 1; }
/usr/bin/python3 "$HERE/finetune.py" $A --out "$OUT/parts" --resume >> "$OUT/parts.log" 2>&1 || { cat "$OUT/parts.log"; exit 1; }
grep -q "resumed after epoch 1, batch position 8 (step 6)" "$OUT/parts.log" || { echo "FAIL: did not resume mid-epoch"; exit 1; }
/usr/bin/python3 - "$OUT/whole/ep02.pt" "$OUT/parts/ep02.pt" <<'PY'
import sys
import torch
a, b = (torch.load(p)["weights"] for p in sys.argv[1:3])
diff = max(float((a[k].float() - b[k].float()).abs().max()) for k in a)
print("largest weight difference, one go against stopped and resumed: %g" % diff)
sys.exit(0 if diff == 0.0 and a.keys() == b.keys() else 1)
PY
echo "resume check passed"
