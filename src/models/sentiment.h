// The two SST-2 sentence classifiers of models/training/sentiment (common.py holds the PyTorch reference; export.py
// its loop-by-loop twin that this port follows). Both map token ids of one sentence (no padding) to 2 logits and
// return the attention map they compute.
//
// "selfattn-classifier" — BiLSTM + structured self-attention (Lin et al. 2017, arXiv:1703.03130):
//   X = embedding[ids]                                (T, E)
//   H = BiLSTM(X) = [h_fwd ; h_bwd]                   (T, 2u)      nn/lstm.h, zero initial states
//   A = softmax_T(W_s2 tanh(W_s1 Hᵀ))                 (r, T)       attention/self_attention.h, no biases
//   m = flatten(A H), hop 0 first                     (r·2u,)
//   logits = W_out relu(W_fc m + b_fc) + b_out        (2,)
//   The catalogue op structured_self_attention is exactly this A and M (checked against the goldens).
//
// "relation-classifier" — relation-network self-attention over word pairs (seed 003, K. Kim), directly on the
// embeddings (no LSTM):
//   p_ij = [x_i ; x_j]
//   g_ij = relu(W_g2 relu(W_g1 p_ij + b_g1) + b_g2)   (h,)         pair feature
//   s_ij = w_a2ᵀ tanh(W_a1 p_ij + b_a1) + b_a2        scalar       pair score: a 2-layer MLP
//   α_ij = softmax_j(σ(s_ij))                          (T, T)       row i sums to 1
//   sentence = (1/T) Σ_i Σ_j α_ij g_ij                 (h,)
//   logits = W_out relu(W_fc sentence + b_fc) + b_out
//   This model has its own forward: the catalogue op relation_self_attention scores a pair with one tanh layer
//   (g_ij = tanh(w_gᵀ p_ij + b_g)), while the trained model scores it with a hidden layer of att_hidden units
//   and no output tanh. The feature network, the sigmoid-then-softmax and the mean are the same.
//
// Cost: selfattn O(T·(E + u)·u); relation O(T²·h²) time and O(T²) memory for α — callers bound T (the API
// truncates long inputs, api/sentiment.h).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "io/bundle.h"
#include "kernels/kernels.h"
#include "nn/embedding_projection.h"
#include "nn/linear.h"
#include "nn/lstm.h"
#include "trace/trace.h"

namespace attnlens::models {

struct SentimentForward {
  std::vector<float> logits;              // [num_labels]
  std::vector<float> probabilities;       // softmax(logits)
  AttentionMap attention;                 // "self-attention" [r × T] or "pair-attention" [T × T]
  std::vector<float> hidden;              // selfattn: BiLSTM outputs [T × 2u]; relation: empty
  std::vector<float> sentence_embedding;  // selfattn: flatten(A H) [r·2u]; relation: the mean pair vector [h]
};

class SentimentModel {
 public:
  virtual ~SentimentModel() = default;
  // Builds the model a bundle's "architecture" names, taking every tensor with the shape its config implies
  // and failing (Error naming the tensor) on anything missing, misshapen or unused.
  // projection_cache_bytes bounds the words' input projections the selfattn model keeps
  // (nn/embedding_projection.h; 0 = none, every sentence multiplies its words again — the same bits either way).
  static constexpr std::size_t kProjectionCacheBytes = std::size_t{16} << 20;
  static std::unique_ptr<SentimentModel> from_bundle(const io::Bundle& bundle,
                                                     std::size_t projection_cache_bytes = kProjectionCacheBytes);

  // ids: 1 ≤ T tokens, each in [0, vocab_size). Throws Error for an empty sequence or an id out of range.
  virtual SentimentForward forward(const std::vector<int>& ids) const = 0;

  virtual const char* architecture() const = 0;
  virtual const char* attention_name() const = 0;
  std::size_t vocab_size() const { return vocab_size_; }
  std::size_t emb_dim() const { return emb_dim_; }
  std::size_t num_labels() const { return num_labels_; }

 protected:
  // Throws Error for an empty sequence or an id outside [0, vocab_size).
  void check_ids(const std::vector<int>& ids) const;
  // Embedding rows for ids → x [T × E]; validates the ids.
  std::vector<float> embed(const std::vector<int>& ids) const;
  // logits = W_out relu(W_fc v + b_fc) + b_out, and their softmax.
  void classify_head(const float* v, SentimentForward& out) const;
  void load_common(const io::Bundle& bundle, std::size_t head_in);

  std::size_t vocab_size_ = 0, emb_dim_ = 0, mlp_hidden_ = 0, num_labels_ = 2;
  std::vector<float> embedding_;    // [V × E]
  nn::Linear fc_, out_;  // [mlp × in], [labels × mlp], packed (Rows::few): one row per sentence
};

class SelfAttnClassifier : public SentimentModel {
 public:
  SelfAttnClassifier(const io::Bundle& bundle, std::size_t projection_cache_bytes);
  SentimentForward forward(const std::vector<int>& ids) const override;
  const char* architecture() const override { return "selfattn-classifier"; }
  const char* attention_name() const override { return "self-attention"; }
  std::size_t hops() const { return hops_; }

 private:
  std::size_t lstm_hidden_ = 0, att_hidden_ = 0, hops_ = 0;
  nn::Lstm lstm_;
  // [W_ih_fwd E[id] + b_fwd ; W_ih_bwd E[id] + b_bwd] per word, kept once computed (reads embedding_, lstm_).
  std::unique_ptr<nn::EmbeddingProjection> projection_;
  std::vector<float> ws1_;  // [d_a × 2u]
  std::vector<float> ws2_;  // [r × d_a]
};

class RelationClassifier : public SentimentModel {
 public:
  explicit RelationClassifier(const io::Bundle& bundle);
  SentimentForward forward(const std::vector<int>& ids) const override;
  const char* architecture() const override { return "relation-classifier"; }
  const char* attention_name() const override { return "pair-attention"; }

 private:
  std::size_t rel_hidden_ = 0, att_hidden_ = 0;
  std::vector<float> g1_w_, g1_b_;  // [h × 2E] (columns :E act on x_i, E: on x_j), [h]
  nn::Linear g2_;                   // g_fc2 [h × h]: the product over every word pair, most of the multiply-adds
  std::vector<float> a1_w_, a1_b_;  // [d_a × 2E], [d_a]
  std::vector<float> a2_w_;         // [d_a]
  float a2_b_ = 0.0f;
};

}  // namespace attnlens::models
