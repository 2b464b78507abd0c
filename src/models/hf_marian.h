// MarianMT (Junczys-Dowmunt et al. 2018, the opus-mt models), the forward pass of Hugging Face's MarianMTModel
// (transformers, models/marian/modeling_marian.py; reference in plain PyTorch: models/training/hf/marian.py), top
// to bottom:
//   x = shared[id]·embed_scale + P[position]      embed_scale = √d_model when scale_embedding, else 1; P computed:
//       P[pos, k] = sin(pos / 10000^(2k/d)), P[pos, ⌈d/2⌉ + k] = cos(pos / 10000^(2k/d))   (sines first, then cosines)
//   encoder layer (post-LN): x = LN(x + SelfAttn(x));  x = LN(x + fc2(act(fc1(x))))        memory = x (no final LN)
//   decoder layer (post-LN): y = LN(y + SelfAttn(y, causal));  y = LN(y + CrossAttn(y, memory));
//                            y = LN(y + fc2(act(fc1(y))))
//   logits = y·sharedᵀ + final_logits_bias;  logits[pad] = −∞ (MarianMTModel's generation never emits pad)
//   Attn(x, m) = Concat_h softmax(q_h·k_hᵀ/√d_head)·v_h · W_outᵀ + b_out, q = q_proj(x), k = k_proj(m), v = v_proj(m)
// Config (bundle "hf_config", HF names and defaults): vocab_size 58101, d_model 1024, encoder_layers / decoder_layers
// 12, encoder_attention_heads / decoder_attention_heads 16, encoder_ffn_dim / decoder_ffn_dim 4096,
// activation_function gelu (opus-mt: swish), max_position_embeddings 1024, scale_embedding false (opus-mt: true),
// pad_token_id 58100, eos_token_id 0, decoder_start_token_id 58100; share_encoder_decoder_embeddings false is
// refused. Tensors: model.shared.weight [V, d], model.{encoder,decoder}.layers.<l>.{self_attn, encoder_attn}.{q,k,v,
// out}_proj.{weight, bias}, ….{self_attn_layer_norm, encoder_attn_layer_norm, final_layer_norm, fc1, fc2}.{weight,
// bias}, final_logits_bias [1, V] (+ lm_head.weight when not tied).
//
// A models::Seq2SeqModel: decoding is incremental (each decoder layer's self keys/values in an
// attention::MultiHeadKvCache, rows reordered as a beam forks; the cross keys/values of the memory computed once),
// so decode::greedy_search / beam_search and trace_hypothesis work on it as on the other translators, with bos =
// decoder_start_token_id and eos = eos_token_id. Maps: "encoder-self-attention" [S, S], "decoder-self-attention"
// [T, T] (zero above the diagonal), "cross-attention" [T, S], one per layer × head.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "io/bundle.h"
#include "models/hf_blocks.h"
#include "models/seq2seq.h"
#include "nn/linear.h"

namespace attnlens::models {

class HfMarian : public Seq2SeqModel {
 public:
  // The kinds its maps are recorded under (the translation task uses its own: api/hf_translation.cpp).
  struct MapNames {
    std::string encoder_self = "encoder-self-attention", decoder_self = "decoder-self-attention",
                cross = "cross-attention";
  };
  explicit HfMarian(const io::Bundle& bundle);
  HfMarian(const io::Bundle& bundle, MapNames names);

  std::size_t vocab_size() const override { return vocab_; }
  std::size_t max_source_ids() const override { return positions_; }
  std::size_t max_target_positions() const override { return positions_; }
  std::unique_ptr<Seq2SeqDecoder> start(const std::vector<int>& src, AttentionTrace* trace) const override;
  std::vector<float> forward(const std::vector<int>& src, const std::vector<int>& tgt_in,
                             AttentionTrace* trace) const override;
  // The neuron view's vectors (by teacher forcing of tgt_in, as forward()): per layer × head, "<kind>.query" and
  // "<kind>.key" for the encoder self, decoder self and cross kinds (hf::record_qk). HF's MarianAttention multiplies
  // the query by 1/√d_head before the product; the vectors here are q_proj's output unscaled, so that map =
  // softmax(q·kᵀ/√d_head) as for every other model's `qk`.
  bool has_query_key_vectors() const override { return true; }
  void query_key_vectors(const std::vector<int>& src, const std::vector<int>& tgt_in,
                         AttentionTrace& out) const override;

  int pad_token_id() const { return pad_; }
  int eos_token_id() const { return eos_; }
  int decoder_start_token_id() const { return start_; }
  std::size_t d_model() const { return d_; }

  struct Attention {
    nn::Linear q, k, v, out;  // (d, d) each
  };
  struct EncoderLayer {
    Attention self_attn;
    hf::LayerNorm self_attn_layer_norm, final_layer_norm;
    nn::Linear fc1, fc2;  // (ffn, d), (d, ffn)
  };
  struct DecoderLayer {
    Attention self_attn, encoder_attn;
    hf::LayerNorm self_attn_layer_norm, encoder_attn_layer_norm, final_layer_norm;
    nn::Linear fc1, fc2;
  };
  // The encoded source: its length and, per decoder layer, the cross-attention keys and values (S, d).
  struct Encoded {
    std::size_t length = 0;
    std::vector<std::vector<float>> cross_k, cross_v;
  };
  class Decoder;

 private:
  // Encodes src (its maps into `trace`, its query/key vectors into `vectors` when given) and starts a decoder.
  std::unique_ptr<Decoder> begin(const std::vector<int>& src, AttentionTrace* trace, AttentionTrace* vectors) const;
  // x (n, d) = shared[ids]·embed_scale + P[first_pos + i]
  void embed(const int* ids, std::size_t n, std::size_t first_pos, std::size_t pos_step, float* x) const;
  // The ids a model takes: [0, vocab).
  void check_ids(const int* ids, std::size_t n, const char* what) const;

  MapNames names_;
  std::size_t vocab_ = 0, d_ = 0, positions_ = 0, enc_heads_ = 0, dec_heads_ = 0, enc_ffn_ = 0, dec_ffn_ = 0;
  int pad_ = 0, eos_ = 0, start_ = 0;
  float embed_scale_ = 1.0f;
  hf::Activation act_ = hf::Activation::gelu;
  std::vector<float> shared_, lm_head_, final_logits_bias_, pe_;  // (V, d), (V, d) or empty, (V), (P, d)
  std::vector<EncoderLayer> enc_;
  std::vector<DecoderLayer> dec_;
};

}  // namespace attnlens::models
