"""Contact sheets for drawing and checking the boxes by eye: 4 photos a sheet, each upscaled to 400x400 with a
10x10 grid whose lines are labelled 0..10 (tenths of the image, the box file's units), the photo's caption above it,
and, with --boxes, each object's boxes drawn and labelled with its word.

  /usr/bin/python3 models/training/captioning/ground_test/render.py FILE.jsonl OUT_DIR [--boxes]

FILE.jsonl: draw.py's output (photos and captions) or test.jsonl (with --boxes). Photos are read from
../shared/data/flickr8k/flickr8k_images_160.tar; the sheets (OUT_DIR/NN.png) hold the photos, so keep them out
of the repository.
"""
import argparse
import io
import json
import os
import tarfile

from PIL import Image, ImageDraw, ImageFont

from draw import SHARED

S, M = 400, 24
COLOURS = [(255, 0, 0), (0, 200, 0), (0, 0, 255), (255, 0, 255), (255, 128, 0), (128, 0, 255)]


def tile(photo, idx, rec, boxes, font):
    im = photo.convert("RGB").resize((S, S), Image.BICUBIC)
    c = Image.new("RGB", (S + 2 * M, S + 2 * M + 14), "white")
    c.paste(im, (M, M + 14))
    d = ImageDraw.Draw(c)
    for i in range(11):
        v = i * S // 10
        col = (255, 255, 0) if i % 5 == 0 else (0, 255, 255)
        d.line([(M + v, M + 14), (M + v, M + 14 + S)], fill=col, width=1)
        d.line([(M, M + 14 + v), (M + S, M + 14 + v)], fill=col, width=1)
        d.text((M + v - 3, M + 14 + S + 2), str(i), fill="black", font=font)
        d.text((4, M + 14 + v - 5), str(i), fill="black", font=font)
    d.text((2, 2), ("%d: %s" % (idx, rec["caption"]))[:75], fill="black", font=font)
    for k, o in enumerate(rec.get("objects", []) if boxes else []):
        col = COLOURS[k % len(COLOURS)]
        for b in o["boxes"]:
            x0, y0, x1, y1 = M + b[0] * S / 10, M + 14 + b[1] * S / 10, M + b[2] * S / 10, M + 14 + b[3] * S / 10
            d.rectangle([x0, y0, x1, y1], outline=col, width=3)
            d.text((x0 + 4, y0 + 3), o["word"], fill=col, font=font)
    return c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("out_dir")
    ap.add_argument("--boxes", action="store_true")
    ap.add_argument("--tar", default=os.path.join(SHARED, "data", "flickr8k", "flickr8k_images_160.tar"))
    args = ap.parse_args()
    recs = [json.loads(ln) for ln in open(args.file, encoding="utf-8") if ln.strip()]
    os.makedirs(args.out_dir, exist_ok=True)
    font = ImageFont.load_default()
    with tarfile.open(args.tar) as tar:
        members = {os.path.basename(m.name): m for m in tar.getmembers() if m.isfile()}
        tiles = [tile(Image.open(io.BytesIO(tar.extractfile(members[r["image"]]).read())), i, r, args.boxes, font)
                 for i, r in enumerate(recs)]
    for s in range(0, len(tiles), 4):
        w, h = tiles[0].size
        sheet = Image.new("RGB", (2 * w, 2 * h), "gray")
        for k, t in enumerate(tiles[s:s + 4]):
            sheet.paste(t, ((k % 2) * w, (k // 2) * h))
        sheet.save(os.path.join(args.out_dir, "%02d.png" % (s // 4)))


if __name__ == "__main__":
    main()
