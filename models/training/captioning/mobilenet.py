"""MobileNetV2 1.0/224 image encoder and the exact image preprocessing the C++ engine reproduces.

Weights: ../shared/data/mobilenet_v2_imagenet/mobilenet_v2_torchvision_from_tflite_quant.pth (a torchvision
state_dict converted from Google's TF-slim QAT model, Apache-2.0; see that folder's SOURCE.md).

Two details make it match the TFLite reference (SOURCE.md, "How to use it"):
  * input normalisation is pixel/127.5 - 1 (not ImageNet mean/std);
  * the five stride-2 convolutions use TF 'SAME' padding. For a 3x3 kernel, stride 2 and an even input size n,
    TF pads total = max((ceil(n/2)-1)*2 + 3 - n, 0) = 1 pixel, all of it on the right/bottom. So those convs run
    with padding=0 after a zero pad (left=0, right=1, top=0, bottom=1). Every other conv is stride 1 with
    symmetric padding k//2, which TF 'SAME' and PyTorch agree on.

Network (Sandler et al. 2018, "MobileNetV2: Inverted Residuals and Linear Bottlenecks"), per block of
torchvision's layout, BN(x) = (x - running_mean) / sqrt(running_var + 1e-5) * weight + bias, ReLU6(x)=min(max(x,0),6):
  features.0      : conv3x3 s2 3->32, BN, ReLU6
  features.1      : dw3x3 32 (conv.0.*), BN, ReLU6; pw1x1 32->16 (conv.1), BN (conv.2); no residual
  features.2..17  : pw1x1 expand x6 (conv.0.0, BN conv.0.1, ReLU6); dw3x3 stride s (conv.1.0, BN conv.1.1, ReLU6);
                    pw1x1 project (conv.2), BN (conv.3); residual add when stride 1 and in==out channels
  features.18     : conv1x1 320->1280, BN, ReLU6        -> grid features [1280, 7, 7] at 224 input
  classifier.1    : Linear 1280->1000 on the spatial mean of features (ImageNet class i = labels line i+1)
"""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

INPUT_SIZE = 224
# Background that transparent pixels are composited onto (see preprocess_rgba).
BACKGROUND_RGB = (255.0, 255.0, 255.0)
# Names of the convolutions that need TF 'SAME' (right/bottom) padding.
SAME_PAD_CONVS = ("features.0.0", "features.2.conv.1.0", "features.4.conv.1.0", "features.7.conv.1.0",
                  "features.14.conv.1.0")

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
DEFAULT_DATA_DIR = os.path.join(REPO_ROOT, "..", "shared", "data")


class SamePadConv2d(nn.Conv2d):
    """Conv2d with TF 'SAME' padding for stride 2 / 3x3 on even inputs: zero pad (0,1,0,1) then padding=0."""

    def forward(self, x):
        return F.conv2d(F.pad(x, (0, 1, 0, 1)), self.weight, self.bias, self.stride, 0, self.dilation,
                        self.groups)


def _replace_module(root, dotted, new):
    parent = root
    parts = dotted.split(".")
    for p in parts[:-1]:
        parent = getattr(parent, p) if not p.isdigit() else parent[int(p)]
    last = parts[-1]
    if last.isdigit():
        parent[int(last)] = new
    else:
        setattr(parent, last, new)


def build_mobilenet_v2(weights_path=None, data_dir=DEFAULT_DATA_DIR, state=None):
    """torchvision mobilenet_v2 with the TF-SAME stride-2 convs, weights loaded strictly, in eval mode. `state` (a
    state_dict) is used instead of reading weights_path when given."""
    model = torchvision.models.mobilenet_v2()
    modules = dict(model.named_modules())
    for name in SAME_PAD_CONVS:
        old = modules[name]
        assert old.stride == (2, 2) and old.kernel_size == (3, 3), name
        new = SamePadConv2d(old.in_channels, old.out_channels, 3, stride=2, padding=0, groups=old.groups,
                            bias=False)
        _replace_module(model, name, new)
    if state is None and weights_path is None:
        weights_path = os.path.join(data_dir, "mobilenet_v2_imagenet", "mobilenet_v2_torchvision_from_tflite_quant.pth")
    if state is None:
        state = torch.load(weights_path, map_location="cpu")
    model.load_state_dict(state, strict=True)
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def resize_bilinear_half_pixel(img, out_h, out_w):
    """Bilinear resize with half-pixel centres, no antialiasing, float32 arithmetic (what the engine does).

    For output row y: s = (y + 0.5) * in_h / out_h - 0.5, clamped below at 0; y0 = floor(s), y1 = min(y0 + 1,
    in_h - 1), wy = s - y0 (same for columns). Result = (1-wy)*((1-wx)*p00 + wx*p01) + wy*((1-wx)*p10 + wx*p11).
    The scale in_h/out_h is computed in float32. This equals torch.nn.functional.interpolate(mode='bilinear',
    align_corners=False, antialias=False) and TF's resize_bilinear(half_pixel_centers=True).
    img: float32 [H, W, C]. Returns float32 [out_h, out_w, C].
    """
    img = np.asarray(img, dtype=np.float32)
    in_h, in_w = img.shape[:2]

    def axis(n_in, n_out):
        scale = np.float32(n_in) / np.float32(n_out)
        s = (np.arange(n_out, dtype=np.float32) + np.float32(0.5)) * scale - np.float32(0.5)
        s = np.maximum(s, np.float32(0.0))
        i0 = np.floor(s).astype(np.int64)
        i0 = np.minimum(i0, n_in - 1)
        i1 = np.minimum(i0 + 1, n_in - 1)
        w = (s - i0.astype(np.float32)).astype(np.float32)
        return i0, i1, w

    y0, y1, wy = axis(in_h, out_h)
    x0, x1, wx = axis(in_w, out_w)
    wx_ = wx[None, :, None]
    one = np.float32(1.0)
    top = (one - wx_) * img[y0][:, x0] + wx_ * img[y0][:, x1]
    bot = (one - wx_) * img[y1][:, x0] + wx_ * img[y1][:, x1]
    wy_ = wy[:, None, None]
    return ((one - wy_) * top + wy_ * bot).astype(np.float32)


def preprocess_rgba(pixels, size=INPUT_SIZE):
    """Any-size uint8 image -> float32 tensor [3, size, size] in [-1, 1] (size: config.json "image.input_size", 224
    unless a bundle says otherwise; the engine takes multiples of 32, the grid is size/32 cells a side).

    pixels: uint8 array [H, W, 4] (RGBA, straight alpha), [H, W, 3] (RGB) or [H, W] (grey).
    1. Alpha composite onto white, per source pixel, in float32: c = (rgb * a + 255 * (255 - a)) / 255.
       (RGB input means a = 255 everywhere; grey is replicated to R, G and B.)
    2. Resize the whole image (no crop, aspect ratio not kept: Flickr8k images are squashed to squares too)
       to size x size with resize_bilinear_half_pixel.
    3. x = v / 127.5 - 1.
    """
    px = np.asarray(pixels)
    if px.dtype != np.uint8:
        raise ValueError("expected uint8 pixels")
    if px.ndim == 2:
        px = np.stack([px, px, px], axis=-1)
    if px.ndim != 3 or px.shape[2] not in (3, 4) or px.shape[0] < 1 or px.shape[1] < 1:
        raise ValueError("expected an [H, W, 3|4] image with H, W >= 1, got shape %r" % (px.shape,))
    rgb = px[:, :, :3].astype(np.float32)
    if px.shape[2] == 4:
        a = px[:, :, 3:4].astype(np.float32)
        bg = np.array(BACKGROUND_RGB, dtype=np.float32)
        rgb = (rgb * a + bg * (np.float32(255.0) - a)) / np.float32(255.0)
    img = resize_bilinear_half_pixel(rgb, size, size)
    x = img / np.float32(127.5) - np.float32(1.0)
    return torch.from_numpy(np.ascontiguousarray(x.transpose(2, 0, 1)))


def load_image_rgb(path_or_file):
    """Decode an image file with PIL into uint8 RGB [H, W, 3] (training-time only; the engine gets pixels)."""
    from PIL import Image
    with Image.open(path_or_file) as im:
        return np.asarray(im.convert("RGB"), dtype=np.uint8)


def grid_features(model, x):
    """x: [B, 3, s, s] -> grid features [B, g*g, 1280], g = s/32 (224: 7x7), row-major: index = y*g + x."""
    f = model.features(x)  # [B, 1280, g, g]
    return f.flatten(2).transpose(1, 2).contiguous()


def cell_colour(x, grid=7):
    """x: [B, 3, 224, 224] preprocessed input -> [B, grid*grid, 3]: the mean of x over each cell's
    (224/grid)^2 pixels, per channel R, G, B (row-major cells, index = y*grid + x). The `shapes` captioner appends
    these 3 values to each cell's 1280 MobileNetV2 channels (config.json "encoder.cell_colour": "mean_rgb"): the
    ImageNet features alone tell purple from red on only ~93% of the objects (a probe on the training scenes)."""
    b = x.shape[0]
    s = x.shape[2] // grid
    return x.reshape(b, 3, grid, s, grid, s).mean(dim=(3, 5)).flatten(2).transpose(1, 2).contiguous()


def cell_position(grid=7):
    """[grid*grid, 2]: each cell's centre (x, y) scaled to [-1, 1]: ((c + 0.5) / grid * 2 - 1, (r + 0.5) / grid * 2 - 1)
    for cell index r*grid + c (coordinate channels, as in CoordConv, Liu et al. 2018). The `shapes` captioner appends
    them after the cell colour (config.json "encoder.cell_position": "xy") so that attention and the LSTM know where
    a cell is: its captions order objects left to right and name their relative positions."""
    r, c = torch.meshgrid(torch.arange(grid), torch.arange(grid), indexing="ij")
    return torch.stack([(c.flatten().float() + 0.5) / grid * 2 - 1, (r.flatten().float() + 0.5) / grid * 2 - 1], 1)


def decoder_grid(model, x, cell_colour_on=False, cell_position_on=False):
    """The grid the decoder attends over (x: [B, 3, s, s], g = s/32 cells a side): grid_features [B, g*g, 1280], then
    cell_colour [B, g*g, 3] when the bundle has "encoder.cell_colour" = "mean_rgb", then cell_position [g*g, 2] when
    it has "encoder.cell_position" = "xy"."""
    side = x.shape[2] // 32
    g = grid_features(model, x)
    if cell_colour_on:
        g = torch.cat([g, cell_colour(x, side)], dim=2)
    if cell_position_on:
        g = torch.cat([g, cell_position(side).unsqueeze(0).expand(g.shape[0], -1, -1)], dim=2)
    return g


def classify(model, x):
    """ImageNet logits [B, 1000] (torchvision: mean over the grid, then classifier.1; dropout is off in eval)."""
    return model(x)


def parse_args_with_threads(ap):
    """Adds --threads (torch's thread count, default 2) to an argparse parser, parses the command line and sets it."""
    ap.add_argument("--threads", type=int, default=2,
                    help="torch threads (at most 2 on the shared machine; 1 is faster when the cores are busy)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    return args
