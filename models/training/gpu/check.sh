# First, about 45 s: the environment, one smoke epoch of the translator on cuda in bf16, the shortlist script
. .gpu/common.sh
nvidia-smi -L; python3 -c 'import torch, numpy; print(torch.__version__, numpy.__version__, torch.cuda.is_available())'
echo 'Ich liebe dich.' | $G/attnlens-cli bpe encode --model $G/tr/joint --ids || echo CLI-FAILED
cd $T
timeout 60 python3 train.py $TR --run chk --epochs 1 --smoke --init-from $G/init/de-en-general --lr 7e-4 --warmup 400 2>&1 | tail -3
timeout 40 python3 pick.py --runs runs/chk --average 1 --top 0 --out-dir $OUT/pick --device cuda --cli $G/attnlens-cli --data-dir $G/data/multi30k 2>&1 | tail -2
nvidia-smi --query-gpu=memory.used --format=csv
