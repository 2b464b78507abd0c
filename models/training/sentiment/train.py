"""Train an SST-2 sentiment model (selfattn: BiLSTM + Lin 2017 structured self-attention; relation: seed 003
relation-network self-attention). Selection on the GLUE dev set: the best dev checkpoint is kept.

Run (always under the team's training lock, two threads):
  nohup flock /tmp/attnlens-train.lock /usr/bin/python3 models/training/sentiment/train.py \
      --model selfattn --vectors models/training/sentiment/cache/vec_ppmi200.npy --max-minutes 14 \
      --run models/training/sentiment/runs/selfattn > LOG 2>&1 &
A run directory holds last.pt (resume with --resume), best.pt (best dev accuracy), final.pt (the weights at the
end of the run: its --epochs done or its budget spent) and log.jsonl.

Regularisers and averaging (all off by default, so older commands train as before):
  --schedule cosine   learning rate lr·½(1 + cos(π·step/total)) after --warmup-steps of linear warm-up, total =
                      --epochs × batches per epoch: a function of the step only, so --resume continues it exactly
  --schedule cosine-time   the same with progress = training seconds / (--max-minutes · 60): the rate reaches 0
                      when the budget ends however busy the machine is (the stopping step then depends on the
                      machine's load, as any budgeted run's does); the seconds are in last.pt, so --resume
                      continues it
  --ema d             exponential moving average of the weights, θ̄ ← d_t θ̄ + (1 − d_t) θ with
                      d_t = min(d, (1 + t)/(10 + t)); dev evaluations, best.pt and final.pt use θ̄ (the model
                      that is exported), last.pt keeps both
  --word-dropout p    each training token (not padding) becomes <unk> with probability p
  --weight-decay w    decoupled weight decay (AdamW) on every weight except the embedding
  --sparse-embedding  the embedding gets sparse gradients (only the rows of the batch's words) and its own lazy
                      Adam (torch.optim.SparseAdam: moments of absent rows do not move), gradients clipped jointly
                      as before; ~1.5x fewer CPU seconds per step (the dense 14k x 200 update dominates otherwise)

Knowledge distillation (Hinton et al. 2015, "Distilling the Knowledge in a Neural Network", arXiv:1503.02531):
  --distill CACHE     teacher logits over the train phrases from distill_teachers.py; the classification loss becomes
                      α·CE(gold) + (1 − α)·T²·KL(p ‖ softmax(student logits / T)), p = mean over the teachers of
                      softmax(teacher logits / T) (an ensemble's soft labels); the T² keeps the soft term's gradients
                      on the scale of the hard one's as T changes
  --alpha α           weight of the gold labels' cross-entropy (default 0.5)
  --temperature T     softening temperature (default 2)

Adversarial training on the word embeddings (Miyato, Dai and Goodfellow 2017, "Adversarial Training Methods for
Semi-Supervised Text Classification", ICLR, arXiv:1605.07725), off by default:
  --adv-eps ε         each step adds the loss at the perturbed embedded sequence, L(x) + L(x + r_adv), with
                      r_adv = ε·g/‖g‖₂ per sentence, g = ∇ₓ L (the step's loss: cross-entropy, or the distillation
                      loss, plus the attention penalty) from the same backward pass as the parameters' gradients,
                      treated as a constant (no gradient through r). The paper normalises the embeddings,
                      v̄ = (v − E[v]) / √Var[v] with the train-word frequencies as weights, and perturbs v̄; the
                      shipped model keeps its raw embedding (the engine reads it unchanged), so ε is measured in
                      that normalised space instead: with s = √Var[v] per dimension (from the current embedding
                      and the train-word frequencies, refreshed every 100 steps), the gradient w.r.t. x̄ = x / s is
                      ĝ = s ⊙ ∇ₓ L, r̄ = ε·ĝ/‖ĝ‖₂ and x moves by s ⊙ r̄: the paper's perturbation of v̄. Padding
                      positions are not perturbed. A step costs two forward and two backward passes.
  --vat-eps ε         virtual adversarial training (same paper): each step also takes a batch of unlabeled
                      sentences (--vat-data: "sst2" train sentences, "tatoeba" English side of tatoeba_deu_eng) and
                      adds KL(p(·|x) ‖ p(·|x + r_vadv)), r_vadv of norm ε found by one power iteration from a random
                      probe of norm --vat-xi, in the same normalised space, with dropout off (vat_backward)

Sizes: --emb-dim, --lstm-hidden, --att-hidden, --hops, --mlp-hidden override the model's defaults (DEFAULTS); the
engine reads every one of them from the bundle's config.json.
--device cuda trains on a GPU (model, batches, weight average and teacher logits there; the batch order, word dropout
and initial weights still come from the CPU generators); every checkpoint is written with CPU tensors, so export.py
reads it on a machine without a GPU. gpu_sweep.py runs many such trainings at once.
"""

import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import distill_teachers  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checkpoints import to_cpu  # noqa: E402  (models/training/)

DEFAULTS = {
    "selfattn": dict(architecture="selfattn-classifier", emb_dim=200, lstm_hidden=150, att_hidden=100, hops=4,
                     mlp_hidden=300),
    "relation": dict(architecture="relation-classifier", emb_dim=200, rel_hidden=128, att_hidden=64,
                     mlp_hidden=128),
}


def lr_factor(step, warmup_steps, schedule, progress):
    """Learning-rate multiplier at optimizer step `step` (0-based): linear warm-up over `warmup_steps`, then 1
    (constant) or ½(1 + cos(π·progress)) (cosine: progress runs from 0 to 1 over the run, see main)."""
    if step < warmup_steps:
        return (step + 1) / warmup_steps
    if schedule != "constant":
        return 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))
    return 1.0


@torch.no_grad()
def clip_gradients(params, max_norm):
    """torch.nn.utils.clip_grad_norm_ (the same total 2-norm and factor max_norm / (norm + 1e-6) when it is below 1),
    also for a sparse gradient (a sparse embedding's), which is coalesced first so that repeated rows add up."""
    if not any(p.grad is not None and p.grad.is_sparse for p in params):
        return torch.nn.utils.clip_grad_norm_(params, max_norm)
    for p in params:
        if p.grad is not None and p.grad.is_sparse:
            p.grad = p.grad.coalesce()
    grads = [p.grad for p in params if p.grad is not None]
    total = torch.sqrt(sum(((g._values() if g.is_sparse else g).double() ** 2).sum() for g in grads))
    coef = max_norm / (float(total) + 1e-6)
    if coef < 1:
        for p in params:
            if p.grad is not None:
                p.grad = p.grad * coef if p.grad.is_sparse else p.grad.mul_(coef)
    return total


def distill_loss(logits, labels, teacher_probs, alpha, temperature):
    """α·CE(logits, labels) + (1 − α)·T²·KL(teacher_probs ‖ softmax(logits / T)), batch means.
    teacher_probs (B, C): the teachers' soft labels already at temperature T (rows sum to 1)."""
    hard = F.cross_entropy(logits, labels)
    if alpha >= 1:
        return hard
    soft = F.kl_div(F.log_softmax(logits / temperature, dim=-1), teacher_probs, reduction="batchmean")
    return alpha * hard + (1 - alpha) * temperature ** 2 * soft


def load_distill_cache(path, train_rows, temperature):
    """The teachers' soft labels (n_train, 2) at `temperature` from distill_teachers.py's cache, after checking that
    its rows are these train rows."""
    if not os.path.isfile(path):
        raise SystemExit(f"--distill {path}: no such file (write it with distill_teachers.py --out)")
    cache = np.load(path)
    missing = {"train_logits", "teachers", "train_digest"} - set(cache.files)
    if missing:
        raise SystemExit(f"{path}: not a distill_teachers.py cache (lacks {sorted(missing)})")
    digest = distill_teachers.rows_digest(train_rows)
    if str(cache["train_digest"]) != digest:
        raise SystemExit(f"{path}: written for other train data (digest {cache['train_digest']} != {digest})")
    probs = distill_teachers.ensemble_probs(cache["train_logits"], temperature)
    print(f"distilling from {len(cache['teachers'])} teachers: {list(cache['teachers'])}", flush=True)
    return torch.from_numpy(probs.astype(np.float32))


@torch.no_grad()
def embedding_scale(weight, freqs):
    """√Var[v] per dimension (E,) of the embedding rows `weight` (V, E) under the word frequencies `freqs` (V,)
    (summing to 1): Var[v] = Σ_j f_j (v_j − E[v])², E[v] = Σ_j f_j v_j (Miyato et al. 2017, section 2)."""
    mean = freqs @ weight
    var = freqs @ (weight - mean) ** 2
    return var.clamp_min(1e-12).sqrt()


@torch.no_grad()
def adversarial_perturbation(grad, lengths, eps, scale=None):
    """r (B, T, E) = s ⊙ (ε·ĝ/‖ĝ‖₂) per sentence, ĝ = s ⊙ grad over the sentence's T_b real positions (padding
    gets 0): the paper's r_adv in the space x̄ = x / s (s = embedding_scale; None: s = 1). grad (B, T, E) is
    ∇ₓ of the loss at the embedded sequence x; the result carries no gradient."""
    mask = (torch.arange(grad.shape[1], device=grad.device)[None, :] < lengths.to(grad.device)[:, None])
    g = grad * mask[:, :, None].to(grad.dtype)
    if scale is not None:
        g = g * scale
    norm = g.flatten(1).norm(dim=1).clamp_min(1e-12)
    r = eps * g / norm[:, None, None]
    return r * scale if scale is not None else r


def backward_step(model, ids, lengths, objective, adv_eps=0.0, scale=None):
    """Forward and backward of one training step (gradients accumulate into the parameters' .grad).
    objective(logits, att) -> (loss, penalty). adv_eps = 0: the plain step; > 0: L(x) + L(x + r_adv) (see the
    module docstring). Returns (loss at x, penalty at x, loss at x + r_adv or None)."""
    if adv_eps <= 0:
        logits, att = model(ids, lengths)
        loss, pen = objective(logits, att)
        loss.backward()
        return loss, pen, None
    x = model.embedding(ids)
    x.retain_grad()
    logits, att = model(ids, lengths, embedded=x)
    loss, pen = objective(logits, att)
    loss.backward()
    r = adversarial_perturbation(x.grad, lengths, adv_eps, scale)
    logits_adv, att_adv = model(ids, lengths, embedded=model.embedding(ids) + r)
    adv_loss, _ = objective(logits_adv, att_adv)
    adv_loss.backward()
    return loss, pen, adv_loss


def kl_from_logits(p_logits, q_logits):
    """KL(softmax(p_logits) ‖ softmax(q_logits)), mean over the batch."""
    logp = F.log_softmax(p_logits, dim=-1)
    return (logp.exp() * (logp - F.log_softmax(q_logits, dim=-1))).sum(-1).mean()


def vat_backward(model, ids, lengths, eps, xi, scale=None):
    """Virtual adversarial training (Miyato et al. 2017, section 3) on a batch without labels: KL(p(·|x) ‖
    p(·|x + r_vadv)) with p(·|x) a constant, r_vadv = ε·ĝ/‖ĝ‖₂ per sentence in the normalised space, ĝ = ∇ of
    KL(p(·|x) ‖ p(·|x + ξ·d)) at a random unit d (one power iteration), all with dropout off (the KL then measures
    the perturbation alone). Backward of that loss into the parameters' .grad; returns the loss."""
    drops = [m for m in model.modules() if isinstance(m, torch.nn.Dropout) and m.training]
    for m in drops:
        m.eval()
    try:
        x = model.embedding(ids)
        with torch.no_grad():
            clean = model(ids, lengths, embedded=x)[0]
        d = torch.randn_like(x)
        r0 = adversarial_perturbation(d if scale is None else d / scale, lengths, xi, scale).requires_grad_()
        g = torch.autograd.grad(kl_from_logits(clean, model(ids, lengths, embedded=x.detach() + r0)[0]), r0)[0]
        r = adversarial_perturbation(g, lengths, eps, scale)
        loss = kl_from_logits(clean, model(ids, lengths, embedded=x + r)[0])
        loss.backward()
    finally:
        for m in drops:
            m.train()
    return loss


def read_unlabeled(sources, data_dir, train_rows):
    """Token lists without labels for --vat-data: "sst2" (the train sentences) and/or "tatoeba" (the English side of
    tatoeba_deu_eng, each distinct sentence once, tokenized like SST-2)."""
    from word_vectors import tatoeba_english
    out = []
    for src in sources:
        if src == "sst2":
            out += [toks for toks, _ in train_rows]
        elif src == "tatoeba":
            out += tatoeba_english(data_dir)
        else:
            raise SystemExit(f"--vat-data: unknown source {src!r} (sst2, tatoeba)")
    return [t for t in out if t]


@torch.no_grad()
def ema_update(ema, state, decay, step):
    """θ̄ ← d θ̄ + (1 − d) θ for every floating tensor, d = min(decay, (1 + step)/(10 + step)) (a short memory
    while θ̄ still holds the initial weights)."""
    d = min(decay, (1 + step) / (10 + step))
    for k, v in state.items():
        if v.dtype.is_floating_point:
            ema[k].mul_(d).add_(v, alpha=1 - d)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=sorted(DEFAULTS), required=True)
    ap.add_argument("--run", required=True, help="run directory (checkpoints, log)")
    ap.add_argument("--data-dir", default=common.DEFAULT_DATA_DIR)
    ap.add_argument("--vectors", default=None, help=".npy from word_vectors.py (rows = vocabulary ids)")
    ap.add_argument("--min-count", type=int, default=2)
    ap.add_argument("--emb-dim", type=int, default=None)
    ap.add_argument("--hops", type=int, default=None)
    ap.add_argument("--lstm-hidden", type=int, default=None, help="selfattn")
    ap.add_argument("--att-hidden", type=int, default=None)
    ap.add_argument("--mlp-hidden", type=int, default=None)
    ap.add_argument("--penalty", type=float, default=0.1, help="coefficient of ‖AAᵀ−I‖²_F (selfattn)")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--emb-lr-scale", type=float, default=1.0, help="learning-rate factor for the embedding")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--evals-per-epoch", type=int, default=4)
    ap.add_argument("--max-minutes", type=float, required=True)
    ap.add_argument("--schedule", choices=["constant", "cosine", "cosine-time"], default="constant")
    ap.add_argument("--warmup-steps", type=int, default=0)
    ap.add_argument("--ema", type=float, default=0.0, help="weight-averaging decay d (0 = off), e.g. 0.999")
    ap.add_argument("--word-dropout", type=float, default=0.0)
    ap.add_argument("--weight-decay", type=float, default=0.0)
    ap.add_argument("--sparse-embedding", action="store_true")
    ap.add_argument("--distill", default=None, help="teacher cache from distill_teachers.py (see docstring)")
    ap.add_argument("--alpha", type=float, default=0.5, help="distillation: weight of the gold labels' loss")
    ap.add_argument("--temperature", type=float, default=2.0, help="distillation: softening temperature T")
    ap.add_argument("--adv-eps", type=float, default=0.0,
                    help="adversarial training on the embeddings: perturbation norm ε per sentence (0 = off)")
    ap.add_argument("--vat-eps", type=float, default=0.0,
                    help="virtual adversarial training on unlabeled text: perturbation norm ε (0 = off)")
    ap.add_argument("--vat-xi", type=float, default=0.1, help="VAT: size ξ of the power iteration's probe")
    ap.add_argument("--vat-data", default="sst2,tatoeba", help="VAT: comma-separated sources of unlabeled text")
    ap.add_argument("--vat-batch-size", type=int, default=64)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--threads", type=int, default=2,
                    help="torch threads; on an oversubscribed machine 1 is far faster (OpenMP threads wait on "
                         "each other when one is descheduled: measured >10x more CPU per step with 2)")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    args = ap.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: torch sees no CUDA device")
    device = torch.device(args.device)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    os.makedirs(args.run, exist_ok=True)
    t_start = time.time()

    train = common.read_sst2(os.path.join(args.data_dir, "sst2", "train.tsv"))
    dev = common.read_sst2(os.path.join(args.data_dir, "sst2", "dev.tsv"))
    vocab = common.build_vocab(train, args.min_count)
    stoi = {w: i for i, w in enumerate(vocab)}
    train_enc = [(common.encode(t, stoi), y) for t, y in train]
    dev_enc = [(common.encode(t, stoi), y) for t, y in dev]
    if args.adv_eps < 0 or args.vat_eps < 0:
        raise SystemExit("--adv-eps and --vat-eps must be >= 0")
    unlab_enc = None
    if args.vat_eps > 0:
        unlabeled = read_unlabeled(args.vat_data.split(","), args.data_dir, train)
        unlab_enc = [(common.encode(t, stoi), 0) for t in unlabeled]
        print(f"VAT: {len(unlab_enc)} unlabeled sentences from {args.vat_data}", flush=True)
    if not 0 <= args.alpha <= 1 or args.temperature <= 0:
        raise SystemExit("--alpha must lie in [0, 1] and --temperature be > 0")
    soft = load_distill_cache(args.distill, train, args.temperature) if args.distill else None

    cfg = dict(DEFAULTS[args.model], vocab_size=len(vocab))
    for key in ("emb_dim", "hops", "lstm_hidden", "att_hidden", "mlp_hidden"):
        if getattr(args, key):
            if key not in cfg:
                raise SystemExit(f"--{key.replace('_', '-')}: not a size of the {args.model} model")
            cfg[key] = getattr(args, key)
    model = common.build_model(cfg)
    if args.vectors:
        vec = torch.from_numpy(np.load(args.vectors))
        if tuple(vec.shape) != tuple(model.embedding.weight.shape):
            raise SystemExit(f"--vectors shape {tuple(vec.shape)} != embedding {tuple(model.embedding.weight.shape)}")
        with torch.no_grad():
            model.embedding.weight.copy_(vec)
    model.to(device)
    if soft is not None:
        soft = soft.to(device)
    word_freqs = None
    if args.adv_eps > 0 or args.vat_eps > 0:
        counts = torch.bincount(torch.tensor([i for ids, _ in train_enc for i in ids], dtype=torch.long),
                                minlength=len(vocab)).double()
        word_freqs = (counts / counts.sum()).float().to(device)
    n_params = sum(p.numel() for p in model.parameters())
    emb_params = [model.embedding.weight]
    other = [p for n, p in model.named_parameters() if n != "embedding.weight"]
    if args.sparse_embedding:
        model.embedding.sparse = True
        opts = [torch.optim.AdamW([{"params": other, "weight_decay": args.weight_decay}], lr=args.lr),
                torch.optim.SparseAdam(emb_params, lr=args.lr * args.emb_lr_scale)]
    else:
        opts = [torch.optim.AdamW([{"params": other, "weight_decay": args.weight_decay},
                                   {"params": emb_params, "lr": args.lr * args.emb_lr_scale, "weight_decay": 0.0}],
                                  lr=args.lr)]
    opt = opts[0]
    groups = [g for o in opts for g in o.param_groups]
    base_lrs = [g["lr"] for g in groups]
    total_steps = args.epochs * len(common.make_batches(train_enc, args.batch_size, shuffle=False))
    ema = {k: v.detach().clone() for k, v in model.state_dict().items()} if args.ema > 0 else None

    state = dict(epoch=0, step=0, best_dev=-1.0, best_step=-1, train_seconds=0.0)
    last = os.path.join(args.run, "last.pt")
    if args.resume and os.path.exists(last):
        ck = torch.load(last, map_location=device)
        model.load_state_dict(ck["model"])
        for o, sd in zip(opts, ck["opts"] if "opts" in ck else [ck["opt"]]):
            o.load_state_dict(sd)
        state = ck["state"]
        if ema is not None:
            ema = ck["ema"]
        print(f"resumed from {last}: {state}", flush=True)
    meta = dict(cfg=cfg, args=vars(args), vocab=vocab, n_params=n_params, command=" ".join(sys.argv))
    print(json.dumps({k: v for k, v in meta.items() if k != "vocab"}), flush=True)

    def save(path, weights=None):
        """weights=None: the training state (raw weights, optimizer, EMA); else a checkpoint of `weights`.
        Tensors are written as CPU tensors whatever the device."""
        if weights is None:
            torch.save(to_cpu(dict(model=model.state_dict(), opts=[o.state_dict() for o in opts], state=state,
                                   meta=meta, ema=ema)), path)
        else:
            torch.save(to_cpu(dict(model=weights, state=state, meta=meta)), path)

    def evaluated_weights():
        return {k: v.clone() for k, v in (ema if ema is not None else model.state_dict()).items()}

    def dev_accuracy():
        if ema is None:
            return common.accuracy(model, dev_enc)
        raw = {k: v.clone() for k, v in model.state_dict().items()}
        model.load_state_dict(ema)
        acc = common.accuracy(model, dev_enc)
        model.load_state_dict(raw)
        return acc

    budget = args.max_minutes * 60
    scale = None  # adversarial training: the embedding's per-dimension scale s, refreshed every 100 steps
    unlab_batches, unlab_gen = [], torch.Generator()
    done = False
    log = open(os.path.join(args.run, "log.jsonl"), "a")
    while state["epoch"] < args.epochs and not done:
        # one generator per epoch, so a resumed run rebuilds the same batch order and skips what it has seen
        gen = torch.Generator().manual_seed(args.seed * 1000 + state["epoch"])
        batches = common.make_batches(train_enc, args.batch_size, shuffle=True, generator=gen)
        start = state.get("batch_in_epoch", 0)
        eval_every = max(1, len(batches) // args.evals_per_epoch)
        t_seg = time.time()
        tot_loss = tot_pen = tot_adv = tot_vat = 0.0
        nb = 0
        for bi in range(start, len(batches)):
            model.train()
            ids, lengths, labels = common.collate(train_enc, batches[bi])
            if args.word_dropout > 0:
                drop = (torch.rand(ids.shape) < args.word_dropout) & (ids != common.PAD_ID)
                ids = ids.masked_fill(drop, common.UNK_ID)
            ids, lengths, labels = ids.to(device), lengths.to(device), labels.to(device)
            for g, base in zip(groups, base_lrs):
                progress = (state["step"] / total_steps if args.schedule == "cosine" else
                            (state["train_seconds"] + time.time() - t_seg) / budget)
                g["lr"] = base * lr_factor(state["step"], args.warmup_steps, args.schedule, progress)
            def objective(logits, att):
                if soft is None:
                    loss = F.cross_entropy(logits, labels)
                else:
                    loss = distill_loss(logits, labels, soft[batches[bi]], args.alpha, args.temperature)
                pen = torch.zeros(())
                if args.model == "selfattn" and args.penalty > 0:
                    pen = common.SelfAttnClassifier.penalty(att)
                    loss = loss + args.penalty * pen
                return loss, pen

            for o in opts:
                o.zero_grad(set_to_none=args.sparse_embedding)
            if word_freqs is not None and (scale is None or state["step"] % 100 == 0):
                scale = embedding_scale(model.embedding.weight, word_freqs)  # 28 ms at 14k x 200: not every step
            loss, pen, adv_loss = backward_step(model, ids, lengths, objective, args.adv_eps, scale)
            if unlab_enc is not None:
                if not unlab_batches:  # a fresh pass over the unlabeled text, its order seeded by the step
                    unlab_gen.manual_seed(args.seed * 7919 + state["step"])
                    unlab_batches.extend(common.make_batches(unlab_enc, args.vat_batch_size, True, unlab_gen))
                u_ids, u_lengths, _ = common.collate(unlab_enc, unlab_batches.pop())
                tot_vat += float(vat_backward(model, u_ids.to(device), u_lengths.to(device), args.vat_eps,
                                              args.vat_xi, scale))
            clip_gradients(list(model.parameters()), 5.0)
            for o in opts:
                o.step()
            if ema is not None:
                ema_update(ema, model.state_dict(), args.ema, state["step"])
            state["step"] += 1
            tot_loss += float(loss)
            tot_pen += float(pen)
            tot_adv += float(adv_loss) if adv_loss is not None else 0.0
            nb += 1
            last_batch = bi == len(batches) - 1
            out_of_time = state["train_seconds"] + time.time() - t_seg > budget
            if (bi + 1) % eval_every == 0 or last_batch or out_of_time:
                state["train_seconds"] += time.time() - t_seg
                t_seg = time.time()
                acc = dev_accuracy()
                rec = dict(epoch=state["epoch"], batch=bi + 1, step=state["step"], loss=tot_loss / nb,
                           penalty=tot_pen / nb, dev_acc=acc, train_minutes=state["train_seconds"] / 60,
                           lr=opt.param_groups[0]["lr"])
                if args.adv_eps > 0:
                    rec["adv_loss"] = tot_adv / nb
                if args.vat_eps > 0:
                    rec["vat_loss"] = tot_vat / nb
                tot_loss = tot_pen = tot_adv = tot_vat = 0.0
                nb = 0
                print(json.dumps(rec), flush=True)
                log.write(json.dumps(rec) + "\n")
                log.flush()
                state["batch_in_epoch"] = 0 if last_batch else bi + 1
                if last_batch:
                    state["epoch"] += 1
                if acc > state["best_dev"]:
                    state["best_dev"], state["best_step"] = acc, state["step"]
                    save(os.path.join(args.run, "best.pt"), evaluated_weights())
                save(last)
                if state["epoch"] >= args.epochs or out_of_time:
                    save(os.path.join(args.run, "final.pt"), evaluated_weights())
                t_seg = time.time()
                if out_of_time:
                    done = True
                    break
    print(f"finished: best dev {state['best_dev']:.4f} at step {state['best_step']}, "
          f"train {state['train_seconds'] / 60:.1f} min, wall {(time.time() - t_start) / 60:.1f} min, "
          f"params {n_params}", flush=True)


if __name__ == "__main__":
    main()
