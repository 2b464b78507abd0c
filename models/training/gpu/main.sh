# Then, about 9 min: four translator runs side by side (warm start at peak 7e-4 with dropout 0.1 and 0.2, at peak 3e-4, and from scratch) and their shortlist (pick.py)
. .gpu/common.sh
mkdir -p $OUT/tr; cd $T
INIT="--init-from $G/init/de-en-general"
timeout 460 python3 train.py $TR --run gpuA --epochs 40 --max-minutes 6.7 $INIT --lr 7e-4 --warmup 400 --dropout 0.1 > runs/gpuA.log 2>&1 &
timeout 460 python3 train.py $TR --run gpuB --epochs 40 --max-minutes 6.7 $INIT --lr 7e-4 --warmup 400 --dropout 0.2 > runs/gpuB.log 2>&1 &
timeout 460 python3 train.py $TR --run gpuC --epochs 40 --max-minutes 6.7 --lr 1e-3 --warmup 800 --dropout 0.1 > runs/gpuC.log 2>&1 &
timeout 460 python3 train.py $TR --run gpuD --epochs 40 --max-minutes 6.7 $INIT --lr 3e-4 --warmup 400 --dropout 0.1 > runs/gpuD.log 2>&1 &
wait
mkdir -p $OUT/tr; cd $T
timeout 130 python3 pick.py --runs runs/gpuA runs/gpuB runs/gpuC runs/gpuD --average 1 4 --top 2 --out-dir $OUT/tr --device cuda --cli $G/attnlens-cli --data-dir $G/data/multi30k > runs/pick.log 2>&1
ls $OUT/tr/*.pt >/dev/null 2>&1 || python3 -c "
import glob, torch
for r in ('gpuA', 'gpuB', 'gpuC', 'gpuD'):
    ps = sorted(glob.glob(f'runs/{r}/epoch*.pt'), key=lambda p: int(p.split('epoch')[-1][:-3]))
    if ps:
        ck = torch.load(ps[-1], map_location='cpu'); ck['model'] = {k: v.half() for k, v in ck['model'].items()}
        torch.save(ck, f'$OUT/tr/{r}-last.pt'); print('fallback: wrote', r, ps[-1])
"
for f in runs/gpuA.log runs/gpuB.log runs/gpuC.log runs/gpuD.log runs/pick.log; do echo "== $f"; grep -v '^epoch .* batch' $f | tail -60; done > $OUT/logs.txt 2>&1
cat $OUT/logs.txt | grep -v '^{"epoch"' | tail -40
