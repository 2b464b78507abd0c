"""What the engine-side tools share: images as the engine's CLI and goldens take them, the Flickr8k files, the CLI.

Binary PPM (P6, 8-bit RGB) read and write and RGB -> RGBA (the engine has no JPEG decoder); the Flickr8k captions
(Flickr8k.token.txt) and photos (flickr8k_images_160.tar, decoded by PIL to RGB); one run of attnlens-cli with its
JSON lines. No torch, so the engine-side tools (evaluate_engine.py, ground.py, deletion.py) and their tests use it
as well as the exporters and golden scripts.
"""
import argparse
import contextlib
import json
import os
import subprocess
import sys
import tarfile

import numpy as np

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
DATA = os.path.join(REPO, "..", "shared", "data")
SPLIT_FILES = {"test": "Flickr_8k.testImages.txt", "dev": "Flickr_8k.devImages.txt", "train": "Flickr_8k.trainImages.txt"}


def engine_parser(doc=None, flickr8k_split=True):
    """The engine-side tools' command line: --bundle (models/flickr8k-mobilenet), --encoder, --cli (build/attnlens-cli)
    and, with flickr8k_split, --data-dir and --split (test or dev); add the tool's own options to it."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle", default=os.path.join(REPO, "models", "flickr8k-mobilenet"))
    ap.add_argument("--encoder", help="encoder bundle dir (default: the one config.json names, next to --bundle)")
    ap.add_argument("--cli", default=os.path.join(REPO, "build", "attnlens-cli"))
    if flickr8k_split:
        ap.add_argument("--data-dir", default=DATA)
        ap.add_argument("--split", default="test", choices=["dev", "test"])
    return ap


def split_names(data_dir, split):
    """The photo file names of a Flickr8k split, in the split file's order."""
    with open(os.path.join(data_dir, "flickr8k", SPLIT_FILES[split])) as f:
        return [ln.strip() for ln in f if ln.strip()]


def read_ppm(path):
    """H x W x 3 uint8 array of a binary PPM with maxval 255."""
    with open(path, "rb") as f:
        data = f.read()
    parts = data.split(maxsplit=4)
    assert parts[0] == b"P6" and parts[3] == b"255", path
    w, h = int(parts[1]), int(parts[2])
    return np.frombuffer(parts[4][:w * h * 3], np.uint8).reshape(h, w, 3)


def write_ppm(path, rgb):
    """Writes an H x W x 3 array (values 0..255) as a binary PPM."""
    h, w, _ = rgb.shape
    with open(path, "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % (w, h))
        f.write(np.ascontiguousarray(rgb, dtype=np.uint8).tobytes())


def to_rgba(px):
    """H x W x 4: RGB with alpha 255 appended (RGBA passes through)."""
    if px.shape[2] == 4:
        return px
    return np.concatenate([px, np.full(px.shape[:2] + (1,), 255, np.uint8)], axis=2)


def flickr8k_captions(data_dir):
    """{photo file name: [caption #0, #1, ...]} from DATA/flickr8k/Flickr8k.token.txt."""
    caps = {}
    with open(os.path.join(data_dir, "flickr8k", "Flickr8k.token.txt")) as f:
        for ln in f:
            ln = ln.rstrip("\n")
            if ln:
                key, cap = ln.split("\t", 1)
                name, idx = key.rsplit("#", 1)
                caps.setdefault(name, {})[int(idx)] = cap
    return {name: [c[i] for i in sorted(c)] for name, c in caps.items()}


@contextlib.contextmanager
def photo_tar(tar_path):
    """A function NAME.jpg -> H x W x 3 uint8 RGB (PIL's decode) over the photos of a tar, open for the block."""
    from PIL import Image
    with tarfile.open(tar_path) as tar:
        members = {os.path.basename(m.name): m for m in tar.getmembers() if m.isfile()}

        def rgb(name):
            with Image.open(tar.extractfile(members[name])) as im:
                return np.asarray(im.convert("RGB"), dtype=np.uint8)
        yield rgb


def decode_photos(names, tar_path, out_dir):
    """NAME.jpg of the tar -> out_dir/NAME.ppm (PIL, RGB); returns the paths in the order of `names`."""
    paths = []
    with photo_tar(tar_path) as rgb:
        for n in names:
            p = os.path.join(out_dir, n.rsplit(".", 1)[0] + ".ppm")
            write_ppm(p, rgb(n))
            paths.append(p)
    return paths


def run_cli(cmd, stdin_text):
    """Runs attnlens-cli (cmd: argv) on stdin_text; its stdout's JSON lines, or exits with its error."""
    proc = subprocess.run(cmd, input=stdin_text, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit("attnlens-cli failed (%d): %s" % (proc.returncode, proc.stderr or proc.stdout[-2000:]))
    return [json.loads(ln) for ln in proc.stdout.splitlines() if ln.strip()]
