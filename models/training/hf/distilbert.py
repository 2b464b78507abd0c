"""DistilBERT (DistilBertModel, DistilBertForSequenceClassification) in plain PyTorch 1.13, following Hugging Face's
modeling_distilbert.py module by module, with its weight names and config fields (a checkpoint's state_dict loads
into it unchanged).

Reproduced upstream behaviours (the reference src/models/hf_bert.cpp's DistilBERT path is checked against):
  - DistilBertConfig names and defaults: vocab_size 30522, max_position_embeddings 512, sinusoidal_pos_embds False,
    n_layers 6, n_heads 12, dim 768, hidden_dim 3072, activation "gelu"; LayerNorm eps fixed at 1e-12.
  - Embeddings: word_embeddings[ids] + position_embeddings[0..T-1] (no token types), LayerNorm. With
    sinusoidal_pos_embds the position table is HF's create_sinusoidal_embeddings (sin on even, cos on odd columns of
    pos / 10000^(2⌊j/2⌋/dim)), stored in the checkpoint like a learned one.
  - MultiHeadSelfAttention: q_lin, k_lin, v_lin, out_lin; q / √d_head; softmax(q·kᵀ)·v.
  - TransformerBlock (post-LN): h = sa_layer_norm(out_lin(attn(h)) + h); h = output_layer_norm(lin2(act(lin1(h))) + h).
  - Sequence classification: classifier(ReLU(pre_classifier(h[CLS = position 0]))); seq_classif_dropout and every
    dropout are identities at eval.
Not reproduced: padding masks across a batch, head_mask.
"""
import math

import numpy as np
import torch
from torch import nn

from bert import ACTIVATIONS, SelfAttention, num_labels

DEFAULTS = {"vocab_size": 30522, "max_position_embeddings": 512, "sinusoidal_pos_embds": False, "n_layers": 6,
            "n_heads": 12, "dim": 768, "hidden_dim": 3072, "activation": "gelu"}
EPS = 1e-12


def cv(config, key):
    value = config.get(key)
    return DEFAULTS[key] if value is None else value


def sinusoidal_table(n_pos, dim):
    angle = np.array([[pos / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)] for pos in range(n_pos)])
    out = np.zeros((n_pos, dim), np.float32)
    out[:, 0::2] = np.sin(angle[:, 0::2])
    out[:, 1::2] = np.cos(angle[:, 1::2])
    return torch.from_numpy(out)


class Embeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.word_embeddings = nn.Embedding(cv(c, "vocab_size"), cv(c, "dim"))
        self.position_embeddings = nn.Embedding(cv(c, "max_position_embeddings"), cv(c, "dim"))
        self.LayerNorm = nn.LayerNorm(cv(c, "dim"), eps=EPS)
        self.sinusoidal = cv(c, "sinusoidal_pos_embds")

    def forward(self, ids):
        return self.LayerNorm(self.word_embeddings(ids) + self.position_embeddings(torch.arange(ids.shape[0])))


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = cv(c, "dim")
        self.q_lin, self.k_lin, self.v_lin, self.out_lin = (nn.Linear(d, d) for _ in range(4))
        self.attend = SelfAttention(cv(c, "n_heads"))

    def forward(self, x):
        context, probs = self.attend(self.q_lin(x), self.k_lin(x), self.v_lin(x))
        return self.out_lin(context), probs


class FFN(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.lin1 = nn.Linear(cv(c, "dim"), cv(c, "hidden_dim"))
        self.lin2 = nn.Linear(cv(c, "hidden_dim"), cv(c, "dim"))
        self.act = ACTIVATIONS[cv(c, "activation")]

    def forward(self, x):
        return self.lin2(self.act(self.lin1(x)))


class TransformerBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = MultiHeadSelfAttention(c)
        self.sa_layer_norm = nn.LayerNorm(cv(c, "dim"), eps=EPS)
        self.ffn = FFN(c)
        self.output_layer_norm = nn.LayerNorm(cv(c, "dim"), eps=EPS)

    def forward(self, x):
        sa, probs = self.attention(x)
        sa = self.sa_layer_norm(sa + x)
        return self.output_layer_norm(self.ffn(sa) + sa), probs


class Transformer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList([TransformerBlock(c) for _ in range(cv(c, "n_layers"))])


class DistilBertModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.embeddings = Embeddings(c)
        self.transformer = Transformer(c)

    def forward(self, ids):
        """ids [T] → (last hidden [T, dim], None, attentions [n_layers × [H, T, T]], hidden states [n_layers+1])."""
        if ids.shape[0] > cv(self.config, "max_position_embeddings"):
            raise ValueError("sequence longer than max_position_embeddings")
        h = self.embeddings(ids)
        hidden, attentions = [h], []
        for layer in self.transformer.layer:
            h, probs = layer(h)
            hidden.append(h)
            attentions.append(probs)
        return h, None, attentions, hidden


class DistilBertForSequenceClassification(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.distilbert = DistilBertModel(c)
        self.pre_classifier = nn.Linear(cv(c, "dim"), cv(c, "dim"))
        self.classifier = nn.Linear(cv(c, "dim"), num_labels(c))

    def forward(self, ids):
        h, _, attentions, hidden = self.distilbert(ids)
        pooled = torch.relu(self.pre_classifier(h[0]))
        return self.classifier(pooled), pooled, attentions, hidden


def build(config, head):
    return DistilBertForSequenceClassification(config) if head else DistilBertModel(config)


def fix_sinusoidal(model):
    """After random weights: HF fills (and freezes) the position table with the sinusoids when asked."""
    base = model.distilbert if hasattr(model, "distilbert") else model
    if base.embeddings.sinusoidal:
        w = base.embeddings.position_embeddings.weight
        with torch.no_grad():
            w.copy_(sinusoidal_table(*w.shape))
    return model
