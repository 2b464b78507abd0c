"""Train one Multi30k de->en translator on CPU (two threads), resumable, deterministic.

  cd models/training/translation
  nohup flock /tmp/attnlens-train.lock /usr/bin/python3 train.py --model transformer --run transformer \
      --epochs 30 --max-minutes 60 [--resume] > runs/transformer.log 2>&1 &

Checkpoints: runs/<run>/last.pt (resume point, also written mid-epoch when --max-minutes runs out) and
runs/<run>/epoch<N>.pt (weights after epoch N, for selection and averaging). runs/<run>/history.jsonl holds one
line per epoch: train loss, val loss, val greedy BLEU (DESIGN.md convention), wall-clock seconds.
Selection uses val only; the test set is never read here.
"""
import argparse
import json
import math
import os
import random
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (BOS, DEFAULT_DATA_DIR, EOS, PAD, RUNS_DIR, bpe_decode_ids, corpus_bleu, find_cli,  # noqa: E402
                    load_encoded, make_batches, pad_batch, read_lines, set_seed, vocab_size)
from decoding import greedy_batch, strip_specials  # noqa: E402
from models import build_model  # noqa: E402

DEFAULTS = {
    "transformer": dict(max_tokens=4000, lr=1e-3, warmup=250, schedule="inverse_sqrt", label_smoothing=0.1,
                        dropout=0.1, clip=0.0),
    "rnn-additive": dict(max_tokens=3000, lr=1e-3, warmup=0, schedule="plateau", label_smoothing=0.1, dropout=0.3,
                         clip=1.0),
    "rnn-general": dict(max_tokens=3000, lr=1e-3, warmup=0, schedule="plateau", label_smoothing=0.1, dropout=0.3,
                        clip=1.0),
}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, choices=sorted(DEFAULTS))
    p.add_argument("--run", help="run name (folder under runs/); default = --model")
    p.add_argument("--merges", type=int, default=8000, help="joint BPE merges (<= 10k)")
    p.add_argument("--data-dir", default=DEFAULT_DATA_DIR)
    p.add_argument("--cli", help="path of attnlens-cli (default: found in build-translation/ or build/)")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--max-minutes", type=float, default=60.0, help="stop cleanly (checkpoint) after this budget")
    p.add_argument("--resume", action="store_true")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--max-tokens", type=int)
    p.add_argument("--lr", type=float)
    p.add_argument("--warmup", type=int)
    p.add_argument("--label-smoothing", type=float)
    p.add_argument("--dropout", type=float)
    p.add_argument("--clip", type=float)
    p.add_argument("--d-ff", type=int, default=512)
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--dec-layers", type=int, default=2, help="rnn-general: stacked decoder LSTMs")
    p.add_argument("--init-range", type=float, default=0.0,
                   help="rnn-general: U(-r, r) init of LSTM/linear parameters (OpenNMT's 0.1); 0 = PyTorch defaults")
    p.add_argument("--max-len", type=int, default=100, help="skip training pairs longer than this (ids)")
    p.add_argument("--stop-at", help="also stop cleanly at this UTC wall-clock time, HH:MM (today)")
    p.add_argument("--val-bleu-from", type=int, default=1, help="first epoch whose val greedy BLEU is computed")
    p.add_argument("--lr-scale", type=float, help="on --resume: set the plateau step-size factor (e.g. 1.0)")
    p.add_argument("--smoke", action="store_true", help="code check only: 3 batches per epoch, 40 val sentences")
    args = p.parse_args(argv)
    for k, v in DEFAULTS[args.model].items():
        if getattr(args, k, None) is None:
            setattr(args, k, v)
    args.run = args.run or args.model
    return args


def model_args(args):
    return {"dropout": args.dropout, "d_ff": args.d_ff, "layers": args.layers, "dec_layers": args.dec_layers,
            "init_range": args.init_range}


def lr_at(args, step, scale=1.0):
    if args.schedule == "inverse_sqrt":
        # Linear warmup to the peak, then peak * sqrt(warmup / step) (Vaswani 2017's shape with a set peak).
        step = max(step, 1)
        return args.lr * min(step / args.warmup, math.sqrt(args.warmup / step))
    return args.lr * scale


def evaluate_val(model, enc_val, prefix, cli, refs, batch_sents=100, bleu=True):
    """Val loss (per target token, no smoothing) and greedy BLEU (lowercased tokenized)."""
    model.eval()
    src, tgt = enc_val
    total, count = 0.0, 0
    hyps_ids = [None] * len(src)
    order = sorted(range(len(src)), key=lambda i: len(src[i]))
    with torch.no_grad():
        for b in range(0, len(order), batch_sents):
            idx = order[b:b + batch_sents]
            s = pad_batch([src[i] for i in idx], suffix=EOS)
            ti = pad_batch([tgt[i] for i in idx], prefix=BOS)
            to = pad_batch([tgt[i] for i in idx], suffix=EOS)
            logits, _ = model(s, ti)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), to.reshape(-1), ignore_index=PAD,
                                   reduction="sum")
            total += float(loss)
            count += int((to != PAD).sum())
            if bleu:
                for i, h in zip(idx, greedy_batch(model, s)):
                    hyps_ids[i] = strip_specials(h)
    if not bleu:
        return total / count, -1.0
    hyps = bpe_decode_ids(cli, prefix, hyps_ids)
    return total / count, corpus_bleu(hyps, refs)


def main():
    args = parse_args()
    torch.set_num_threads(args.threads)
    run_dir = os.path.join(RUNS_DIR, args.run)
    os.makedirs(run_dir, exist_ok=True)
    cli = find_cli(args.cli)
    prefix, enc = load_encoded(args.merges, args.data_dir, cli)
    vocab = vocab_size(prefix)
    val_refs = read_lines(args.data_dir, "val", "en")
    if args.smoke:
        enc = dict(enc)
        enc["train"] = (enc["train"][0][:300], enc["train"][1][:300])
        enc["val"] = (enc["val"][0][:40], enc["val"][1][:40])
        val_refs = val_refs[:40]
    set_seed(args.seed)
    model = build_model(args.model, vocab, model_args(args))
    n_params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-9)
    state = {"epoch": 0, "step_in_epoch": 0, "global_step": 0, "lr_scale": 1.0, "best_bleu": -1.0,
             "train_seconds": 0.0, "bad_epochs": 0}
    last_path = os.path.join(run_dir, "last.pt")
    if args.resume and os.path.isfile(last_path):
        ck = torch.load(last_path)
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["optimizer"])
        state = ck["state"]
        torch.set_rng_state(ck["torch_rng"])
        if args.lr_scale is not None:
            state["lr_scale"] = args.lr_scale
        print(f"resumed from {last_path}: epoch {state['epoch']} step {state['step_in_epoch']}", flush=True)
    with open(os.path.join(run_dir, "args.json"), "w") as f:
        json.dump({**vars(args), "vocab_size": vocab, "parameters": n_params, "argv": sys.argv}, f, indent=1)
    print(f"model {args.model}: {n_params} parameters, vocab {vocab}, args {vars(args)}", flush=True)

    def save_last():
        torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "state": state,
                    "torch_rng": torch.get_rng_state(), "args": vars(args), "vocab_size": vocab,
                    "model_cfg": model.cfg, "kind": args.model}, last_path + ".tmp")
        os.replace(last_path + ".tmp", last_path)

    t_start = time.time()
    budget = args.max_minutes * 60.0
    if args.stop_at:
        import datetime
        now = datetime.datetime.utcnow()
        hh, mm = (int(x) for x in args.stop_at.split(":"))
        stop_time = now.replace(hour=hh, minute=mm, second=0, microsecond=0)
        budget = min(budget, (stop_time - now).total_seconds())
        print(f"time budget: {budget / 60:.1f} min", flush=True)
    train_src, train_tgt = enc["train"]
    stop = False
    while state["epoch"] < args.epochs and not stop:
        epoch = state["epoch"]
        # An epoch that cannot end inside the budget would only leave a partial epoch (no epoch checkpoint to
        # select or average): stop before it, judging by the last full epoch's duration (training + val).
        last_epoch = state.get("last_epoch_seconds")
        if state["step_in_epoch"] == 0 and last_epoch and time.time() - t_start + last_epoch > budget:
            save_last()
            print(f"stopping before epoch {epoch + 1}: it would not end within the time budget "
                  f"(last epoch took {last_epoch:.0f}s); continue with --resume", flush=True)
            break
        batches = make_batches(train_src, train_tgt, args.max_tokens, random.Random(args.seed * 1000 + epoch),
                               max_len=args.max_len)
        model.train()
        t_epoch = time.time()
        loss_sum, tok_sum = 0.0, 0
        for bi in range(state["step_in_epoch"], len(batches)):
            if time.time() - t_start > budget:
                stop = True
                break
            idx = batches[bi]
            s = pad_batch([train_src[i] for i in idx], suffix=EOS)
            ti = pad_batch([train_tgt[i] for i in idx], prefix=BOS)
            to = pad_batch([train_tgt[i] for i in idx], suffix=EOS)
            for g in opt.param_groups:
                g["lr"] = lr_at(args, state["global_step"] + 1, state["lr_scale"])
            logits, _ = model(s, ti)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), to.reshape(-1), ignore_index=PAD,
                                   label_smoothing=args.label_smoothing)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if args.clip > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            opt.step()
            ntok = int((to != PAD).sum())
            loss_sum += float(loss) * ntok
            tok_sum += ntok
            state["global_step"] += 1
            state["step_in_epoch"] = bi + 1
            if bi % 50 == 0:
                print(f"epoch {epoch + 1} batch {bi}/{len(batches)} loss {float(loss):.3f} "
                      f"lr {opt.param_groups[0]['lr']:.2e} {time.time() - t_epoch:.0f}s", flush=True)
        state["train_seconds"] += time.time() - t_epoch
        if stop:
            save_last()
            print(f"time budget of {args.max_minutes} min spent: saved {last_path} (epoch {epoch + 1}, "
                  f"batch {state['step_in_epoch']}/{len(batches)}); continue with --resume", flush=True)
            break
        t_val = time.time()
        if epoch + 1 >= args.val_bleu_from:
            val_loss, val_bleu = evaluate_val(model, enc["val"], prefix, cli, val_refs)
        else:
            val_loss, val_bleu = evaluate_val(model, enc["val"], prefix, cli, val_refs, bleu=False)
        state["epoch"] = epoch + 1
        state["step_in_epoch"] = 0
        if epoch + 1 < args.val_bleu_from:
            pass  # no BLEU measured this epoch: nothing to compare, the step size stays
        elif val_bleu > state["best_bleu"]:
            state["best_bleu"], state["bad_epochs"] = val_bleu, 0
        else:
            state["bad_epochs"] += 1
            if args.schedule == "plateau":
                state["lr_scale"] *= 0.5  # halve the step size when val BLEU stops improving
        torch.save({"model": model.state_dict(), "model_cfg": model.cfg, "kind": args.model, "vocab_size": vocab,
                    "epoch": epoch + 1, "val_bleu": val_bleu, "args": vars(args)},
                   os.path.join(run_dir, f"epoch{epoch + 1}.pt"))
        state["last_epoch_seconds"] = time.time() - t_epoch
        save_last()
        rec = {"epoch": epoch + 1, "train_loss": loss_sum / max(tok_sum, 1), "val_loss": val_loss,
               "val_greedy_bleu": val_bleu, "epoch_seconds": time.time() - t_epoch,
               "val_seconds": time.time() - t_val, "train_seconds_total": state["train_seconds"],
               "lr_scale": state["lr_scale"], "global_step": state["global_step"]}
        with open(os.path.join(run_dir, "history.jsonl"), "a") as f:
            f.write(json.dumps(rec) + "\n")
        print(json.dumps(rec), flush=True)
        if time.time() - t_start > budget:
            print(f"time budget of {args.max_minutes} min spent after epoch {epoch + 1}; continue with --resume",
                  flush=True)
            break


if __name__ == "__main__":
    main()
