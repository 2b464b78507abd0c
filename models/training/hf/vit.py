"""ViT (ViTModel, ViTForImageClassification) in plain PyTorch 1.13, following Hugging Face's modeling_vit.py module by
module, with its weight names and config fields (a checkpoint's state_dict loads into it unchanged), and its image
processor (ViTImageProcessor) for the pixel values.

Reproduced upstream behaviours (the reference src/models/hf_vit.cpp is checked against):
  - ViTConfig fields and defaults: hidden_size 768, num_hidden_layers 12, num_attention_heads 12,
    intermediate_size 3072, hidden_act "gelu", layer_norm_eps 1e-12, image_size 224, patch_size 16,
    num_channels 3, qkv_bias True.
  - ViTEmbeddings: patch_embeddings.projection = Conv2d(C, hidden, kernel = stride = patch_size) over pixel values
    [C, H, W], flattened row-major to [patches, hidden]; cls_token prepended; + position_embeddings [1, N+1, hidden].
    An image whose size is not config.image_size is refused (interpolate_pos_encoding is not reproduced).
  - Pre-LN ViTLayer: h = attention(layernorm_before(h)) + h; h = output.dense(act(intermediate.dense(layernorm_after(h)))) + h,
    attention = query/key/value Linear, softmax(q·kᵀ / √d_head)·v, attention.output.dense.
  - Final vit.layernorm; ViTForImageClassification: classifier(h[CLS]) (no pooler); ViTModel's pooler:
    tanh(dense(h[CLS])).
  - ViTImageProcessor: resize to size, rescale by rescale_factor (1/255), normalise by image_mean/std. The resize
    here (preprocess()) and in the engine is half-pixel bilinear without antialiasing; the processor's PIL resample
    antialiases when it shrinks, so only images already of the model's size (or exact 2x blocks) match it exactly.
"""
import torch
from torch import nn

from bert import ACTIVATIONS, SelfAttention, num_labels

DEFAULTS = {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072,
            "hidden_act": "gelu", "layer_norm_eps": 1e-12, "image_size": 224, "patch_size": 16, "num_channels": 3,
            "qkv_bias": True}


def cv(config, key):
    value = config.get(key)
    return DEFAULTS[key] if value is None else value


class PatchEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        p = cv(c, "patch_size")
        self.projection = nn.Conv2d(cv(c, "num_channels"), cv(c, "hidden_size"), kernel_size=p, stride=p)

    def forward(self, pixels):  # [C, H, W] → [N, hidden]
        return self.projection(pixels.unsqueeze(0)).flatten(2).transpose(1, 2)[0]


class ViTEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        n = (cv(c, "image_size") // cv(c, "patch_size")) ** 2
        self.cls_token = nn.Parameter(torch.zeros(1, 1, cv(c, "hidden_size")))
        self.patch_embeddings = PatchEmbeddings(c)
        self.position_embeddings = nn.Parameter(torch.zeros(1, n + 1, cv(c, "hidden_size")))
        self.image_size = cv(c, "image_size")

    def forward(self, pixels):
        if tuple(pixels.shape[1:]) != (self.image_size, self.image_size):
            raise ValueError(f"Input image size {tuple(pixels.shape[1:])} doesn't match model ({self.image_size})")
        x = torch.cat([self.cls_token[0], self.patch_embeddings(pixels)], dim=0)
        return x + self.position_embeddings[0]


class ViTSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = cv(c, "hidden_size")
        self.query, self.key, self.value = (nn.Linear(h, h, bias=cv(c, "qkv_bias")) for _ in range(3))
        self.attend = SelfAttention(cv(c, "num_attention_heads"))

    def forward(self, x):
        return self.attend(self.query(x), self.key(x), self.value(x))


class ViTSelfOutput(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(cv(c, "hidden_size"), cv(c, "hidden_size"))


class ViTAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = ViTSelfAttention(c)
        self.output = ViTSelfOutput(c)

    def forward(self, x):
        context, probs = self.attention(x)
        return self.output.dense(context), probs


class ViTIntermediate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(cv(c, "hidden_size"), cv(c, "intermediate_size"))


class ViTOutput(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(cv(c, "intermediate_size"), cv(c, "hidden_size"))


class ViTLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, eps = cv(c, "hidden_size"), cv(c, "layer_norm_eps")
        self.attention = ViTAttention(c)
        self.intermediate = ViTIntermediate(c)
        self.output = ViTOutput(c)
        self.layernorm_before = nn.LayerNorm(h, eps=eps)
        self.layernorm_after = nn.LayerNorm(h, eps=eps)
        self.act = ACTIVATIONS[cv(c, "hidden_act")]

    def forward(self, x):
        a, probs = self.attention(self.layernorm_before(x))
        x = a + x
        return self.output.dense(self.act(self.intermediate.dense(self.layernorm_after(x)))) + x, probs


class ViTEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList([ViTLayer(c) for _ in range(cv(c, "num_hidden_layers"))])


class ViTPooler(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(cv(c, "hidden_size"), cv(c, "hidden_size"))

    def forward(self, x):
        return torch.tanh(self.dense(x[0]))


class ViTModel(nn.Module):
    def __init__(self, c, add_pooling_layer=True):
        super().__init__()
        self.embeddings = ViTEmbeddings(c)
        self.encoder = ViTEncoder(c)
        self.layernorm = nn.LayerNorm(cv(c, "hidden_size"), eps=cv(c, "layer_norm_eps"))
        self.pooler = ViTPooler(c) if add_pooling_layer else None

    def forward(self, pixels):
        """pixels [C, H, W] → (last hidden [N+1, h] after vit.layernorm, pooled or None, attentions, hidden states
        (num_hidden_layers + 1: the embeddings, then every layer's output before the final layernorm))."""
        h = self.embeddings(pixels)
        hidden, attentions = [h], []
        for layer in self.encoder.layer:
            h, probs = layer(h)
            hidden.append(h)
            attentions.append(probs)
        h = self.layernorm(h)
        return h, (self.pooler(h) if self.pooler is not None else None), attentions, hidden


class ViTForImageClassification(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.vit = ViTModel(c, add_pooling_layer=False)
        self.classifier = nn.Linear(cv(c, "hidden_size"), num_labels(c))

    def forward(self, pixels):
        h, _, attentions, hidden = self.vit(pixels)
        return self.classifier(h[0]), h, attentions, hidden


def build(config, head):
    return ViTForImageClassification(config) if head else ViTModel(config)


def preprocess(image_hwc_uint8, processor):
    """One RGB image [H, W, 3] uint8 → pixel values [3, h, w] (half-pixel bilinear resize without antialiasing)."""
    x = torch.from_numpy(image_hwc_uint8).permute(2, 0, 1).float().unsqueeze(0)
    size = processor["size"]
    x = nn.functional.interpolate(x, size=(size["height"], size["width"]), mode="bilinear", align_corners=False)[0]
    x = x * processor["rescale_factor"]
    mean = torch.tensor(processor["image_mean"]).view(3, 1, 1)
    std = torch.tensor(processor["image_std"]).view(3, 1, 1)
    return (x - mean) / std
