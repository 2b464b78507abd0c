"""Train one Multi30k de->en translator on CPU (two threads), resumable, deterministic.

  cd models/training/translation
  nohup flock /tmp/attnlens-train.lock /usr/bin/python3 train.py --model transformer --run transformer \
      --epochs 30 --max-minutes 60 [--resume] > runs/transformer.log 2>&1 &

Checkpoints: runs/<run>/last.pt (resume point, also written mid-epoch when --max-minutes runs out) and
runs/<run>/epoch<N>.pt (weights after epoch N, for selection and averaging). runs/<run>/history.jsonl holds one
line per epoch: train loss, val loss, val greedy BLEU (docs/DESIGN.md §13), wall-clock seconds.
Selection uses val only; the test set is never read here.
"""
import argparse
import json
import math
import os
import re
import random
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (BOS, DEFAULT_DATA_DIR, EOS, PAD, RUNS_DIR, bpe_decode_ids, corpus_bleu, find_cli,  # noqa: E402
                    load_encoded, make_batches, pad_batch, read_lines, set_seed, vocab_size)
from checkpoints import to_cpu  # noqa: E402  (models/training/, on the path through common)
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
    p.add_argument("--drop-final-punct", type=float, default=0.0,
                   help="probability that a training pair ending in . ? ! on both sides loses that final piece on "
                        "both sides (input typed without final punctuation; augment.py)")
    p.add_argument("--swap-numbers", type=float, default=0.0,
                   help="probability that a pair with the same number on both sides gets a random other number in "
                        "its place on both sides (augment.py)")
    p.add_argument("--stop-at", help="also stop cleanly at this UTC wall-clock time, HH:MM (the next one to come)")
    p.add_argument("--val-bleu-from", type=int, default=1, help="first epoch whose val greedy BLEU is computed")
    p.add_argument("--lr-scale", type=float, help="on --resume: set the plateau step-size factor (e.g. 1.0)")
    p.add_argument("--smoke", action="store_true", help="code check only: 3 batches per epoch, 40 val sentences")
    p.add_argument("--corpus", choices=("multi30k", "general"), default="multi30k",
                   help="general = Multi30k train + Tatoeba (general.py); selection on val + tatoeba_dev")
    p.add_argument("--multi30k-repeat", type=int, default=2, help="general corpus: copies of Multi30k train")
    p.add_argument("--allow-partial-epoch", action="store_true",
                   help="start an epoch even when it cannot end within the budget (last.pt keeps the partial epoch)")
    p.add_argument("--init-from", help="warm start from a bundle of the same architecture (transformer): every "
                   "tensor copied; embedding rows mapped by piece string (init_from_bundle)")
    p.add_argument("--grow", action="store_true",
                   help="with --init-from: the new model may be deeper (--layers) and wider (--d-ff) than the bundle; "
                        "it starts as the same function (grow_tensor)")
    p.add_argument("--align-labels", help="guided alignment (Garg et al. 2019): labels from align_labels.py")
    p.add_argument("--align-weight", type=float, default=0.3, help="weight of the alignment loss")
    p.add_argument("--align-layer", type=int, default=-2, help="decoder layer of the alignment head (python index)")
    p.add_argument("--align-head", type=int, default=0, help="cross-attention head supervised by the labels")
    p.add_argument("--omission-contrast", type=float, default=0.0,
                   help="weight of the omission contrast (contrast.py): the reference must beat itself with a "
                        "content word or a run of words left out by --omission-margin nats (0 = off)")
    p.add_argument("--omission-margin", type=float, default=1.0, help="margin of the omission contrast, in nats")
    p.add_argument("--token-unlikelihood", type=float, default=0.0,
                   help="weight of the token-level unlikelihood (contrast.py): where a content word starts, the "
                        "next word's first piece (a skip) and, after it, the word again (a stutter) are pushed down")
    p.add_argument("--contrast-repeat-share", type=float, default=0.0,
                   help="share of the contrast's negatives that repeat a content word instead of leaving one out")
    p.add_argument("--device", default="cpu", help="torch device (cpu, cuda); checkpoints are always saved on cpu")
    p.add_argument("--bf16", action="store_true", help="cuda: matrix products in bfloat16 autocast (weights and "
                   "optimiser stay float32)")
    p.add_argument("--keep-epochs", type=int, default=0,
                   help="keep only the last N epoch<N>.pt checkpoints (0 = keep all)")
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


def copy_layers(old_sd, new_sd, grow=False):
    """Every tensor of the trained state dict `old_sd` but the shared embedding into `new_sd` (a fresh model's), in
    place. Same shapes required, unless `grow`: then wider feed-forward layers take the old ones inside them
    (grow_tensor), and layers the old model does not have start with zero residual branches (attention output and
    second feed-forward projections), so that in a pre-norm Transformer each is the identity and the grown model
    computes what the old one did."""
    for k, v in old_sd.items():
        if k == "embed.weight":
            continue
        if grow and k in new_sd and new_sd[k].shape != v.shape:
            new_sd[k] = grow_tensor(k, v, new_sd[k])
        elif k not in new_sd or new_sd[k].shape != v.shape:
            raise SystemExit(f"--init-from: tensor {k} {tuple(v.shape)} does not fit the new model")
        else:
            new_sd[k] = v.clone()
    if grow:
        for k in new_sd:
            if k not in old_sd and re.search(r"\.(out_proj|ffn\.linear2)\.(weight|bias)$", k):
                new_sd[k] = torch.zeros_like(new_sd[k])


def grow_tensor(name, old, new):
    """A trained tensor `old` inside the larger init `new` of a wider feed-forward layer (d_ff grown): linear1's
    first rows and bias entries are the old ones, the new units keep their random init; linear2's first columns
    are the old ones and the new columns are zero, so the layer computes what it did until training moves them."""
    if name.endswith("ffn.linear1.weight") or name.endswith("ffn.linear1.bias"):
        out = new.clone()
        out[:old.shape[0]] = old
        return out
    if name.endswith("ffn.linear2.weight") and old.shape[0] == new.shape[0]:
        out = torch.zeros_like(new)
        out[:, :old.shape[1]] = old
        return out
    raise SystemExit(f"--grow: tensor {name} {tuple(old.shape)} -> {tuple(new.shape)} cannot be grown")


def init_from_bundle(model, bundle_dir, prefix, cli, grow=False):
    """Warm start: copy every tensor of a trained bundle into `model` (copy_layers; `grow`: the model may be deeper
    and wider) except the shared embedding, whose rows are mapped by piece: a piece of the new vocabulary that exists in the old one takes its
    row; any other takes the mean of the old rows of the pieces the OLD tokenizer splits its text into (the marker
    kept, so a word-initial piece maps to word-initial old pieces); pieces with no old pieces keep their init."""
    from bundle import load_bundle
    from common import bpe_encode_pieces
    old, _ = load_bundle(bundle_dir)
    old_sd, new_sd = old.state_dict(), model.state_dict()
    copy_layers(old_sd, new_sd, grow)
    with open(os.path.join(bundle_dir, "bpe.vocab"), encoding="utf-8") as f:
        old_vocab = {p.rstrip("\n"): i for i, p in enumerate(f)}
    with open(prefix + ".vocab", encoding="utf-8") as f:
        new_vocab = [p.rstrip("\n") for p in f]
    old_e, new_e = old_sd["embed.weight"], new_sd["embed.weight"].clone()
    exact, composed = 0, 0
    rest = [(i, p) for i, p in enumerate(new_vocab) if p not in old_vocab]
    for i, p in enumerate(new_vocab):
        if p in old_vocab:
            new_e[i] = old_e[old_vocab[p]]
            exact += 1
    texts = [p.replace("\u2581", " ").strip() or "_" for _, p in rest]
    for (i, p), pieces in zip(rest, bpe_encode_pieces(cli, os.path.join(bundle_dir, "bpe"), texts)):
        if not p.startswith("\u2581") and pieces and pieces[0].startswith("\u2581") and len(pieces[0]) > 1:
            pieces[0] = pieces[0][1:]  # a word-internal piece: prefer the unmarked old piece when it exists
        ids = [old_vocab[q] for q in pieces if q in old_vocab and old_vocab[q] > 3]
        if ids:
            new_e[i] = old_e[ids].mean(0)
            composed += 1
    new_sd["embed.weight"] = new_e
    model.load_state_dict(new_sd)
    print(f"init from {bundle_dir}: all layers copied; embedding rows: {exact} exact pieces, {composed} composed "
          f"from old pieces, {len(new_vocab) - exact - composed} left at their init", flush=True)


def evaluate_val(model, enc_val, prefix, cli, refs, batch_sents=100, bleu=True, device="cpu"):
    """Val loss (per target token, no smoothing) and greedy BLEU (lowercased tokenized)."""
    model.eval()
    src, tgt = enc_val
    total, count = 0.0, 0
    hyps_ids = [None] * len(src)
    order = sorted(range(len(src)), key=lambda i: len(src[i]))
    with torch.no_grad():
        for b in range(0, len(order), batch_sents):
            idx = order[b:b + batch_sents]
            s = pad_batch([src[i] for i in idx], suffix=EOS).to(device)
            ti = pad_batch([tgt[i] for i in idx], prefix=BOS).to(device)
            to = pad_batch([tgt[i] for i in idx], suffix=EOS).to(device)
            logits, _ = model(s, ti)
            loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), to.reshape(-1), ignore_index=PAD,
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
    dev_sets = []  # (name, encoded pairs, references); selection uses the mean greedy BLEU over them
    origin = None
    if args.corpus == "general":
        from general import load_general
        prefix, enc, text, origin = load_general(args.merges, args.data_dir, cli, args.multi30k_repeat)
        dev_sets.append(("tatoeba_dev", enc["tatoeba_dev"], list(text["tatoeba_dev"][1])))
    else:
        prefix, enc = load_encoded(args.merges, args.data_dir, cli)
    vocab = vocab_size(prefix)
    val_refs = read_lines(args.data_dir, "val", "en")
    dev_sets.insert(0, ("val", enc["val"], val_refs))
    align_labels = None
    if args.align_labels:
        from align_labels import load_labels
        align_labels = load_labels(args.align_labels, origin, len(enc["train"][0]))
        print(f"guided alignment: layer {args.align_layer} head {args.align_head} weight {args.align_weight}, "
              f"{sum(1 for x in align_labels if x)} labelled training pairs", flush=True)
    if args.smoke:
        enc = dict(enc)
        enc["train"] = (enc["train"][0][:300], enc["train"][1][:300])
        dev_sets = [(n, (e[0][:40], e[1][:40]), r[:40]) for n, e, r in dev_sets]
    set_seed(args.seed)
    device = torch.device(args.device)
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
    model = build_model(args.model, vocab, model_args(args))
    last_path = os.path.join(run_dir, "last.pt")
    # A warm start unless a checkpoint of this run is resumed (--resume without a checkpoint yet starts the run,
    # from --init-from like any first start).
    if args.init_from and not (args.resume and os.path.isfile(last_path)):
        init_from_bundle(model, args.init_from, prefix, cli, grow=args.grow)
    model.to(device)
    n_params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-9)
    state = {"epoch": 0, "step_in_epoch": 0, "global_step": 0, "lr_scale": 1.0, "best_bleu": -1.0,
             "train_seconds": 0.0, "bad_epochs": 0}
    if args.resume and os.path.isfile(last_path):
        ck = torch.load(last_path, map_location=device)
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["optimizer"])
        state = ck["state"]
        torch.set_rng_state(ck["torch_rng"].cpu())
        if args.lr_scale is not None:
            state["lr_scale"] = args.lr_scale
        print(f"resumed from {last_path}: epoch {state['epoch']} step {state['step_in_epoch']}", flush=True)
    with open(os.path.join(run_dir, "args.json"), "w") as f:
        json.dump({**vars(args), "vocab_size": vocab, "parameters": n_params, "argv": sys.argv}, f, indent=1)
    print(f"model {args.model}: {n_params} parameters, vocab {vocab}, args {vars(args)}", flush=True)

    def save_last():
        torch.save(to_cpu({"model": model.state_dict(), "optimizer": opt.state_dict(), "state": state,
                           "torch_rng": torch.get_rng_state(), "args": vars(args), "vocab_size": vocab,
                           "model_cfg": model.cfg, "kind": args.model}), last_path + ".tmp")
        os.replace(last_path + ".tmp", last_path)

    import signal
    stop_requested = []
    signal.signal(signal.SIGUSR1, lambda *_: stop_requested.append(1))  # stop cleanly after this batch

    t_start = time.time()
    budget = args.max_minutes * 60.0
    if args.stop_at:
        import datetime
        now = datetime.datetime.utcnow()
        hh, mm = (int(x) for x in args.stop_at.split(":"))
        stop_time = now.replace(hour=hh, minute=mm, second=0, microsecond=0)
        if stop_time <= now:  # a time before now means tomorrow (a run started before midnight)
            stop_time += datetime.timedelta(days=1)
        budget = min(budget, (stop_time - now).total_seconds())
        print(f"time budget: {budget / 60:.1f} min", flush=True)
    train_src, train_tgt = enc["train"]
    from augment import NumberSwapper, drop_final_punct, final_punct_ids, load_pieces
    from contrast import contrast_loss, loss_and_sequence_log_probs, negative, unlikelihood_loss, unlikelihood_targets
    pieces = load_pieces(prefix)
    final_punct = final_punct_ids(pieces)
    swap_numbers = NumberSwapper(prefix, cli, seed=args.seed) if args.swap_numbers > 0 else None
    stop = False
    while state["epoch"] < args.epochs and not stop:
        epoch = state["epoch"]
        # An epoch that cannot end inside the budget would only leave a partial epoch (no epoch checkpoint to
        # select or average): stop before it, judging by the last full epoch's duration (training + val).
        last_epoch = state.get("last_epoch_seconds")
        if (state["step_in_epoch"] == 0 and last_epoch and time.time() - t_start + last_epoch > budget
                and not args.allow_partial_epoch):
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
            if time.time() - t_start > budget or stop_requested:
                stop = True
                break
            idx = batches[bi]
            rows_src, rows_tgt = [train_src[i] for i in idx], [train_tgt[i] for i in idx]
            rows_links = [align_labels[i] for i in idx] if align_labels is not None else None
            if args.drop_final_punct > 0:
                rows_src, rows_tgt, rows_links = drop_final_punct(
                    rows_src, rows_tgt, rows_links, final_punct, args.drop_final_punct,
                    random.Random(f"{args.seed}-{epoch}-{bi}"))
            if swap_numbers is not None:
                rows_src, rows_tgt, rows_links = swap_numbers(
                    rows_src, rows_tgt, rows_links, args.swap_numbers, random.Random(f"numbers-{args.seed}-{epoch}-{bi}"))
            n_rows = len(rows_tgt)
            negatives = []  # (row, negative target): decoded in the same batch, after the references
            if args.omission_contrast > 0:
                neg_rng = random.Random(f"contrast-{args.seed}-{epoch}-{bi}")
                negatives = [(r, n) for r, n in ((r, negative(t, pieces, neg_rng, args.contrast_repeat_share))
                                                 for r, t in enumerate(rows_tgt)) if n is not None]
            all_src = rows_src + [rows_src[r] for r, _ in negatives]
            all_tgt = rows_tgt + [n for _, n in negatives]
            s = pad_batch(all_src, suffix=EOS).to(device)
            ti = pad_batch(all_tgt, prefix=BOS).to(device)
            to_all = pad_batch(all_tgt, suffix=EOS).to(device)
            to = to_all[:n_rows]
            for g in opt.param_groups:
                g["lr"] = lr_at(args, state["global_step"] + 1, state["lr_scale"])
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=args.bf16):
                logits_all, attns = model(s, ti)
            if negatives:  # one log-softmax for the references' loss and every row's sequence log-probability
                loss, lp = loss_and_sequence_log_probs(logits_all, to_all, n_rows, PAD, args.label_smoothing)
            else:
                loss = F.cross_entropy(logits_all.float().reshape(-1, logits_all.shape[-1]), to.reshape(-1),
                                       ignore_index=PAD, label_smoothing=args.label_smoothing)
            if align_labels is not None:
                from align_labels import alignment_loss
                a_loss = alignment_loss(attns["cross"][args.align_layer][:n_rows, args.align_head].float(), rows_links)
                loss = loss + args.align_weight * a_loss
            if negatives:
                c_loss, c_share = contrast_loss(lp[[r for r, _ in negatives]], lp[n_rows:], args.omission_margin)
                loss = loss + args.omission_contrast * c_loss
            if args.token_unlikelihood > 0:
                u_loss = unlikelihood_loss(logits_all, [(r, t, piece) for r, row in enumerate(rows_tgt)
                                                        for t, piece in unlikelihood_targets(row, pieces)], EOS)
                loss = loss + args.token_unlikelihood * u_loss
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if args.clip > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            opt.step()
            ntok = int((to != PAD).sum())
            loss_sum += float(loss) * ntok  # (a device sync per batch: cheap next to the Python batching)
            tok_sum += ntok
            state["global_step"] += 1
            state["step_in_epoch"] = bi + 1
            if bi % 50 == 0:
                extra = f" align {float(a_loss):.3f}" if align_labels is not None else ""
                if negatives:
                    extra += f" contrast {float(c_loss):.3f} (below margin {c_share:.2f})"
                if args.token_unlikelihood > 0:
                    extra += f" unlikelihood {float(u_loss):.3f}"
                print(f"epoch {epoch + 1} batch {bi}/{len(batches)} loss {float(loss):.3f}{extra} "
                      f"lr {opt.param_groups[0]['lr']:.2e} {time.time() - t_epoch:.0f}s", flush=True)
        state["train_seconds"] += time.time() - t_epoch
        if stop:
            save_last()
            print(f"stopped (time budget of {args.max_minutes} min or SIGUSR1): saved {last_path} (epoch {epoch + 1}, "
                  f"batch {state['step_in_epoch']}/{len(batches)}); continue with --resume", flush=True)
            break
        t_val = time.time()
        dev_scores = {}
        for name, pairs, refs in dev_sets:
            dev_scores[name] = evaluate_val(model, pairs, prefix, cli, refs, bleu=epoch + 1 >= args.val_bleu_from,
                                            batch_sents=100 if device.type == "cpu" else 500, device=device)
        val_loss = sum(v[0] for v in dev_scores.values()) / len(dev_scores)
        val_bleu = sum(v[1] for v in dev_scores.values()) / len(dev_scores)
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
        torch.save({"model": to_cpu(model.state_dict()), "model_cfg": model.cfg, "kind": args.model,
                    "vocab_size": vocab, "epoch": epoch + 1, "val_bleu": val_bleu, "args": vars(args)},
                   os.path.join(run_dir, f"epoch{epoch + 1}.pt"))
        old = os.path.join(run_dir, f"epoch{epoch + 1 - args.keep_epochs}.pt")
        if args.keep_epochs > 0 and os.path.isfile(old):
            os.remove(old)
        state["last_epoch_seconds"] = time.time() - t_epoch
        save_last()
        rec = {"epoch": epoch + 1, "train_loss": loss_sum / max(tok_sum, 1), "val_loss": val_loss,
               "val_greedy_bleu": val_bleu,
               **{f"{n}_loss": v[0] for n, v in dev_scores.items() if len(dev_scores) > 1},
               **{f"{n}_greedy_bleu": v[1] for n, v in dev_scores.items() if len(dev_scores) > 1},
               "epoch_seconds": time.time() - t_epoch,
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
