// Encoder–decoder Transformer translator (Vaswani et al. 2017), the forward pass of
// models/training/translation/models.py: TransformerSeq2Seq, line by line:
//   x = E[id]·embedding_scale + PE[pos]                   sinusoidal PE, positions from 0; one matrix E (V×d)
//   encoder layer (pre-norm): x += SelfAttn(LN1(x)); x += FFN(LN2(x));          memory = LN_enc(x)
//   decoder layer (pre-norm): y += SelfAttn(LN1(y), causal); y += CrossAttn(LN2(y), memory); y += FFN(LN3(y))
//   logits = LN_dec(y)·Eᵀ (no output bias)
//   MultiHead(Q,K,V) = Concat(head_1..h)·W_Oᵀ + b_O, head_i = softmax(Q_i K_iᵀ/√d_h)·V_i, FFN = W2 relu(W1 x + b1) + b2
// Decoding is incremental: every decoder layer keeps the keys/values of earlier positions of every beam row in the
// catalogue's multi-head KV cache (attention/multi_head.h: rows reordered as the beam forks); the cross keys/values of
// the memory are computed once per sentence and shared by every beam row. With record_maps(), each
// step's softmax is computed in place in the per-call map arena: per row of step t, [layer][head] self rows (t + 1)
// then [layer][head] cross rows (S); trace_hypothesis() gathers a hypothesis' rows into [T,T] and [T,S] maps.
//
// Bundle (config.json "architecture": "transformer-seq2seq"): vocab_size, d_model, heads, d_ff, encoder_layers,
// decoder_layers, max_positions, layer_norm_eps, embedding_scale; the fixed choices norm "pre", activation "relu",
// positional_encoding "sinusoidal", shared_embeddings "source,target,output", output_bias false, attention
// "scaled_dot", final_norms true are checked. Tensors are PyTorch's state_dict names (embed.weight,
// encoder_layers.<l>.self_attn.q_proj.weight, ..., decoder_norm.bias), F32 or F16.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "io/bundle.h"
#include "kernels/kernels.h"
#include "models/seq2seq.h"
#include "nn/linear.h"

namespace attnlens::models {

class TransformerSeq2Seq : public Seq2SeqModel {
 public:
  explicit TransformerSeq2Seq(const io::Bundle& bundle);

  std::size_t vocab_size() const override { return vocab_; }
  std::size_t max_source_ids() const override { return max_positions_; }
  std::size_t max_target_positions() const override { return max_positions_ - 1; }
  std::unique_ptr<Seq2SeqDecoder> start(const std::vector<int>& src, AttentionTrace* trace) const override;
  bool decodes_sources_together() const override { return true; }
  std::unique_ptr<Seq2SeqDecoder> start_many(const std::vector<std::vector<int>>& srcs,
                                             const std::vector<AttentionTrace*>& traces) const override;
  std::vector<float> forward(const std::vector<int>& src, const std::vector<int>& tgt_in,
                             AttentionTrace* trace) const override;
  bool has_query_key_vectors() const override { return true; }
  void query_key_vectors(const std::vector<int>& src, const std::vector<int>& tgt_in,
                         AttentionTrace& out) const override;

  std::size_t d_model() const { return d_; }
  std::size_t heads() const { return heads_; }
  std::size_t encoder_layers() const { return enc_.size(); }
  std::size_t decoder_layers() const { return dec_.size(); }

  using Linear = nn::Linear;  // the encoder's layers and the cross K/V: Rows::any; the decoder step's: Rows::few
  struct Norm {
    std::vector<float> weight, bias;  // (d)
  };
  struct Attention {
    Linear q, k, v, o;  // (d, d) each
  };
  struct EncoderLayer {
    Norm norm1, norm2;
    Attention self_attn;
    Linear ff1, ff2;  // (d_ff, d), (d, d_ff)
  };
  struct DecoderLayer {
    Norm norm1, norm2, norm3;
    Attention self_attn, cross_attn;
    Linear ff1, ff2;
  };
  // The encoded source shared by every row of a decoder.
  struct Encoded {
    std::size_t length = 0;                    // S
    std::vector<float> memory;                 // (S, d) after the final encoder norm
    std::vector<std::vector<float>> cross_k;   // per decoder layer (S, d)
    std::vector<std::vector<float>> cross_v;   // per decoder layer (S, d)
  };
  class Decoder;

 private:
  // With `vectors`, also records each encoder layer's per-head query and key vectors (query_key_vectors()).
  std::shared_ptr<const Encoded> encode(const std::vector<int>& src, AttentionTrace* trace,
                                        AttentionTrace* vectors = nullptr) const;
  // x[i] = E[ids[i]]·scale + PE[first_pos + i·pos_step]  (pos_step 1: a sequence; 0: beam rows at one position)
  void embed(const int* ids, std::size_t n, std::size_t first_pos, std::size_t pos_step, float* x) const;

  std::size_t vocab_ = 0, d_ = 0, heads_ = 0, d_head_ = 0, d_ff_ = 0, max_positions_ = 0;
  float eps_ = 1e-5f, embed_scale_ = 1.0f;
  kernels::PackedMatrix embed_;  // (V, d), packed: the tied output layer is the decoder step's largest product
  std::vector<float> pe_;     // (max_positions, d)
  std::vector<EncoderLayer> enc_;
  std::vector<DecoderLayer> dec_;
  Norm enc_norm_, dec_norm_;
};

}  // namespace attnlens::models
