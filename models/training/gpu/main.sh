# Then, about 9 min: three translator runs side by side (warm start dropout 0.1 and 0.2, from scratch), their shortlist (pick.py), and the SST-2 sweep (gpu_sweep.py) beside them
. .gpu/common.sh
mkdir -p $OUT/tr; cd $T
INIT="--init-from $G/init/de-en-general"
timeout 460 python3 train.py $TR --run gpuA --epochs 40 --max-minutes 6.7 $INIT --lr 7e-4 --warmup 400 --dropout 0.1 > runs/gpuA.log 2>&1 &
timeout 460 python3 train.py $TR --run gpuB --epochs 40 --max-minutes 6.7 $INIT --lr 7e-4 --warmup 400 --dropout 0.2 > runs/gpuB.log 2>&1 &
timeout 460 python3 train.py $TR --run gpuC --epochs 40 --max-minutes 6.7 --lr 1e-3 --warmup 800 --dropout 0.1 > runs/gpuC.log 2>&1 &
cd $ROOT
OMP_NUM_THREADS=1 timeout 420 python3 models/training/sentiment/gpu_sweep.py --data-dir .gpu --vectors .gpu/sst2/vec_ppmi200.npy --runs-dir /tmp/sst2runs --out $OUT/sst2 --minutes 6.5 --device cuda > $T/runs/sst2.log 2>&1 &
wait
mkdir -p $OUT/tr; cd $T
timeout 130 python3 pick.py --runs runs/gpuA runs/gpuB runs/gpuC --average 1 4 --top 2 --out-dir $OUT/tr --device cuda --cli $G/attnlens-cli --data-dir $G/data/multi30k > runs/pick.log 2>&1
ls $OUT/tr/*.pt >/dev/null 2>&1 || python3 -c "
import glob, torch
for r in ('gpuA', 'gpuB', 'gpuC'):
    ps = sorted(glob.glob(f'runs/{r}/epoch*.pt'), key=lambda p: int(p.split('epoch')[-1][:-3]))
    if ps:
        ck = torch.load(ps[-1], map_location='cpu'); ck['model'] = {k: v.half() for k, v in ck['model'].items()}
        torch.save(ck, f'$OUT/tr/{r}-last.pt'); print('fallback: wrote', r, ps[-1])
"
for f in runs/gpuA.log runs/gpuB.log runs/gpuC.log runs/pick.log runs/sst2.log; do echo "== $f"; grep -v '^epoch .* batch' $f | tail -60; done > $OUT/logs.txt 2>&1
cat $OUT/logs.txt | grep -v '^{"epoch"' | tail -40
