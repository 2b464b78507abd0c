"""MarianMT (MarianMTModel) in plain PyTorch 1.13, following Hugging Face's modeling_marian.py module by module, with
its weight names and config fields, so that a checkpoint's state_dict loads into it unchanged.

Reproduced upstream behaviours (the reference the engine's src/models/hf_marian.cpp is checked against):
  - MarianConfig fields and defaults: vocab_size 58101, d_model 1024, encoder_layers / decoder_layers 12,
    encoder_attention_heads / decoder_attention_heads 16, encoder_ffn_dim / decoder_ffn_dim 4096,
    activation_function "gelu" (opus-mt checkpoints say "swish" = SiLU), max_position_embeddings 1024,
    scale_embedding False (opus-mt: True), pad_token_id 58100, eos_token_id 0, decoder_start_token_id 58100,
    share_encoder_decoder_embeddings True, tie_word_embeddings True.
  - Embeddings: x = shared[id]·embed_scale (√d_model when scale_embedding, else 1) + P[position], positions from 0
    (the decoder's from the length of its cache). P is MarianSinusoidalPositionalEmbedding's table, computed, never
    learned: P[pos, j] = sin(pos / 10000^(2k/d)) for j = k < ⌈d/2⌉ and cos(pos / 10000^(2k/d)) for j = ⌈d/2⌉ + k —
    every sine in the first half, every cosine in the second (not interleaved), computed in float64, stored float32.
  - No layernorm_embedding, no final encoder/decoder LayerNorm (Marian's layers are post-LN).
  - Attention (MarianAttention): q = q_proj(x)·d_head^−½, k = k_proj, v = v_proj (all with bias), per-head softmax
    (q·kᵀ) (decoder self-attention causal; no padding in one sentence), concat, out_proj.
  - Encoder layer: x = LN(x + SelfAttn(x)); x = LN(x + fc2(act(fc1(x)))).  Decoder layer: y = LN(y + SelfAttn(y,
    causal)); y = LN(y + CrossAttn(y, memory)); y = LN(y + fc2(act(fc1(y)))). LayerNorm eps 1e-5. act =
    ACT2FN[activation_function] (swish/silu, gelu, gelu_new, relu).
  - logits = y·sharedᵀ (lm_head tied to model.shared) + final_logits_bias [1, V].
  - Greedy generation as generate(num_beams=1, do_sample=False): the decoder starts from decoder_start_token_id
    (= pad_token_id), the pad logit is −inf at every step (MarianMTModel's bad_words_ids [[pad]]), argmax appended
    until eos_token_id (kept) or max_new_tokens.
  - past_key_values: per decoder layer (self key, self value, cross key, cross value), each [batch, heads, seq, d_head].
Not reproduced: separate source/target vocabularies (share_encoder_decoder_embeddings False); forced_eos_token_id at
max_length (generation stops at max_new_tokens without forcing eos).
"""
import numpy as np
import torch
from torch import nn

from gpt2 import ACTIVATIONS

DEFAULTS = {"vocab_size": 58101, "d_model": 1024, "encoder_layers": 12, "decoder_layers": 12,
            "encoder_attention_heads": 16, "decoder_attention_heads": 16, "encoder_ffn_dim": 4096,
            "decoder_ffn_dim": 4096, "activation_function": "gelu", "max_position_embeddings": 1024,
            "scale_embedding": False, "pad_token_id": 58100, "eos_token_id": 0, "decoder_start_token_id": 58100,
            "share_encoder_decoder_embeddings": True, "decoder_vocab_size": None}


def config_value(config, key):
    value = config.get(key)
    return DEFAULTS[key] if value is None else value


def sinusoidal_table(n_pos, dim):
    """MarianSinusoidalPositionalEmbedding._init_weight: sines in [0, ⌈d/2⌉), cosines after."""
    pe = np.array([[pos / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)] for pos in range(n_pos)])
    out = torch.zeros(n_pos, dim)
    sentinel = dim // 2 if dim % 2 == 0 else dim // 2 + 1
    out[:, 0:sentinel] = torch.FloatTensor(np.sin(pe[:, 0::2]))
    out[:, sentinel:] = torch.FloatTensor(np.cos(pe[:, 1::2]))
    return out


class MarianSinusoidalPositionalEmbedding(nn.Embedding):
    def __init__(self, num_positions, dim):
        super().__init__(num_positions, dim)
        with torch.no_grad():
            self.weight.copy_(sinusoidal_table(num_positions, dim))
        self.weight.requires_grad = False

    def forward(self, length, past_len=0):
        return super().forward(torch.arange(past_len, past_len + length))


class MarianAttention(nn.Module):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.head_dim = embed_dim // num_heads
        self.scaling = self.head_dim ** -0.5
        self.k_proj = nn.Linear(embed_dim, embed_dim)
        self.v_proj = nn.Linear(embed_dim, embed_dim)
        self.q_proj = nn.Linear(embed_dim, embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def shape(self, x):  # [B, T, E] → [B, H, T, d_head]
        return x.view(x.size(0), -1, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x, kv_input=None, past=None, causal=False):
        """Self-attention when kv_input is None (past: cached (k, v) of earlier positions), cross-attention over
        kv_input otherwise (past: the cross (k, v), reused). Returns (out, (k, v), weights [B, H, T, S])."""
        q = self.shape(self.q_proj(x) * self.scaling)
        if kv_input is not None and past is not None:
            k, v = past
        elif kv_input is not None:
            k, v = self.shape(self.k_proj(kv_input)), self.shape(self.v_proj(kv_input))
        else:
            k, v = self.shape(self.k_proj(x)), self.shape(self.v_proj(x))
            if past is not None:
                k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        w = torch.matmul(q, k.transpose(-1, -2))
        if causal:
            n_q, n_k = q.size(2), k.size(2)
            keep = torch.tril(torch.ones(n_k, n_k, dtype=torch.bool))[n_k - n_q:]
            w = w.masked_fill(~keep, torch.finfo(w.dtype).min)
        w = nn.functional.softmax(w, dim=-1)
        out = torch.matmul(w, v).transpose(1, 2).reshape(x.size(0), -1, self.embed_dim)
        return self.out_proj(out), (k, v), w


class MarianEncoderLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        d = config_value(config, "d_model")
        self.self_attn = MarianAttention(d, config_value(config, "encoder_attention_heads"))
        self.self_attn_layer_norm = nn.LayerNorm(d)
        self.act = ACTIVATIONS[config_value(config, "activation_function")]
        self.fc1 = nn.Linear(d, config_value(config, "encoder_ffn_dim"))
        self.fc2 = nn.Linear(config_value(config, "encoder_ffn_dim"), d)
        self.final_layer_norm = nn.LayerNorm(d)

    def forward(self, x):
        a, _, w = self.self_attn(x)
        x = self.self_attn_layer_norm(x + a)
        x = self.final_layer_norm(x + self.fc2(self.act(self.fc1(x))))
        return x, w


class MarianDecoderLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        d, heads = config_value(config, "d_model"), config_value(config, "decoder_attention_heads")
        self.self_attn = MarianAttention(d, heads)
        self.self_attn_layer_norm = nn.LayerNorm(d)
        self.encoder_attn = MarianAttention(d, heads)
        self.encoder_attn_layer_norm = nn.LayerNorm(d)
        self.act = ACTIVATIONS[config_value(config, "activation_function")]
        self.fc1 = nn.Linear(d, config_value(config, "decoder_ffn_dim"))
        self.fc2 = nn.Linear(config_value(config, "decoder_ffn_dim"), d)
        self.final_layer_norm = nn.LayerNorm(d)

    def forward(self, y, memory, past=None):
        a, self_kv, w_self = self.self_attn(y, past=None if past is None else past[:2], causal=True)
        y = self.self_attn_layer_norm(y + a)
        c, cross_kv, w_cross = self.encoder_attn(y, kv_input=memory, past=None if past is None else past[2:])
        y = self.encoder_attn_layer_norm(y + c)
        y = self.final_layer_norm(y + self.fc2(self.act(self.fc1(y))))
        return y, self_kv + cross_kv, w_self, w_cross


class MarianStack(nn.Module):
    """What MarianEncoder and MarianDecoder both hold, under HF's names: embed_tokens (the shared table),
    embed_scale, embed_positions and the layers."""

    def __init__(self, config, embed_tokens, layer_class, layers_key):
        super().__init__()
        d = config_value(config, "d_model")
        self.embed_scale = d ** 0.5 if config_value(config, "scale_embedding") else 1.0
        self.embed_tokens = embed_tokens
        self.embed_positions = MarianSinusoidalPositionalEmbedding(config_value(config, "max_position_embeddings"), d)
        self.layers = nn.ModuleList(layer_class(config) for _ in range(config_value(config, layers_key)))


class MarianEncoder(MarianStack):
    def __init__(self, config, embed_tokens):
        super().__init__(config, embed_tokens, MarianEncoderLayer, "encoder_layers")

    def forward(self, ids):
        x = self.embed_tokens(ids) * self.embed_scale + self.embed_positions(ids.size(1))
        attentions, hidden = [], []
        for layer in self.layers:
            hidden.append(x)
            x, w = layer(x)
            attentions.append(w)
        hidden.append(x)
        return x, attentions, hidden


class MarianDecoder(MarianStack):
    def __init__(self, config, embed_tokens):
        super().__init__(config, embed_tokens, MarianDecoderLayer, "decoder_layers")

    def forward(self, ids, memory, past=None):
        past_len = 0 if past is None else past[0][0].size(2)
        y = self.embed_tokens(ids) * self.embed_scale + self.embed_positions(ids.size(1), past_len)
        presents, self_w, cross_w, hidden = [], [], [], []
        for i, layer in enumerate(self.layers):
            hidden.append(y)
            y, present, ws, wc = layer(y, memory, None if past is None else past[i])
            presents.append(present)
            self_w.append(ws)
            cross_w.append(wc)
        hidden.append(y)
        return y, presents, self_w, cross_w, hidden


class MarianModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        if not config_value(config, "share_encoder_decoder_embeddings"):
            raise ValueError("Marian reference: separate source/target vocabularies are not supported")
        vocab, d = config_value(config, "vocab_size"), config_value(config, "d_model")
        self.shared = nn.Embedding(vocab, d, config_value(config, "pad_token_id"))
        self.encoder = MarianEncoder(config, self.shared)
        self.decoder = MarianDecoder(config, self.shared)


class MarianMTModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.model = MarianModel(config)
        vocab = config_value(config, "vocab_size")
        self.lm_head = nn.Linear(config_value(config, "d_model"), vocab, bias=False)
        self.lm_head.weight = self.model.shared.weight
        self.register_buffer("final_logits_bias", torch.zeros(1, vocab))

    def forward(self, src_ids, tgt_in):
        """Teacher forcing: (logits [B, T, V], encoder attentions, decoder self, cross, encoder hidden, decoder
        hidden), attentions per layer [B, H, rows, columns]."""
        memory, enc_w, enc_h = self.model.encoder(src_ids)
        y, _, self_w, cross_w, dec_h = self.model.decoder(tgt_in, memory)
        return self.lm_head(y) + self.final_logits_bias, enc_w, self_w, cross_w, enc_h, dec_h

    @torch.no_grad()
    def greedy(self, src_ids, max_new_tokens):
        """generate(num_beams=1, do_sample=False) on one source through the decoder cache: the new ids (after
        decoder_start_token_id; eos kept when produced) and each step's margin between the chosen logit and the
        runner-up (pad excluded)."""
        pad, eos = config_value(self.config, "pad_token_id"), config_value(self.config, "eos_token_id")
        memory, _, _ = self.model.encoder(torch.tensor([src_ids]))
        ids, past, out, margins = [config_value(self.config, "decoder_start_token_id")], None, [], []
        for _ in range(max_new_tokens):
            y, past, _, _, _ = self.model.decoder(torch.tensor([[ids[-1]]]), memory, past)
            logits = (self.lm_head(y) + self.final_logits_bias)[0, -1]
            logits[pad] = float("-inf")
            top = torch.topk(logits, 2).values
            nxt = int(torch.argmax(logits))
            out.append(nxt)
            margins.append(float(top[0] - top[1]))
            ids.append(nxt)
            if nxt == eos:
                break
        return out, margins


def random_state(model, seed, std):
    """Seeded random weights (normal(0, std) matrices, small random biases and final_logits_bias, LayerNorm gains
    near 1); the positional tables stay sinusoidal."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "embed_positions" in name:
                continue
            if "layer_norm" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
            elif p.dim() == 1:
                p.copy_(0.05 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(std * torch.randn(p.shape, generator=g))
        model.final_logits_bias.copy_(0.5 * torch.randn(model.final_logits_bias.shape, generator=g))
    model.eval()
    return model
