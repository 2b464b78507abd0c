"""BERT (BertModel, BertForSequenceClassification) in plain PyTorch 1.13, following Hugging Face's modeling_bert.py
module by module, with its weight names and config fields, so that a checkpoint's state_dict loads into it unchanged.

Reproduced upstream behaviours (the reference src/models/hf_bert.cpp is checked against):
  - BertConfig fields and defaults: vocab_size 30522, hidden_size 768, num_hidden_layers 12, num_attention_heads 12,
    intermediate_size 3072, hidden_act "gelu", max_position_embeddings 512, type_vocab_size 2, layer_norm_eps 1e-12.
  - BertEmbeddings: word_embeddings[ids] + position_embeddings[0..T-1] (HF's position_ids buffer = arange) +
    token_type_embeddings[0] (HF's default token_type_ids: zeros), then LayerNorm(eps) (dropout: identity at eval).
  - BertSelfAttention (absolute positions only): query/key/value Linear, head i owns columns [i·d, (i+1)·d),
    softmax(q·kᵀ / √d_head)·v, heads concatenated; one sequence, no padding mask.
  - Post-LN BertLayer: h = LayerNorm(h + dense(attn(h))); h = LayerNorm(h + output.dense(act(intermediate.dense(h)))),
    act = ACT2FN[hidden_act]: "gelu" (erf form), "gelu_new" / "gelu_pytorch_tanh" (tanh form), "relu".
  - BertPooler: tanh(dense(h[CLS = position 0])); BertForSequenceClassification: classifier(pooled).
  - Outputs as output_attentions / output_hidden_states: one [heads, T, T] map per layer, num_hidden_layers + 1
    hidden states (the embeddings' output, then every layer's).
Not reproduced: relative position_embedding_type, is_decoder / cross-attention, padding masks across a batch.
"""
import math

import torch
from torch import nn


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


ACTIVATIONS = {"gelu": nn.functional.gelu, "gelu_new": gelu_tanh, "gelu_pytorch_tanh": gelu_tanh,
               "relu": nn.functional.relu, "silu": nn.functional.silu, "swish": nn.functional.silu}

DEFAULTS = {"vocab_size": 30522, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
            "intermediate_size": 3072, "hidden_act": "gelu", "max_position_embeddings": 512, "type_vocab_size": 2,
            "layer_norm_eps": 1e-12}


def config_value(config, key, defaults=DEFAULTS):
    value = config.get(key)
    return defaults[key] if value is None else value


def num_labels(config):
    """HF: num_labels = len(id2label) when id2label is given, else 2."""
    return len(config["id2label"]) if config.get("id2label") else config.get("num_labels", 2)


class SelfAttention(nn.Module):
    """Multi-head scaled dot-product attention over q, k, v already projected: [T, H·d] each → ([T, H·d], [H, T, T])."""

    def __init__(self, heads):
        super().__init__()
        self.heads = heads

    def forward(self, q, k, v):
        t, width = q.shape
        d = width // self.heads
        q, k, v = (x.view(t, self.heads, d).transpose(0, 1) for x in (q, k, v))  # [H, T, d]
        probs = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(d), dim=-1)    # [H, T, T]
        return (probs @ v).transpose(0, 1).reshape(t, width), probs


class BertEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = config_value(c, "hidden_size")
        self.word_embeddings = nn.Embedding(config_value(c, "vocab_size"), h)
        self.position_embeddings = nn.Embedding(config_value(c, "max_position_embeddings"), h)
        self.token_type_embeddings = nn.Embedding(config_value(c, "type_vocab_size"), h)
        self.LayerNorm = nn.LayerNorm(h, eps=config_value(c, "layer_norm_eps"))

    def forward(self, ids):  # ids [T]
        positions = torch.arange(ids.shape[0])
        types = torch.zeros_like(ids)
        return self.LayerNorm(self.word_embeddings(ids) + self.position_embeddings(positions)
                              + self.token_type_embeddings(types))


class BertSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = config_value(c, "hidden_size")
        self.query, self.key, self.value = nn.Linear(h, h), nn.Linear(h, h), nn.Linear(h, h)
        self.attend = SelfAttention(config_value(c, "num_attention_heads"))

    def forward(self, x):
        return self.attend(self.query(x), self.key(x), self.value(x))


class BertSelfOutput(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = config_value(c, "hidden_size")
        self.dense = nn.Linear(h, h)
        self.LayerNorm = nn.LayerNorm(h, eps=config_value(c, "layer_norm_eps"))

    def forward(self, context, x):
        return self.LayerNorm(self.dense(context) + x)


class BertAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self = BertSelfAttention(c)
        self.output = BertSelfOutput(c)

    def forward(self, x):
        context, probs = self.self(x)
        return self.output(context, x), probs


class BertIntermediate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(config_value(c, "hidden_size"), config_value(c, "intermediate_size"))
        self.act = ACTIVATIONS[config_value(c, "hidden_act")]

    def forward(self, x):
        return self.act(self.dense(x))


class BertOutput(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = config_value(c, "hidden_size")
        self.dense = nn.Linear(config_value(c, "intermediate_size"), h)
        self.LayerNorm = nn.LayerNorm(h, eps=config_value(c, "layer_norm_eps"))

    def forward(self, inner, x):
        return self.LayerNorm(self.dense(inner) + x)


class BertLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = BertAttention(c)
        self.intermediate = BertIntermediate(c)
        self.output = BertOutput(c)

    def forward(self, x):
        a, probs = self.attention(x)
        return self.output(self.intermediate(a), a), probs


class BertEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList([BertLayer(c) for _ in range(config_value(c, "num_hidden_layers"))])


class BertPooler(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = config_value(c, "hidden_size")
        self.dense = nn.Linear(h, h)

    def forward(self, x):
        return torch.tanh(self.dense(x[0]))


class BertModel(nn.Module):
    def __init__(self, c, add_pooling_layer=True):
        super().__init__()
        self.embeddings = BertEmbeddings(c)
        self.encoder = BertEncoder(c)
        self.pooler = BertPooler(c) if add_pooling_layer else None

    def forward(self, ids):
        """ids [T] → (last hidden [T, h], pooled [h] or None, attentions [L × [H, T, T]], hidden states [L+1 × [T, h]])."""
        if ids.shape[0] > config_value(self.config, "max_position_embeddings"):
            raise ValueError("sequence longer than max_position_embeddings")
        h = self.embeddings(ids)
        hidden, attentions = [h], []
        for layer in self.encoder.layer:
            h, probs = layer(h)
            hidden.append(h)
            attentions.append(probs)
        return h, (self.pooler(h) if self.pooler is not None else None), attentions, hidden


class BertForSequenceClassification(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.bert = BertModel(c)
        self.classifier = nn.Linear(config_value(c, "hidden_size"), num_labels(c))

    def forward(self, ids):
        """ids [T] → (logits [labels], pooled, attentions, hidden states)."""
        _, pooled, attentions, hidden = self.bert(ids)
        return self.classifier(pooled), pooled, attentions, hidden


def build(config, head):
    """The HF class the config's architectures[0] names: (model, state_dict prefix used by save_pretrained)."""
    model = BertForSequenceClassification(config) if head else BertModel(config)
    for m in model.modules():
        m.config = config
    return model


def random_state(model, seed, std):
    """Seeded random weights: normal(0, std) matrices and embeddings, small random biases, LayerNorm gains near 1."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for module in model.modules():
            for name, p in module.named_parameters(recurse=False):
                if isinstance(module, nn.LayerNorm) and name == "weight":
                    p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
                elif p.dim() == 1:
                    p.copy_(0.05 * torch.randn(p.shape, generator=g))
                else:
                    p.copy_(std * torch.randn(p.shape, generator=g))
    model.eval()
    return model
