"""End-to-end Show, Attend and Tell on Flickr8k: the MobileNetV2 encoder is fine-tuned through the attention decoder.
Written for a GPU (the lent device machine); also runs on the CPU for its self-test.

Why: the shipped captioner reads frozen ImageNet features, and `probe_maps.py` showed that no attention target built
from them points into the named object more often than the image centre does: the stride-32 cells of the frozen
network describe most of the photo. Fine-tuning the encoder through the attention lets each cell learn to describe
what lies under it. With `--init-state const` (h_0, c_0 a learned constant) the image reaches the decoder only through
the attention, so the words must be read from the attended cells.

The model is the engine's: MobileNetV2 (mobilenet.build_mobilenet_v2, BatchNorm statistics frozen, so the engine
folds them as before) -> grid [g*g, 1280] (+ the cell centre (x, y) with --cell-position) -> sat.ShowAttendTell, whose
feat_proj is learned here (not the fixed PCA of train.py). Input: the engine's preprocessing (alpha over white,
half-pixel bilinear resize of the whole photo to --input-size, x/127.5-1); g = input_size / 32.

Data (--data DIR): images/NAME.jpg, Flickr8k.token.txt, Flickr_8k.{train,dev}Images.txt, and ground/dev.jsonl +
ground/score.py (the hand-drawn boxes; tuning set only). Default: ../shared/data/flickr8k + ../shared/ground.

Each epoch: dev greedy BLEU-4 (all dev photos), and the grounding of teacher-forced gold captions on the dev boxes
(score.py's pointing / mass). Checkpoints: RUN/last.pt (resume with --resume), RUN/epNN.pt (weights only, float16),
RUN/history.json.

  python3 models/training/captioning/finetune.py --out runs/e2e --epochs 12 --max-minutes 6
  python3 models/training/captioning/finetune.py --self-test     # a few CPU steps on 16 photos

On a CPU (no device lent), two options make a finer grid affordable: --init-bundle starts from a shipped captioner
(its fine-tuned encoder and decoder) instead of ImageNet + a fresh decoder, and --cache-below K computes the frozen
blocks features.0 .. features.K-1 once per photo (float16, kept in RAM and in RUN/cache_*.pt for a resumed run), so
each step runs only features.K .. features.18 and the decoder. At 416x416 and K = 11 that is the 26x26x64 stride-16
map: ~0.25 s per photo once, then a step costs what the decoder costs.

  /usr/bin/python3 models/training/captioning/finetune.py --out runs/C416warm --init-bundle models/flickr8k-mobilenet \
      --input-size 416 --cache-below 11 --train-from 11 --cell-position --entropy 0.04 --epochs 4 --max-minutes 600 \
      --batch-images 32 --lr 2e-4 --enc-lr 1e-4 --resume
(the 13x13 candidate's two runs, C416warm and C416s3: this folder's README.)
"""
import argparse
import json
import math
import os
import random
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bundle  # noqa: E402
import mobilenet  # noqa: E402
import sat  # noqa: E402
import text  # noqa: E402

PAD, START, END, UNK = sat.PAD, sat.START, sat.END, sat.UNK
tokenize, build_vocab = text.tokenize, text.build_vocab


def corpus_bleu4(hyps, refs):
    """nltk corpus_bleu with uniform weights over 1..4-grams and no smoothing (text.bleu_scores' BLEU-4), in percent:
    clipped n-gram counts summed over the corpus, brevity penalty from the reference length closest to each
    hypothesis (shorter one on ties)."""
    import collections
    num = [0] * 4
    den = [0] * 4
    hyp_len = ref_len = 0
    for h, rs in zip(hyps, refs):
        hyp_len += len(h)
        ref_len += min((abs(len(r) - len(h)), len(r)) for r in rs)[1]
        for n in range(1, 5):
            hc = collections.Counter(tuple(h[i:i + n]) for i in range(len(h) - n + 1))
            mx = collections.Counter()
            for r in rs:
                for g, c in collections.Counter(tuple(r[i:i + n]) for i in range(len(r) - n + 1)).items():
                    mx[g] = max(mx[g], c)
            num[n - 1] += sum(min(c, mx[g]) for g, c in hc.items())
            den[n - 1] += max(0, len(h) - n + 1)
    if min(num) == 0:
        return 0.0
    logp = sum(math.log(num[i] / den[i]) for i in range(4)) / 4
    bp = 1.0 if hyp_len > ref_len else math.exp(1 - ref_len / max(hyp_len, 1))
    return 100.0 * bp * math.exp(logp)


def load_data(data_dir, ground_dir, limit_train=0, limit_dev=0):
    caps = {}
    for ln in open(os.path.join(data_dir, "Flickr8k.token.txt"), encoding="utf-8"):
        ln = ln.rstrip("\n")
        if ln:
            key, cap = ln.split("\t", 1)
            caps.setdefault(key.rsplit("#", 1)[0], []).append(cap)
    split = {}
    for s in ("train", "dev"):
        names = [n.strip() for n in open(os.path.join(data_dir, "Flickr_8k.%sImages.txt" % s)) if n.strip()]
        split[s] = [n for n in names if n in caps]
    if limit_train:
        split["train"] = split["train"][:limit_train]
    gold = [json.loads(ln) for ln in open(os.path.join(ground_dir, "dev.jsonl"), encoding="utf-8") if ln.strip()]
    if limit_dev:
        keep = set(g["image"] for g in gold)
        split["dev"] = [n for n in split["dev"] if n in keep] + [n for n in split["dev"] if n not in keep]
        split["dev"] = split["dev"][:limit_dev]
        gold = [g for g in gold if g["image"] in set(split["dev"])]
    return caps, split, gold


def _decode(path):
    from PIL import Image
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB").resize((160, 160), Image.BILINEAR) if im.size != (160, 160)
                          else im.convert("RGB"), dtype=np.uint8)


def load_images(img_dir, names, workers=8):
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(workers) as ex:
        return np.stack(list(ex.map(_decode, [os.path.join(img_dir, n) for n in names])))


def preprocess(u8, size, flip=None):
    """uint8 [B, H, W, 3] (on the device) -> [B, 3, size, size]: the engine's resize (bilinear, half-pixel, no
    antialias: mobilenet.resize_bilinear_half_pixel) and x/127.5-1. flip: bool [B] mirrors those rows."""
    x = u8.permute(0, 3, 1, 2).float()
    x = F.interpolate(x, size=(size, size), mode="bilinear", align_corners=False, antialias=False)
    x = x / 127.5 - 1.0
    if flip is not None and bool(flip.any()):
        x = torch.where(flip[:, None, None, None], x.flip(3), x)
    return x


def build_encoder(args):
    """The ImageNet MobileNetV2: from an encoder bundle (--encoder-bundle: integer codes x scale, equal to the .pth
    to float32 rounding, export_encoder.py) or from the .pth."""
    if not args.encoder_bundle:
        return mobilenet.build_mobilenet_v2(weights_path=args.mobilenet)
    state = bundle.encoder_tensors(args.encoder_bundle)
    for name, buf in torchvision.models.mobilenet_v2().state_dict().items():
        if name.endswith("num_batches_tracked"):
            state[name] = buf
    return mobilenet.build_mobilenet_v2(state=state)


class Captioner(torch.nn.Module):
    def __init__(self, vocab_size, args):
        super().__init__()
        self.enc = build_encoder(args)
        self.enc.classifier = torch.nn.Identity()
        self.grid = args.input_size // 32
        self.cell_position = args.cell_position
        feat_dim = 1280 + (2 if args.cell_position else 0)
        self.dec = sat.ShowAttendTell(vocab_size, feat_dim=feat_dim, proj_dim=args.proj_dim, embed_dim=args.embed_dim,
                                      hidden_dim=args.hidden_dim, att_dim=args.att_dim, dropout=args.dropout,
                                      score_smooth=getattr(args, "score_smooth", 0),
                                      context=getattr(args, "context", "lstm"))
        self.dec.feat_proj.requires_grad_(True)
        torch.nn.init.xavier_uniform_(self.dec.feat_proj.weight)
        torch.nn.init.zeros_(self.dec.feat_proj.bias)
        if args.init_state == "const":
            for lin in (self.dec.init_h, self.dec.init_c):
                lin.weight.data.zero_()
                lin.weight.requires_grad_(False)
        for p in self.enc.parameters():
            p.requires_grad_(False)
        for i in range(args.train_from, 19):  # features.train_from .. features.18
            for name, p in self.enc.features[i].named_parameters():
                # convolutions learn; BatchNorm keeps the ImageNet statistics and affine (frozen, folded by the engine)
                if p.dim() == 4:
                    p.requires_grad_(True)
        self.start = getattr(args, "cache_below", 0)  # grid_features' input: the photo (0) or features.start-1's map
        if getattr(args, "init_bundle", None):
            self.load_bundle(args.init_bundle)
        if getattr(args, "init_checkpoint", None):  # then the weights of a finetune.py epoch (RUN/epNN.pt)
            ck = torch.load(args.init_checkpoint, map_location="cpu")
            self.load_state_dict({k: v.float() for k, v in ck["weights"].items()})

    def load_bundle(self, bundle_dir):
        """Warm start: the encoder and decoder weights of a shipped captioner bundle (same decoder sizes and grid
        features); requires_grad flags stay as set above (h_0/c_0's zero matrices stay frozen)."""
        enc, dec, _, config = bundle.load_bundle(bundle_dir)
        if config["encoder"]["feat_dim"] != self.dec.feat_proj.in_features:
            raise SystemExit("--init-bundle %s: feat_dim %d, this model %d (--cell-position?)" % (
                bundle_dir, config["encoder"]["feat_dim"], self.dec.feat_proj.in_features))
        esd = {k: v for k, v in enc.state_dict().items() if not k.startswith("classifier.")}
        missing, _ = self.enc.load_state_dict(esd, strict=False)
        assert all(k.startswith("classifier") for k in missing), missing
        own = self.dec.state_dict()
        for k, v in dec.state_dict().items():
            if own[k].shape == v.shape:
                own[k] = v
            elif k == "lstm.weight_ih" and own[k].shape[1] < v.shape[1]:  # into a context="output" decoder:
                own[k] = v[:, :own[k].shape[1]].clone()                      # the word columns [E ; z] -> [E]
            elif k == "fc.weight" and own[k].shape[1] > v.shape[1]:        # fc over [h ; beta z]: h's columns,
                own[k] = torch.cat([v, torch.zeros(v.shape[0], own[k].shape[1] - v.shape[1])], dim=1)  # z's zero
            else:
                raise SystemExit("--init-bundle %s: %s has shape %s, this model %s" % (bundle_dir, k, tuple(v.shape),
                                                                                       tuple(own[k].shape)))
        self.dec.load_state_dict(own)

    def train(self, mode=True):
        super().train(mode)
        self.enc.eval()  # BatchNorm statistics stay frozen
        return self

    @torch.no_grad()
    def trunk(self, x):
        """The frozen blocks features.0 .. features.start-1 (--cache-below): photo [B, 3, s, s] -> their map."""
        return self.enc.features[:self.start](x)

    def grid_features(self, x):
        """x: the preprocessed photo [B, 3, s, s], or with --cache-below the cached trunk map."""
        f = self.enc.features[self.start:](x)  # [B, 1280, g, g]
        g = f.flatten(2).transpose(1, 2)  # [B, L, 1280], cell index y*g + x
        if self.cell_position:
            pos = mobilenet.cell_position(self.grid).to(g.device, g.dtype)
            g = torch.cat([g, pos.unsqueeze(0).expand(g.shape[0], -1, -1)], dim=2)
        return g


@torch.no_grad()
def greedy(model, grid, max_len):
    """Batched greedy decoding on the device: token lists without <end>."""
    d = model.dec
    p, keys, h, c = d.encode(grid)
    B = grid.shape[0]
    prev = torch.full((B,), START, dtype=torch.long, device=grid.device)
    done = torch.zeros(B, dtype=torch.bool, device=grid.device)
    out = []
    for _ in range(max_len):
        lg, _, _, h, c = d.step(p, keys, h, c, prev)
        lg[:, UNK] = -float("inf")  # the engine's default: <unk> never emitted
        nxt = lg.argmax(1)
        out.append(torch.where(done, torch.full_like(nxt, PAD), nxt))
        done |= nxt == END
        prev = nxt
        if bool(done.all()):
            break
    seq = torch.stack(out, 1).tolist()
    return [[w for w in s[:s.index(END)] if w != PAD] if END in s else [w for w in s if w != PAD] for s in seq]


@torch.no_grad()
def model_input(model, src, idx, size, flip=None):
    """What grid_features reads for photos idx of src: uint8 photos preprocessed on the device, or (--cache-below)
    their cached float16 trunk maps."""
    dev = next(model.parameters()).device
    if model.start == 0:
        return preprocess(src[idx].to(dev), size, flip)
    return src[idx].to(dev).float()


def build_cache(model, u8, size, batch=32):
    """float16 trunk maps [N, C, h, w] of all photos (CPU), computed once."""
    out = []
    for s in range(0, u8.shape[0], batch):
        out.append(model.trunk(preprocess(u8[s:s + batch], size)).half())
        if s % (batch * 20) == 0:
            print("  cache %d/%d" % (s + len(out[-1]), u8.shape[0]), flush=True)
    return torch.cat(out)


@torch.no_grad()
def mean_fill(model, u8, size, batch=256):
    """What the deletion test puts in a hidden cell, as grid_features' input sees it: for each photo, its mean colour
    preprocessed (model.start == 0: [N, 3]) or the frozen trunk's response to a plain image of that colour away from
    any edge (--cache-below: [N, C], the centre of the trunk map of a 128x128 plain image; the trunk is translation
    equivariant, so every interior position of a plain image gives this vector)."""
    mean = u8.float().mean(dim=(1, 2))  # [N, 3], 0..255
    if model.start == 0:
        return mean / 127.5 - 1.0
    out = []
    for s in range(0, mean.shape[0], batch):
        m = mean[s:s + batch] / 127.5 - 1.0
        plain = m[:, :, None, None].expand(-1, -1, 128, 128).contiguous()
        t = model.trunk(plain)
        out.append(t[:, :, t.shape[2] // 2, t.shape[3] // 2])
    return torch.cat(out)


def pick_hidden(B, grid, share, max_share, gen):
    """bool [B, g*g]: with probability `share` a photo gets k ~ U{1 .. ceil(max_share * g^2)} random cells hidden."""
    L = grid * grid
    hide = torch.zeros(B, L, dtype=torch.bool)
    for b in range(B):
        if float(torch.rand(1, generator=gen)) < share:
            k = int(torch.randint(1, max(2, math.ceil(max_share * L) + 1), (1,), generator=gen))
            hide[b, torch.randperm(L, generator=gen)[:k]] = True
    return hide


@torch.no_grad()
def occlude_pixels(model, x, u8, grid, share, max_share, gen, size):
    """--occlude-pixels: random occlusion done the deletion test's way (deletion.py). The hidden cells' pixel blocks
    of the uint8 photo u8 [B, H, W, 3] (cell (r, c) = rows [round(r*H/g), round((r+1)*H/g)), columns likewise) are
    filled with the photo's mean colour, and the frozen trunk (features.0..cache_below-1) is run on the masked photo,
    so the trainable layers see what the engine computes for a masked photo, edges included; x (the cached trunk
    maps, [B, C, h, w]) gets those rows replaced. Returns a new tensor."""
    hide = pick_hidden(x.shape[0], grid, share, max_share, gen)
    rows = torch.nonzero(hide.any(1)).flatten()
    if rows.numel() == 0:
        return x
    import deletion  # its masking, so training hides cells exactly as the test does
    photos = u8[rows].cpu().numpy()
    img = torch.from_numpy(np.stack([
        deletion.masked(p, torch.nonzero(hide[b]).flatten().numpy(), np.round(p.reshape(-1, 3).mean(0)).astype(np.uint8),
                        grid) for p, b in zip(photos, rows.tolist())]))
    out = x.clone()
    out[rows.to(x.device)] = model.trunk(preprocess(img.to(x.device), size)).to(x.dtype)
    return out


def occlude(x, fill, grid, share, max_share, gen):
    """Random occlusion (random erasing, Zhong et al. 2017, on the grid the decoder attends over): each photo of the
    batch is, with probability `share`, given k ~ U{1 .. ceil(max_share * g^2)} random grid cells hidden, each cell's
    block of x (the preprocessed photo or its cached trunk map, [B, C, h, w] with h, w multiples of g) set to the
    photo's fill vector [B, C]. A model trained so learns to caption from what is left of a photo, which is what
    the deletion test asks of the region it did *not* attend to. Returns a new tensor; x is not changed."""
    B, C, h, w = x.shape
    if share <= 0 or h % grid or w % grid:
        return x
    hide = pick_hidden(B, grid, share, max_share, gen)
    if not bool(hide.any()):
        return x
    m = hide.view(B, 1, grid, grid).float()
    m = m.repeat_interleave(h // grid, dim=2).repeat_interleave(w // grid, dim=3).to(x.device, x.dtype)
    return x * (1 - m) + fill.to(x.device, x.dtype)[:, :, None, None] * m


def decode_with_negative(dec, p, p_neg, cap):
    """Teacher forcing as sat.ShowAttendTell.forward with context "output" (p: projected grid [B, L, P], cap [B, T+1]),
    and every word scored a second time against another photo's projected grid p_neg with the same word history.
    With context "output" the LSTM state h_t never sees the image, so only alpha_t, z_t differ between the two; the
    gate beta_t (a function of h_t) and the dropout mask are shared. Returns logits, alphas, logits_neg [B, T, *]."""
    assert dec.context == "output", "--contrast needs --context output"
    p, keys, h, c = dec.encode_projected(p)
    keys_n = dec.att_feat(p_neg)
    out, out_n, alphas = [], [], []
    for t in range(cap.size(1) - 1):
        h, c = dec.lstm(dec.embed(cap[:, t]), (h, c))
        alpha, z, beta = dec.attend(p, keys, h)
        _, z_n, _ = dec.attend(p_neg, keys_n, h)
        keep = dec.drop(torch.ones(h.shape[0], h.shape[1] + z.shape[1], device=h.device, dtype=h.dtype))
        out.append(dec.fc(torch.cat([h, beta * z], dim=1) * keep))
        out_n.append(dec.fc(torch.cat([h, beta * z_n], dim=1) * keep))
        alphas.append(alpha)
    return torch.stack(out, 1), torch.stack(alphas, 1), torch.stack(out_n, 1)


def content_ids(itos, stop):
    """bool [V]: vocabulary words that name something in a photo: not a special token, not punctuation, not in
    `stop` (deletion.STOP, the function words the deletion test leaves out)."""
    return torch.tensor([i >= len(sat.SPECIALS) and any(ch.isalnum() for ch in w) and w not in stop
                         for i, w in enumerate(itos)])


def contrast_mask(targets, neg_words, content):
    """bool [N, T]: the target tokens (targets [N, T]) the image-contrast loss scores: content words (content [V])
    that none of the negative photo's captions uses (neg_words [N, V] bool, a row per caption, from that caption's
    negative photo), so that a word true of both photos ("man" in two photos of men) is never pushed apart."""
    return content[targets] & ~torch.gather(neg_words, 1, targets) & (targets != PAD)


def contrast_loss(logits, logits_neg, targets, mask, margin):
    """Mean over the masked tokens of max(0, margin - (log p(y_t | own photo) - log p(y_t | other photo))): each
    content word must be at least e^margin times likelier given its own photo than given another one, so it has
    to be read from the image (through alpha_t) rather than from the word history alone. Returns (loss, share of
    masked tokens that already meet the margin)."""
    lp = logits.log_softmax(-1).gather(2, targets.unsqueeze(2)).squeeze(2)
    lpn = logits_neg.log_softmax(-1).gather(2, targets.unsqueeze(2)).squeeze(2)
    gap = lp - lpn
    m = mask.float()
    n = m.sum().clamp(min=1.0)
    return (F.relu(margin - gap) * m).sum() / n, float(((gap >= margin).float() * m).sum() / n)


IRREGULAR = {"men": "man", "women": "woman", "children": "child", "feet": "foot", "teeth": "tooth",
             "mice": "mouse", "geese": "goose"}


def box_word(w):
    """A caption token or a box file's word as the two are matched: lowercased, irregular plurals to the singular,
    then a plural "s" dropped as ../shared/ground/score.py does (words longer than 3 letters)."""
    w = IRREGULAR.get(w.lower(), w.lower())
    return w[:-1] if len(w) > 3 and w.endswith("s") else w


def box_cover(boxes, grid, n=8):
    """float [grid*grid]: the share of each grid cell (row-major, y*grid + x) covered by the union of boxes
    ([x0, y0, x1, y1] in tenths of the image), on n x n sample points per cell -- the cell weights of score.py's
    mass."""
    t = (torch.arange(grid * n, dtype=torch.float32) + 0.5) * (10.0 / (grid * n))  # sample coordinates, 0..10
    inside = torch.zeros(grid * n, grid * n, dtype=torch.bool)  # [y, x]
    for x0, y0, x1, y1 in boxes:
        inside |= ((t >= y0) & (t <= y1))[:, None] & ((t >= x0) & (t <= x1))[None, :]
    return inside.float().view(grid, n, grid, n).mean(dim=(1, 3)).flatten()


def box_targets(records, names, cap_ids, itos, grid):
    """The hand-drawn boxes of training photos (ground_train/train.jsonl) as attention targets. Returns
    {photo index: (cover [5, T-1, L], mask [5, T-1])}: for every target token of the photo's captions whose word
    (box_word) names a boxed object, that object's cell coverage; other tokens are masked out."""
    where = {n: i for i, n in enumerate(names)}
    out = {}
    for rec in records:
        if rec["image"] not in where:
            continue
        i = where[rec["image"]]
        objs = {}
        for o in rec["objects"]:
            objs.setdefault(box_word(o["word"]), []).extend(o["boxes"])
        covers = {w: box_cover(b, grid) for w, b in objs.items() if b}
        ids = cap_ids[i][:, 1:]  # targets [5, T-1]
        cover = torch.zeros(ids.shape[0], ids.shape[1], grid * grid)
        mask = torch.zeros(ids.shape, dtype=torch.bool)
        for r in range(ids.shape[0]):
            for t in range(ids.shape[1]):
                w = box_word(itos[int(ids[r, t])])
                if int(ids[r, t]) >= len(sat.SPECIALS) and w in covers:
                    cover[r, t], mask[r, t] = covers[w], True
        if bool(mask.any()):
            out[i] = (cover, mask)
    return out


def box_loss(alphas, cover, mask):
    """Mean over the masked tokens of -log(sum_i alpha_t,i * cover_i): the attention mass on the boxes of the thing
    the word names (score.py's mass), pushed towards 1. alphas [N, T, L], cover [N, T, L], mask [N, T] bool.
    Returns (loss, mean mass over the masked tokens)."""
    mass = (alphas * cover).sum(-1)
    m = mask.float()
    n = m.sum().clamp(min=1.0)
    return -(torch.log(mass + 1e-6) * m).sum() / n, float((mass * m).sum() / n)


def evaluate(model, dev_src, dev_refs, gold, gold_idx, stoi, itos, args, dev_names):
    model.eval()
    dev = next(model.parameters()).device
    hyps = []
    for s in range(0, dev_src.shape[0], 200):
        x = model_input(model, dev_src, slice(s, s + 200), args.input_size)
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=dev.type == "cuda"):
            g = model.grid_features(x)
        hyps += greedy(model, g.float(), args.max_len)
    bleu = corpus_bleu4([[itos[w] for w in h] for h in hyps], dev_refs)
    # teacher forcing of the gold captions of the dev boxes -> score.py's MODEL lines
    lines = []
    for gi, g in zip(gold_idx, gold):
        words = tokenize(g["caption"])[:args.max_len]
        cap = torch.tensor([[START] + [stoi.get(w, UNK) for w in words] + [END]], device=dev)
        x = model_input(model, dev_src, slice(gi, gi + 1), args.input_size)
        grid = model.grid_features(x).float()
        _, alphas = model.dec(model.dec.feat_proj(grid), cap)  # [1, n+1, L]
        a = alphas[0, :len(words)]
        lines.append({"image": g["image"], "tokens": words,
                      "attention": {"dims": [len(words), model.grid, model.grid], "data": a.flatten().tolist()}})
    sys.path.insert(0, args.ground_dir)
    import score  # the ground set's scorer
    _, _, acc = score.score(gold, lines)
    out = dict(bleu4_greedy=bleu, examples=[" ".join(itos[w] for w in h) for h in hyps[:3]])
    for k, (n, p, ms, c, u) in acc.items():
        if n:
            out[k] = dict(n=n, pointing=100 * p / n, centre=100 * c / n, mass=100 * ms / n, uniform=100 * u / n)
    model.train()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(mobilenet.DEFAULT_DATA_DIR, "flickr8k"),
                    help="Flickr8k folder: images/ (or the 160px tar unpacked), token file, split files")
    ap.add_argument("--ground-dir", default=os.path.join(mobilenet.REPO_ROOT, "..", "shared", "ground"))
    ap.add_argument("--mobilenet", default=None, help="the torchvision .pth (default: ../shared/data/...)")
    ap.add_argument("--encoder-bundle", default=None, help="read the ImageNet weights from this encoder bundle instead")
    ap.add_argument("--out", default=None, help="the run folder (default runs/e2e, with --self-test runs/e2e-selftest)")
    ap.add_argument("--input-size", type=int, default=224)
    ap.add_argument("--train-from", type=int, default=7, help="first features block whose convolutions learn")
    ap.add_argument("--init-bundle", default=None, help="start from this captioner bundle's encoder and decoder")
    ap.add_argument("--init-checkpoint", default=None, help="then load the weights of this RUN/epNN.pt")
    ap.add_argument("--score-smooth", type=int, default=0,
                    help="k > 0: attention scores averaged over each cell's k x k neighbourhood (sat.smooth_scores)")
    ap.add_argument("--cache-below", type=int, default=0,
                    help="K > 0: features.0..K-1 computed once per photo and cached (needs --train-from >= K, no --flip)")
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--max-minutes", type=float, default=6.0)
    ap.add_argument("--batch-images", type=int, default=48, help="photos per batch, each with its 5 captions")
    ap.add_argument("--lr", type=float, default=4e-4)
    ap.add_argument("--enc-lr", type=float, default=1e-4)
    ap.add_argument("--lam", type=float, default=0.01, help="doubly stochastic regularisation weight (SAT eq. 14)")
    ap.add_argument("--entropy", type=float, default=0.0, help="weight of the mean attention entropy (sharpness)")
    ap.add_argument("--dropout", type=float, default=0.5)
    ap.add_argument("--min-count", type=int, default=5)
    ap.add_argument("--max-len", type=int, default=25)
    ap.add_argument("--proj-dim", type=int, default=256)
    ap.add_argument("--embed-dim", type=int, default=256)
    ap.add_argument("--hidden-dim", type=int, default=384)
    ap.add_argument("--att-dim", type=int, default=256)
    ap.add_argument("--init-state", choices=["mean", "const"], default="const")
    ap.add_argument("--cell-position", action="store_true")
    ap.add_argument("--context", choices=["lstm", "output"], default="lstm",
                    help="where z_t goes: the LSTM's input (the paper) or, after the LSTM, the output layer (sat.py)")
    ap.add_argument("--flip", action="store_true", help="mirror half of the training photos")
    ap.add_argument("--occlude", type=float, default=0.0,
                    help="share of training photos with random grid cells hidden (filled with the photo's mean colour)")
    ap.add_argument("--occlude-max", type=float, default=0.5, help="at most this share of the cells hidden")
    ap.add_argument("--occlude-pixels", action="store_true",
                    help="with --cache-below: hide the cells in the photo and re-run the frozen trunk (what the "
                         "deletion test does) instead of filling the cached map's cells")
    ap.add_argument("--contrast", type=float, default=0.0,
                    help="weight of the image-contrast loss (contrast_loss; needs --context output): each content "
                         "word must be likelier given its own photo than given the batch's next photo")
    ap.add_argument("--contrast-margin", type=float, default=1.0, help="its margin in nats")
    ap.add_argument("--box-file", default=None,
                    help="hand-drawn boxes on training photos (ground_train/train.jsonl) for --box-sup")
    ap.add_argument("--box-sup", type=float, default=0.0,
                    help="weight of the box loss: -log of the attention mass on the boxes of each boxed word")
    ap.add_argument("--box-batch", type=int, default=8, help="boxed photos added to every batch (--box-sup)")
    ap.add_argument("--checkpoint-minutes", type=float, default=0.0,
                    help="M > 0: also write RUN/last.pt every M minutes inside an epoch (--resume continues there)")
    ap.add_argument("--stop-after-steps", type=int, default=0,
                    help="write RUN/last.pt and exit after this many steps (the resume check: test_resume.sh)")
    ap.add_argument("--eval-start", action="store_true",
                    help="evaluate the starting weights on dev once, as epoch 0 of history.json")
    ap.add_argument("--limit-train", type=int, default=0)
    ap.add_argument("--limit-dev", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--self-test", action="store_true", help="a few CPU steps on 16 training and 8 dev photos")
    args = ap.parse_args()
    if args.self_test:
        args.limit_train, args.limit_dev, args.epochs, args.batch_images, args.device = 16, 8, 2, 4, "cpu"
        args.out = args.out or os.path.join(HERE, "runs", "e2e-selftest")
    args.out = args.out or os.path.join(HERE, "runs", "e2e")
    if args.context == "output" and args.init_state != "const":
        raise SystemExit("--context output keeps the image out of the LSTM: it needs --init-state const")
    if args.contrast > 0 and args.context != "output":
        raise SystemExit("--contrast scores words against another photo with the same LSTM state: --context output")
    if args.box_sup > 0 and (not args.box_file or args.contrast > 0):
        raise SystemExit("--box-sup needs --box-file and no --contrast")
    if args.cache_below and (args.train_from < args.cache_below or args.flip):
        raise SystemExit("--cache-below %d needs --train-from >= %d and no --flip" % (args.cache_below, args.cache_below))
    torch.set_num_threads(args.threads)
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)
    t0 = time.time()
    print("command:", " ".join(sys.argv), flush=True)
    caps, split, gold = load_data(args.data, args.ground_dir, args.limit_train, args.limit_dev)
    img_dir = os.path.join(args.data, "images")
    tr_names, dv_names = split["train"], split["dev"]
    tr_tok = [[tokenize(c) for c in caps[n]] for n in tr_names]
    itos = build_vocab([t for ts in tr_tok for t in ts], args.min_count)
    if args.init_bundle:  # the warm-started decoder's rows are the bundle's vocabulary (the same list on full data)
        cfg = json.load(open(os.path.join(args.init_bundle, "config.json")))
        itos = open(os.path.join(args.init_bundle, cfg["tokenizer"]["vocab"])).read().rstrip("\n").split("\n")
    stoi = {w: i for i, w in enumerate(itos)}
    dev = torch.device(args.device)
    tr_u8 = torch.from_numpy(load_images(img_dir, tr_names)).to(dev)
    dv_u8 = torch.from_numpy(load_images(img_dir, dv_names))
    dv_refs = [[tokenize(c) for c in caps[n]] for n in dv_names]
    gold_idx = [dv_names.index(g["image"]) for g in gold]
    print("train %d photos, dev %d, vocab %d, ground %d photos; loaded in %.0f s" % (
        len(tr_names), len(dv_names), len(itos), len(gold), time.time() - t0), flush=True)
    # captions per photo as [5, T] id tensors (<start> w.. <end>, padded)
    cap_ids = []
    for ts in tr_tok:
        ids = [[START] + [stoi.get(w, UNK) for w in t[:args.max_len]] + [END] for t in ts]
        T = max(map(len, ids))
        cap_ids.append(torch.tensor([x + [PAD] * (T - len(x)) for x in ids]))
    model = Captioner(len(itos), args).to(dev)
    if args.contrast > 0:
        import deletion  # STOP: the function words
        content = content_ids(itos, deletion.STOP).to(dev)
        photo_words = torch.zeros(len(tr_names), len(itos), dtype=torch.bool)  # [N, V]: words of a photo's captions
        for i, ids in enumerate(cap_ids):
            photo_words[i, ids.flatten()] = True
        photo_words = photo_words.to(dev)
    if args.box_sup > 0:
        recs = [json.loads(ln) for ln in open(args.box_file, encoding="utf-8") if ln.strip()]
        box_t = box_targets(recs, tr_names, cap_ids, itos, model.grid)
        boxed = sorted(box_t)
        if not boxed:
            raise SystemExit("--box-file %s: no boxed word of a training photo's captions" % args.box_file)
        print("boxes: %d of %d photos in the training split, %d boxed caption tokens" % (
            len(boxed), len(recs), sum(int(m.sum()) for _, m in box_t.values())), flush=True)
    tr_src, dv_src = tr_u8, dv_u8
    if args.cache_below:
        cache = os.path.join(args.out, "cache_%d_%d.pt" % (args.cache_below, args.input_size))
        key = dict(train=tr_names, dev=dv_names, init=args.init_bundle, encoder=args.encoder_bundle)
        ck = torch.load(cache) if os.path.exists(cache) else None
        if ck is not None and ck["key"] == key:
            tr_src, dv_src = ck["train"], ck["dev"]
        else:
            model.eval()
            tc = time.time()
            tr_src, dv_src = build_cache(model, tr_u8.cpu(), args.input_size), build_cache(model, dv_u8, args.input_size)
            torch.save(dict(key=key, train=tr_src, dev=dv_src), cache + ".tmp")
            os.replace(cache + ".tmp", cache)
            print("cached features.0..%d: %s in %.0f s" % (args.cache_below - 1, tuple(tr_src.shape[1:]),
                                                           time.time() - tc), flush=True)
    pixel_occlusion = args.occlude > 0 and args.occlude_pixels and model.start > 0
    tr_fill = mean_fill(model, tr_u8.cpu(), args.input_size) if args.occlude > 0 and not pixel_occlusion else None
    occ_gen = torch.Generator().manual_seed(args.seed)
    enc_params = [p for p in model.enc.parameters() if p.requires_grad]
    dec_params = [p for p in model.dec.parameters() if p.requires_grad]
    opt = torch.optim.Adam([dict(params=dec_params, lr=args.lr), dict(params=enc_params, lr=args.enc_lr)])
    hp = dict(feat_dim=model.dec.feat_proj.in_features, proj_dim=args.proj_dim, embed_dim=args.embed_dim,
              hidden_dim=args.hidden_dim, att_dim=args.att_dim, dropout=args.dropout, score_smooth=args.score_smooth,
              context=args.context)
    state = dict(epoch=0, step=0, history=[], batch_pos=0)
    last = os.path.join(args.out, "last.pt")

    def save_last():
        """RUN/last.pt: weights, optimiser, progress (epoch, next batch of the epoch, sums) and the random states,
        written to a temporary file and renamed, so a run killed at any moment leaves a whole checkpoint."""
        state["train_seconds"] = time.time() - t_train
        torch.save(dict(model=model.state_dict(), opt=opt.state_dict(), state=state, itos=itos,
                        rng=dict(torch=torch.get_rng_state(), occ=occ_gen.get_state())), last + ".tmp")
        os.replace(last + ".tmp", last)

    if args.resume and os.path.exists(last):
        ck = torch.load(last, map_location=dev, weights_only=False)
        assert ck["itos"] == itos
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        state = ck["state"]
        state.setdefault("batch_pos", 0)
        if "rng" in ck:
            torch.set_rng_state(ck["rng"]["torch"])
            occ_gen.set_state(ck["rng"]["occ"])
        print("resumed after epoch %d, batch position %d (step %d)" % (state["epoch"], state["batch_pos"],
                                                                       state["step"]), flush=True)
    per_epoch = (len(tr_names) + args.batch_images - 1) // args.batch_images
    total = args.epochs * per_epoch
    print("trainable: encoder %d, decoder %d parameters; %d steps per epoch" % (
        sum(p.numel() for p in enc_params), sum(p.numel() for p in dec_params), per_epoch), flush=True)
    amp = dict(device_type=dev.type, dtype=torch.bfloat16, enabled=dev.type == "cuda")
    t_train = time.time() - state.get("train_seconds", 0.0)
    budget = max(60.0, args.max_minutes * 60 - (time.time() - t0))  # seconds of training this run may spend
    if args.eval_start and state["epoch"] == 0 and state["batch_pos"] == 0 and not state["history"]:
        ev = evaluate(model, dv_src, dv_refs, gold, gold_idx, stoi, itos, args, dv_names)
        ev.update(epoch=0)
        state["history"].append(ev)
        print(json.dumps(ev), flush=True)
        json.dump(state["history"], open(os.path.join(args.out, "history.json"), "w"), indent=1)
    t_ck = time.time()
    while state["epoch"] < args.epochs:
        if (time.time() - t_train) >= budget:
            print("max-minutes reached before epoch %d" % (state["epoch"] + 1), flush=True)
            break
        model.train()
        rng = random.Random(args.seed * 1000 + state["epoch"])
        order = list(range(len(tr_names)))
        rng.shuffle(order)
        sums = state.get("sums") if state["batch_pos"] else None
        ce_sum, n_sum, con_sum, met_sum = sums if sums else (0.0, 0.0, 0.0, 0.0)  # met_sum: box mass with --box-sup
        te = time.time() - (state.get("epoch_elapsed", 0.0) if state["batch_pos"] else 0.0)
        for s in range(state["batch_pos"], len(order), args.batch_images):
            b = order[s:s + args.batch_images]
            # cosine decay over the steps of --epochs or over the --max-minutes budget, whichever ends first
            progress = max(state["step"] / max(1, total), (time.time() - t_train) / budget)
            if progress >= 1.0:
                break
            f = 0.5 * (1 + math.cos(math.pi * progress))
            warm = min(1.0, (state["step"] + 1) / 100)
            opt.param_groups[0]["lr"] = args.lr * f * warm
            opt.param_groups[1]["lr"] = args.enc_lr * f * warm
            idx = torch.tensor(b, device=dev)
            flip = (torch.rand(len(b), device=dev) < 0.5) if args.flip else None
            x = model_input(model, tr_src, idx.to(tr_src.device), args.input_size, flip)
            if tr_fill is not None:
                x = occlude(x, tr_fill[idx.cpu()], model.grid, args.occlude, args.occlude_max, occ_gen)
            elif pixel_occlusion:
                x = occlude_pixels(model, x, tr_u8[idx], model.grid, args.occlude, args.occlude_max, occ_gen,
                                   args.input_size)
            n_plain = len(b)
            if args.box_sup > 0:  # boxed photos appended, drawn per step (so a resumed run draws the same), unoccluded
                extra = random.Random(args.seed * 7919 + state["step"]).sample(boxed, min(args.box_batch, len(boxed)))
                x = torch.cat([x, model_input(model, tr_src, torch.tensor(extra, device=tr_src.device),
                                              args.input_size)])
                b = b + extra
                idx = torch.tensor(b, device=dev)
            T = max(cap_ids[i].shape[1] for i in b)
            cap = torch.cat([F.pad(cap_ids[i], (0, T - cap_ids[i].shape[1])) for i in b]).to(dev)  # [5B, T]
            reps = torch.tensor([cap_ids[i].shape[0] for i in b], device=dev)
            with torch.autocast(**amp):
                grid = model.grid_features(x)
                if args.contrast > 0:  # each photo's negative: the batch's next photo (its captions' words known)
                    neg = torch.roll(idx, -1).repeat_interleave(reps)
                    p_neg = model.dec.feat_proj(torch.roll(grid, -1, dims=0).repeat_interleave(reps, dim=0))
                grid = grid.repeat_interleave(reps, dim=0)
                if args.contrast > 0:
                    logits, alphas, logits_neg = decode_with_negative(model.dec, model.dec.feat_proj(grid), p_neg, cap)
                else:
                    logits, alphas = model.dec(model.dec.feat_proj(grid), cap)
            logits, alphas = logits.float(), alphas.float()
            loss, ce, reg = sat.caption_loss(logits, alphas, cap, args.lam)
            if args.contrast > 0:
                mask = contrast_mask(cap[:, 1:], photo_words[neg], content)
                con, met = contrast_loss(logits, logits_neg.float(), cap[:, 1:], mask, args.contrast_margin)
                loss = loss + args.contrast * con
                con_sum += float(con)
                met_sum += met
            if args.box_sup > 0:
                first = int(reps[:n_plain].sum())  # the boxed photos' caption rows come last
                rows = [box_t[i] for i in b[n_plain:]]
                Tm = cap.shape[1] - 1
                cover = torch.cat([F.pad(c, (0, 0, 0, Tm - c.shape[1])) for c, _ in rows]).to(dev)
                bmask = torch.cat([F.pad(m, (0, Tm - m.shape[1])) for _, m in rows]).to(dev)
                bl, bmass = box_loss(alphas[first:], cover, bmask)
                loss = loss + args.box_sup * bl
                con_sum += float(bl)
                met_sum += bmass
            if args.entropy > 0:
                mask = (cap[:, 1:] != PAD).float()
                ent = -(alphas * torch.log(alphas + 1e-9)).sum(2)
                loss = loss + args.entropy * (ent * mask).sum() / mask.sum()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(dec_params + enc_params, 5.0)
            opt.step()
            state["step"] += 1
            ce_sum += float(ce)
            n_sum += 1
            if n_sum % 25 == 0:
                print("  step %d/%d, ce %.3f%s, %.1f s per step" % (
                    n_sum, per_epoch, ce_sum / n_sum,
                    ", contrast %.3f (margin met %.1f%%)" % (con_sum / n_sum, 100 * met_sum / n_sum)
                    if args.contrast > 0 else ", box loss %.3f (mass %.1f%%)" % (con_sum / n_sum, 100 * met_sum / n_sum)
                    if args.box_sup > 0 else "", (time.time() - te) / n_sum), flush=True)
            stop = state["step"] == args.stop_after_steps
            if stop or (args.checkpoint_minutes > 0 and time.time() - t_ck >= args.checkpoint_minutes * 60):
                state.update(batch_pos=s + args.batch_images, sums=(ce_sum, n_sum, con_sum, met_sum),
                             epoch_elapsed=time.time() - te)
                save_last()
                t_ck = time.time()
                print("  checkpoint: epoch %d, batch position %d, step %d" % (
                    state["epoch"] + 1, state["batch_pos"], state["step"]), flush=True)
                if stop:
                    print("stopped after step %d (--stop-after-steps)" % state["step"], flush=True)
                    return
        state.update(batch_pos=0, sums=None, epoch_elapsed=0.0)
        state["epoch"] += 1
        state["train_seconds"] = time.time() - t_train
        ev = evaluate(model, dv_src, dv_refs, gold, gold_idx, stoi, itos, args, dv_names)
        ev.update(epoch=state["epoch"], train_ce=ce_sum / max(n_sum, 1), epoch_seconds=time.time() - te)
        if args.contrast > 0:
            ev.update(train_contrast=con_sum / max(n_sum, 1), train_margin_met=100 * met_sum / max(n_sum, 1))
        if args.box_sup > 0:
            ev.update(train_box_loss=con_sum / max(n_sum, 1), train_box_mass=100 * met_sum / max(n_sum, 1))
        state["history"].append(ev)
        print(json.dumps(ev), flush=True)
        weights = {k: (v.half() if v.is_floating_point() else v).cpu() for k, v in model.state_dict().items()}
        torch.save(dict(weights=weights, itos=itos, hp=hp, args=vars(args), epoch=state["epoch"], eval=ev),
                   os.path.join(args.out, "ep%02d.pt" % state["epoch"]))
        save_last()
        t_ck = time.time()
        json.dump(state["history"], open(os.path.join(args.out, "history.json"), "w"), indent=1)
    print("done: %d epochs, %.1f min" % (state["epoch"], (time.time() - t0) / 60), flush=True)


if __name__ == "__main__":
    main()
