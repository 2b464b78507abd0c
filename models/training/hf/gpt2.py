"""GPT-2 (GPT2LMHeadModel) in plain PyTorch 1.13, following Hugging Face's modeling_gpt2.py module by module, with
its weight names and config fields, so that a checkpoint's state_dict loads into it unchanged.

Reproduced upstream behaviours (the reference the engine's src/models/hf_gpt2.cpp is checked against):
  - GPT2Config fields and defaults: vocab_size 50257, n_positions 1024, n_embd 768, n_layer 12, n_head 12,
    n_inner None (→ 4·n_embd), activation_function "gelu_new", layer_norm_epsilon 1e-5, scale_attn_weights True,
    scale_attn_by_inverse_layer_idx False, bos/eos_token_id 50256.
  - Embeddings: h = wte[ids] + wpe[position], positions counted from the length of past_key_values.
  - Pre-LN blocks: h += attn(ln_1(h)); h += mlp(ln_2(h)); then ln_f.
  - Conv1D layers (c_attn, c_proj, c_fc): y = x·W + b with W stored [in, out] (the transpose of nn.Linear).
  - Attention: c_attn gives q | k | v side by side; head i owns columns [i·d_head, (i+1)·d_head); scores q·kᵀ,
    divided by √d_head when scale_attn_weights, and by (layer_idx + 1) when scale_attn_by_inverse_layer_idx;
    causal mask (future positions take finfo.min, exactly as the `bias` buffer does); softmax; concat; c_proj.
  - MLP: c_proj(act(c_fc(x))), act = ACT2FN[activation_function]: gelu_new (tanh form), gelu (erf), gelu_pytorch_tanh,
    relu, silu/swish.
  - LM head: lm_head.weight tied to transformer.wte.weight, no bias.
  - past_key_values: per layer (key, value), each [batch, heads, seq, d_head], keys/values after c_attn.
  - Greedy generation as generate(do_sample=False, num_beams=1): argmax of the last position's logits, appended
    until max_new_tokens or eos_token_id (kept in the output).
Not reproduced (the engine rejects configs asking for them): add_cross_attention, reorder_and_upcast_attn.
"""
import math

import torch
from torch import nn


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


ACTIVATIONS = {
    "gelu_new": gelu_new,
    "gelu_pytorch_tanh": lambda x: nn.functional.gelu(x, approximate="tanh"),
    "gelu": nn.functional.gelu,
    "relu": nn.functional.relu,
    "silu": nn.functional.silu,
    "swish": nn.functional.silu,
}

DEFAULTS = {"vocab_size": 50257, "n_positions": 1024, "n_embd": 768, "n_layer": 12, "n_head": 12, "n_inner": None,
            "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5, "scale_attn_weights": True,
            "scale_attn_by_inverse_layer_idx": False, "reorder_and_upcast_attn": False, "add_cross_attention": False,
            "bos_token_id": 50256, "eos_token_id": 50256, "tie_word_embeddings": True}


def config_value(config, key):
    value = config.get(key)
    return DEFAULTS[key] if value is None else value


class Conv1D(nn.Module):
    """HF's Conv1D: a linear layer whose weight is stored [in, out]."""

    def __init__(self, nf, nx):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        return torch.addmm(self.bias, x.reshape(-1, x.size(-1)), self.weight).view(*x.shape[:-1], -1)


class GPT2Attention(nn.Module):
    def __init__(self, config, layer_idx):
        super().__init__()
        self.embed_dim = config_value(config, "n_embd")
        self.num_heads = config_value(config, "n_head")
        self.head_dim = self.embed_dim // self.num_heads
        self.scale_attn_weights = config_value(config, "scale_attn_weights")
        self.scale_by_layer = config_value(config, "scale_attn_by_inverse_layer_idx")
        self.layer_idx = layer_idx
        self.c_attn = Conv1D(3 * self.embed_dim, self.embed_dim)
        self.c_proj = Conv1D(self.embed_dim, self.embed_dim)

    def split_heads(self, x):  # [B, T, E] → [B, H, T, d_head]
        return x.view(*x.shape[:-1], self.num_heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, h, layer_past=None):
        q, k, v = self.c_attn(h).split(self.embed_dim, dim=2)
        q, k, v = self.split_heads(q), self.split_heads(k), self.split_heads(v)
        if layer_past is not None:
            k = torch.cat((layer_past[0], k), dim=-2)
            v = torch.cat((layer_past[1], v), dim=-2)
        present = (k, v)
        w = torch.matmul(q, k.transpose(-1, -2))
        if self.scale_attn_weights:
            w = w / torch.full([], v.size(-1) ** 0.5, dtype=w.dtype)
        if self.scale_by_layer:
            w = w / float(self.layer_idx + 1)
        n_q, n_k = q.size(-2), k.size(-2)
        causal = torch.tril(torch.ones(n_k, n_k, dtype=torch.bool))[n_k - n_q:n_k, :n_k]
        w = torch.where(causal, w, torch.full([], torch.finfo(w.dtype).min, dtype=w.dtype))
        w = nn.functional.softmax(w, dim=-1)
        out = torch.matmul(w, v).permute(0, 2, 1, 3).contiguous()
        out = out.view(*out.shape[:-2], self.embed_dim)
        return self.c_proj(out), present, w


class GPT2MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        d = config_value(config, "n_embd")
        inner = config.get("n_inner") or 4 * d
        self.c_fc = Conv1D(inner, d)
        self.c_proj = Conv1D(d, inner)
        self.act = ACTIVATIONS[config_value(config, "activation_function")]

    def forward(self, x):
        return self.c_proj(self.act(self.c_fc(x)))


class GPT2Block(nn.Module):
    def __init__(self, config, layer_idx):
        super().__init__()
        d, eps = config_value(config, "n_embd"), config_value(config, "layer_norm_epsilon")
        self.ln_1 = nn.LayerNorm(d, eps=eps)
        self.attn = GPT2Attention(config, layer_idx)
        self.ln_2 = nn.LayerNorm(d, eps=eps)
        self.mlp = GPT2MLP(config)

    def forward(self, h, layer_past=None):
        a, present, w = self.attn(self.ln_1(h), layer_past)
        h = h + a
        h = h + self.mlp(self.ln_2(h))
        return h, present, w


class GPT2Model(nn.Module):
    def __init__(self, config):
        super().__init__()
        for key in ("add_cross_attention", "reorder_and_upcast_attn"):
            if config_value(config, key):
                raise ValueError(f"GPT-2 reference: {key} is not supported")
        d = config_value(config, "n_embd")
        self.wte = nn.Embedding(config_value(config, "vocab_size"), d)
        self.wpe = nn.Embedding(config_value(config, "n_positions"), d)
        self.h = nn.ModuleList(GPT2Block(config, i) for i in range(config_value(config, "n_layer")))
        self.ln_f = nn.LayerNorm(d, eps=config_value(config, "layer_norm_epsilon"))

    def forward(self, input_ids, past_key_values=None):
        """input_ids [B, T] → (last hidden [B, T, d], presents, attentions [layer] [B, H, T, T_total],
        hidden_states [layer + 1] (the last one after ln_f, as HF returns them))."""
        past_len = 0 if past_key_values is None else past_key_values[0][0].size(-2)
        pos = torch.arange(past_len, past_len + input_ids.size(-1)).unsqueeze(0)
        h = self.wte(input_ids) + self.wpe(pos)
        presents, attentions, hidden = [], [], []
        for i, block in enumerate(self.h):
            hidden.append(h)
            h, present, w = block(h, None if past_key_values is None else past_key_values[i])
            presents.append(present)
            attentions.append(w)
        h = self.ln_f(h)
        hidden.append(h)
        return h, presents, attentions, hidden


class GPT2LMHeadModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.transformer = GPT2Model(config)
        self.lm_head = nn.Linear(config_value(config, "n_embd"), config_value(config, "vocab_size"), bias=False)
        if config_value(config, "tie_word_embeddings"):
            self.lm_head.weight = self.transformer.wte.weight

    def forward(self, input_ids, past_key_values=None):
        h, presents, attentions, hidden = self.transformer(input_ids, past_key_values)
        return self.lm_head(h), presents, attentions, hidden

    @torch.no_grad()
    def greedy(self, prompt_ids, max_new_tokens, eos_token_id):
        """generate(do_sample=False, num_beams=1) on one prompt, through the KV cache: the new ids (eos included when
        produced) and, per step, the margin between the chosen logit and the runner-up."""
        logits, past, _, _ = self(torch.tensor([prompt_ids]))
        out, margins = [], []
        for _ in range(max_new_tokens):
            last = logits[0, -1]
            top = torch.topk(last, 2).values
            nxt = int(torch.argmax(last))
            out.append(nxt)
            margins.append(float(top[0] - top[1]))
            if nxt == eos_token_id:
                break
            logits, past, _, _ = self(torch.tensor([[nxt]]), past)
        return out, margins


def random_state(model, seed, std):
    """Seeded random weights (normal(0, std) matrices, small random biases, LayerNorm gains near 1)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name.endswith("ln_f.weight"):
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
            elif p.dim() == 1:
                p.copy_(0.05 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(std * torch.randn(p.shape, generator=g))
    model.eval()
    return model
