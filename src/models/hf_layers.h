// Layers the Hugging Face encoders share (models/hf_bert.h for BERT and DistilBERT, models/hf_vit.h), on top
// of hf_blocks.h (config reading, LayerNorm, activations, map recording):
//   SelfAttention  HF's encoder self-attention with its output projection — BertSelfAttention +
//   BertSelfOutput.dense,
//                  DistilBERT's MultiHeadSelfAttention (q_lin … out_lin), ViTSelfAttention +
//                  ViTSelfOutput.dense:
//                    y = out( concat_h softmax(q_h·k_hᵀ / √d_head)·v_h ),  q = x·W_qᵀ + b_q (k, v alike)
//                  head h owning columns [h·d_head, (h+1)·d_head) of q, k, v; one sequence, no padding mask.
//   FeedForward    y = down(act(up(x)))  (BertIntermediate + BertOutput.dense, DistilBERT's FFN, ViT's MLP)
#pragma once

#include <cstddef>
#include <string>

#include "io/bundle.h"
#include "models/hf_blocks.h"
#include "nn/linear.h"
#include "trace/trace.h"

namespace attnlens::models::hf {

// y[i] += x[i] for i < n (the residual connections).
void add_in_place(float* y, const float* x, std::size_t n);

class SelfAttention {
 public:
  SelfAttention() = default;
  // Weights <q>.weight, <k>.weight, <v>.weight, <out>.weight [d × d], each with its .bias [d] (HF's encoders
  // all have them; ViT's qkv_bias = false is refused by the converter).
  SelfAttention(const io::Bundle& b, const std::string& q, const std::string& k, const std::string& v,
                const std::string& out, std::size_t d, std::size_t heads);
  // x (n × d) → y (n × d). With `trace`, records the weights [heads × n × n] as `heads` maps (kind, layer); with
  // `vectors`, the query and key vectors they come from (after the bias): hf::record_qk.
  void forward(const float* x, std::size_t n, float* y, AttentionTrace* trace, const std::string& kind, int layer,
               AttentionTrace* vectors = nullptr) const;
  std::size_t heads() const { return heads_; }

 private:
  nn::Linear q_, k_, v_, out_;
  std::size_t d_ = 0, heads_ = 0;
};

class FeedForward {
 public:
  FeedForward() = default;
  // up: <up>.weight [inner × d]; down: <down>.weight [d × inner]; both with biases.
  FeedForward(const io::Bundle& b, const std::string& up, const std::string& down, std::size_t d,
              std::size_t inner, Activation act);
  // x (n × d) → y (n × d).
  void forward(const float* x, std::size_t n, float* y) const;

 private:
  nn::Linear up_, down_;
  std::size_t d_ = 0, inner_ = 0;
  Activation act_ = Activation::gelu;
};

}  // namespace attnlens::models::hf
