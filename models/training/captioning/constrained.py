"""Guided captioning: the ImageNet classifier's confident class, as captioner words, becomes a constraint of the beam
search (constrained beam search, Anderson et al. 2017, "Guided Open Vocabulary Image Captioning with Constrained
Beam Search", EMNLP). A PyTorch prototype over sat.py's decoder; the engine does not do this.

The constraint is one disjunctive set C of token ids ("cat" or "cats" or "kitty"): the caption must contain one of
them. The search runs one beam per state of that constraint, "not yet met" (0) and "met" (1):

  * every step extends every active hypothesis of both states by every word, scored as in sat.beam_decode (sum of
    log-softmax of the logits); an extension by a word of C moves a state-0 hypothesis to state 1, any other word
    keeps its state; <end> is no extension of a state-0 hypothesis (a caption that ends there can never meet C);
  * each state keeps its own `beam` best extensions (torch.topk over the flattened [its source hypotheses, V]
    scores, as sat.beam_decode); kept extensions ending in <end> are finished and leave the active set;
  * the search stops when state 1 has `beam` finished hypotheses, no hypothesis is active, or after max_len steps;
  * the answer is state 1's finished hypothesis with the best score / len^length_norm (len counts <end>, as
    sat.beam_decode); when none finished, there is no constrained answer and the caller keeps the unconstrained
    one (sat.beam_decode's).

With no constraint there is one state, met from the start, and the search is sat.beam_decode step for step
(test_constrained.py checks the captions are equal). As the engine's search does by default, <unk> can be banned
(never kept as an extension); the captions here ban it, so that the unconstrained ones are the engine's.

When to constrain (constraint_for): the classifier's top-1 class has probability >= tau (softmax over its 1000
logits) and imagenet_words maps it to words; tau = DEFAULT_TAU, fixed before any captioned photo was looked at.

  /usr/bin/python3 models/training/captioning/constrained.py everyday --out /tmp/cbs-everyday.jsonl \\
      --captions /tmp/cbs-everyday-captions.jsonl
  /usr/bin/python3 models/training/captioning/constrained.py dev --out /tmp/cbs-dev.jsonl
  /usr/bin/python3 models/training/captioning/constrained.py test --out /tmp/cbs-test.jsonl
  /usr/bin/python3 models/training/captioning/constrained.py test --int8 /tmp/int8 --out /tmp/cbs-test-int8.jsonl

(--int8: the int8 bundles of `node scripts/quantize.mjs models/B /tmp/int8/B` for the three bundles; see
load_int8_codes for how far that is from the engine's int8.)

Each line of OUT: image, the classifier's top-1 class (index, label, probability), the words it maps to, the
unconstrained caption (the engine's search: sat.beam_decode with <unk> banned), and the constrained one (null when
the class maps to no word or no constrained hypothesis finished) — for every image whose top-1 class maps to words,
whatever its probability, so that the figures for any tau come from one run (summarize). The float32 bundles:
models/flickr8k-mobilenet with its encoder models/flickr8k-mobilenet-encoder (bundle.load_bundle) and
models/mobilenet-v2-imagenet (bundle.load_encoder_bundle); photos decoded by PIL to RGB (everyday: EXIF orientation
applied, as caption_everyday.mjs), then the engine's preprocessing (mobilenet.preprocess_rgba) at each bundle's
input size.
"""
import argparse
import json
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bundle  # noqa: E402
import engine_io  # noqa: E402
import imagenet_words  # noqa: E402
import mobilenet  # noqa: E402
import sat  # noqa: E402
import text  # noqa: E402

MODELS = os.path.join(mobilenet.REPO_ROOT, "models")
DEFAULT_TAU = 0.5  # fixed a priori: the classifier is more likely right than wrong
EVERYDAY = os.path.join(HERE, "everyday", "photos")


@torch.no_grad()
def constrained_beam_decode(model, feats1, constraint=None, beam=3, max_len=30, length_norm=0.0, projected=False,
                            banned=()):
    """Constrained beam search for one image (feats1 [L, D]); constraint: token ids, one of which the caption must
    contain (None or empty: none, and with no `banned` words the result is sat.beam_decode's). banned: token ids no
    hypothesis is extended by (the engine's search bans <unk>: its log-probability is not renormalised away, the
    extension is just never kept; src/models/show_attend_tell.h). Returns dict(tokens, alphas [T, L], score, met) or
    None when a constraint was given and no hypothesis that meets it finished."""
    model.eval()
    cset = sorted(set(constraint or ()))
    if sat.END in cset or sat.END in banned or set(cset) & set(banned):
        raise ValueError("<end> cannot be a constraint or banned word, nor a banned word a constraint word")
    V = model.vocab_size
    f = feats1.unsqueeze(0)
    p, keys, h, c = model.encode_projected(f) if projected else model.encode(f)
    accepting = 0 if not cset else 1
    in_c = torch.zeros(V, dtype=torch.bool)
    in_c[cset] = True
    ok_word = torch.ones(V, dtype=torch.bool)
    ok_word[list(banned)] = False
    hyps = [dict(tokens=[], alphas=[], score=0.0, h=h[0], c=c[0], state=0)]
    finished = []
    neg = float("-inf")
    for _ in range(max_len):
        k = len(hyps)
        logp, step_state = sat.beam_step(model, p, keys, hyps)
        src_state = torch.tensor([x["state"] for x in hyps])
        new = []
        for target in range(accepting + 1):
            if target == accepting and accepting == 0:
                allowed = torch.ones(k, V, dtype=torch.bool)  # no constraint: every extension, as beam_decode
            elif target == 0:  # stays unmet: a word outside C, not <end>, from an unmet hypothesis
                allowed = (src_state == 0).unsqueeze(1) & ~in_c.unsqueeze(0)
                allowed[:, sat.END] = False
            else:  # met: any word from a met hypothesis, a word of C from an unmet one
                allowed = (src_state == 1).unsqueeze(1) | ((src_state == 0).unsqueeze(1) & in_c.unsqueeze(0))
            scores = logp.masked_fill(~(allowed & ok_word.unsqueeze(0)), neg)
            top_s, top_i = scores.view(-1).topk(min(beam, scores.numel()))
            for s, i in zip(top_s.tolist(), top_i.tolist()):
                if s == neg:
                    break
                src, w = divmod(i, V)
                hyp = sat.extend(hyps, src, w, s, step_state, state=target)
                if w == sat.END:
                    finished.append(hyp)  # only the accepting state can finish (<end> is masked in state 0)
                else:
                    new.append(hyp)
        if len(finished) >= beam or not new:
            break
        hyps = new
    if not finished and cset:
        return None
    best = sat.best_caption(finished or hyps, length_norm)
    best["met"] = not cset or any(t in cset for t in best["tokens"])
    return best


def constraint_for(prob, cls, class_words, stoi, tau=DEFAULT_TAU):
    """The token ids the caption must contain one of, or None: the classifier's top-1 class `cls` with probability
    `prob` constrains the caption when prob >= tau and the class maps to words (class_words: imagenet_words)."""
    words = class_words[cls]
    if prob < tau or not words:
        return None
    return [stoi[w] for w in words]


def load_int8_codes(module, bundle_dir, prefix=""):
    """Replaces every weight of `module` that the bundle in bundle_dir (scripts/quantize.mjs's output) holds as int8
    codes (NAME I8 + NAME.qscale F32, one scale per output row or channel) by codes x scale, as the engine reads
    them (io::Bundle::tensor), times the bundle's one "NAME_scale" where it has one. The engine also rounds each
    product's input rows to int16 codes; that is not done here, so an int8 run in PyTorch approximates the engine's
    int8 captions (how well: --int8 on the everyday set against everyday/captions.jsonl). prefix: the bundle's
    tensor-name prefix of the module ("decoder.")."""
    w, _ = bundle.read_safetensors(os.path.join(bundle_dir, "weights.safetensors"))
    sd = module.state_dict()
    n = 0
    for name, q in w.items():
        if not name.endswith(".qscale") and name + ".qscale" in w and name.startswith(prefix):
            key = name[len(prefix):]
            s = w[name + ".qscale"].astype("float32")
            v = q.astype("float32") * s.reshape((-1,) + (1,) * (q.ndim - 1))
            if name + "_scale" in w:  # export_encoder.py's integer codes: the int8 codes stand for K, W = K x scale
                v = v * w[name + "_scale"].astype("float32")[0]
            v = torch.from_numpy(v)
            sd[key] = v.reshape(sd[key].shape)
            n += 1
    module.load_state_dict(sd)
    return n


class Models:
    """The float32 captioner (encoder + decoder) and the ImageNet classifier, as the shipped bundles hold them; with
    int8_dir (a folder with the three bundles made by scripts/quantize.mjs), their int8 codes replace the weights."""

    def __init__(self, captioner=os.path.join(MODELS, "flickr8k-mobilenet"),
                 classifier=os.path.join(MODELS, "mobilenet-v2-imagenet"), int8_dir=None):
        self.enc, self.dec, self.itos, self.cfg = bundle.load_bundle(captioner)
        self.enc.eval()
        self.size = bundle.input_size(self.cfg)
        self.cls = bundle.load_encoder_bundle(classifier)
        if int8_dir:
            n = load_int8_codes(self.dec, os.path.join(int8_dir, os.path.basename(captioner)), "decoder.")
            n += load_int8_codes(self.enc, os.path.join(int8_dir, self.cfg["encoder"]["bundle"]))
            n += load_int8_codes(self.cls, os.path.join(int8_dir, os.path.basename(classifier)))
            print("int8 codes of %d weights from %s" % (n, int8_dir), flush=True)
        self.cls_size = bundle.input_size(json.load(open(os.path.join(classifier, "config.json"))))
        self.labels = open(os.path.join(classifier, "labels.txt")).read().rstrip("\n").split("\n")
        self.stoi = {w: i for i, w in enumerate(self.itos)}
        self.class_words = imagenet_words.vocab_words(self.stoi)
        d = self.cfg["decoding"]
        self.beam, self.length_norm = d["num_beams"], d["length_norm"]
        self.max_len = self.cfg["decoder"]["max_len"]
        e = self.cfg["encoder"]
        self.colour, self.position = e.get("cell_colour") == "mean_rgb", e.get("cell_position") == "xy"

    @torch.no_grad()
    def features(self, rgb):
        x = mobilenet.preprocess_rgba(rgb, self.size)[None]
        return mobilenet.decoder_grid(self.enc, x, self.colour, self.position)[0]

    @torch.no_grad()
    def top1(self, rgb):
        x = mobilenet.preprocess_rgba(rgb, self.cls_size)[None]
        prob = torch.softmax(mobilenet.classify(self.cls, x)[0], dim=0)
        i = int(prob.argmax())
        return i, float(prob[i])

    def caption(self, feats, constraint=None):
        """The engine's search with the bundle's default decoding (beam, length_norm, max_len; <unk> banned), with
        the constraint when one is given (None: no constrained answer)."""
        return constrained_beam_decode(self.dec, feats, constraint, beam=self.beam, max_len=self.max_len,
                                       length_norm=self.length_norm, banned=(sat.UNK,))

    def describe(self, name, rgb):
        """One output line (see the module doc) for a photo's RGB pixels."""
        feats = self.features(rgb)
        cls, prob = self.top1(rgb)
        plain = text.decode(self.caption(feats)["tokens"], self.itos)
        words = list(self.class_words[cls])
        cbs = None
        if words:
            r = self.caption(feats, [self.stoi[w] for w in words])
            cbs = text.decode(r["tokens"], self.itos) if r is not None else None
        return dict(image=name, top1=cls, label=self.labels[cls].split(",")[0], prob=round(prob, 4), words=words,
                    caption=plain, caption_cbs=cbs)


def everyday_rgb(path):
    """An everyday photo as caption_everyday.mjs decodes it: PIL, EXIF orientation applied, RGB."""
    import numpy as np
    from PIL import Image, ImageOps
    with Image.open(path) as im:
        return np.asarray(ImageOps.exif_transpose(im).convert("RGB"), dtype=np.uint8)


def chosen(row, tau):
    """The caption a row gives at threshold tau: the constrained one when the rule constrains and it finished."""
    if row["words"] and row["prob"] >= tau and row["caption_cbs"] is not None:
        return row["caption_cbs"]
    return row["caption"]


def summarize(rows, refs, taus):
    """BLEU-4 (text.bleu_scores) without constraints and at each tau, with how many photos were constrained."""
    out = {"unconstrained": dict(bleu4=round(text.bleu_scores([r["caption"] for r in rows], refs)["bleu4"], 2))}
    for tau in taus:
        hyps = [chosen(r, tau) for r in rows]
        n = sum(1 for r in rows if r["words"] and r["prob"] >= tau)
        changed = sum(1 for r, h in zip(rows, hyps) if h != r["caption"])
        out["tau %.2f" % tau] = dict(bleu4=round(text.bleu_scores(hyps, refs)["bleu4"], 2), constrained=n,
                                     changed=changed)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("set", choices=["everyday", "dev", "test"])
    ap.add_argument("--out", required=True, help="JSONL, one line per photo")
    ap.add_argument("--limit", type=int, default=0, help="first N photos only (say so when quoting a figure)")
    ap.add_argument("--data-dir", default=mobilenet.DEFAULT_DATA_DIR)
    ap.add_argument("--taus", type=float, nargs="+", default=[0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9])
    ap.add_argument("--int8", metavar="DIR",
                    help="the int8 bundles scripts/quantize.mjs writes (DIR/flickr8k-mobilenet, DIR/flickr8k-mobilenet-"
                         "encoder, DIR/mobilenet-v2-imagenet): their codes replace the float32 weights")
    ap.add_argument("--captions", help="everyday: also write {image, caption} lines at tau = DEFAULT_TAU here (the "
                                       "input of everyday/summarize.py --captions)")
    args = mobilenet.parse_args_with_threads(ap)
    t0 = time.time()
    m = Models(int8_dir=args.int8)
    rows = []
    done = {}
    if os.path.exists(args.out):  # resume: keep the lines already written
        done = {r["image"]: r for r in map(json.loads, open(args.out)) if r}
    if args.set == "everyday":
        names = sorted(f for f in os.listdir(EVERYDAY) if f.lower().endswith((".jpg", ".jpeg", ".png")))
        refs = None
    else:
        names = engine_io.split_names(args.data_dir, args.set)
        allcaps = engine_io.flickr8k_captions(args.data_dir)
    if args.limit:
        names = names[:args.limit]
    tar = os.path.join(args.data_dir, "flickr8k", "flickr8k_images_160.tar")
    with open(args.out, "a") as out, engine_io.photo_tar(tar) as tar_rgb:
        for k, n in enumerate(names):
            if n in done:
                rows.append(done[n])
                continue
            rgb = everyday_rgb(os.path.join(EVERYDAY, n)) if args.set == "everyday" else tar_rgb(n)
            r = m.describe(n, rgb)
            rows.append(r)
            out.write(json.dumps(r) + "\n")
            out.flush()
            if k % 50 == 0:
                print("%d/%d %.0fs %s | %s (%.2f) | %s" % (k, len(names), time.time() - t0, r["caption"], r["label"],
                                                         r["prob"], r["caption_cbs"]), flush=True)
    if args.set != "everyday":
        refs = [allcaps[n] for n in names]
        print(json.dumps(dict(set=args.set, images=len(names), mapping=imagenet_words.MAPPING_VERSION,
                              bleu=summarize(rows, refs, args.taus))), flush=True)
    else:
        if args.captions:
            with open(args.captions, "w") as f:
                f.writelines(json.dumps(dict(image=r["image"], caption=chosen(r, DEFAULT_TAU))) + "\n" for r in rows)
        for tau in args.taus:
            print("tau %.2f: %d of %d constrained, %d captions changed" % (
                tau, sum(1 for r in rows if r["words"] and r["prob"] >= tau), len(rows),
                sum(1 for r in rows if chosen(r, tau) != r["caption"])))


if __name__ == "__main__":
    main()
