// Self-attention that pools a sentence H [T × d] into a fixed-size representation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace attnlens::attention {

// structured self-attention (Lin et al. 2017, "A Structured Self-attentive Sentence Embedding", eq. 6 of seed
// 000):
//   A = softmax(W_s2 tanh(W_s1 Hᵀ))   — softmax along the T positions, one row per hop (r hops)
//   M = A H                            — r sentence vectors
//   P = ‖A Aᵀ − I‖²_F                 — penalty that pushes hops towards different positions (Lin eq. 8)
struct StructuredSelfAttentionWeights {
  std::size_t d_h = 0;          // size of each h_t (2u for a BiLSTM)
  std::size_t d_a = 0;          // hidden size of the scoring MLP
  std::size_t r = 0;            // hops
  const float* w_s1 = nullptr;  // [d_a × d_h]
  const float* w_s2 = nullptr;  // [r × d_a]
};
// h [T × d_h], key_keep [T] (1 = real token, 0 = padding) or null → a [r × T], m [r × d_h].
void structured_self_attention(const StructuredSelfAttentionWeights& w, const float* h, std::size_t t,
                               float* a, float* m, const std::uint8_t* key_keep = nullptr);
// ‖A Aᵀ − I‖²_F for a [r × T] (Lin eq. 8, without the batch mean and the coefficient).
float structured_penalty(const float* a, std::size_t r, std::size_t t);

// relation-network self-attention (seed 003: K. Kim, "Self-attention: a clever compromise", 2018, which pools
// the pairwise features of a relation network (Santoro et al. 2017) with attention). For every ordered pair
// of positions (i, j), with x_ij = [x_i ; x_j] (concatenation, 2d values):
//   f_ij = relu(W_f2 relu(W_f1 x_ij + b_f1) + b_f2)   — pair feature (the seed's two Dense(relu) layers,
//   "g_fc1/2") g_ij = tanh(w_gᵀ x_ij + b_g)                      — pair score (the seed's Dense(1,
//   activation='tanh')) A_i· = softmax_j(σ(g_ij))                          — sigmoid then softmax, a T×T map,
//   one row per word r_i  = Σ_j A_ij f_ij                               — representation of word i s    =
//   (1/T) Σ_i r_i                               — sentence vector: the mean of the weighted pairs
// Each row of A sums to 1 (word i distributes its attention over its T pairs, itself included, as the seed's
// text describes). The seed's Gluon snippet is looser (it softmaxes along the other axis and multiplies f by
// the pre-softmax sigmoid); this op follows its text and formula.
struct RelationAttentionWeights {
  std::size_t d = 0;            // size of each x_t
  std::size_t d_f = 0;          // pair feature size (the seed's hidden_dim)
  const float* w_f1 = nullptr;  // [d_f × 2d]
  const float* b_f1 = nullptr;  // [d_f] or null
  const float* w_f2 = nullptr;  // [d_f × d_f]
  const float* b_f2 = nullptr;  // [d_f] or null
  const float* w_g = nullptr;   // [2d] (the single-layer score; unused with the MLP score)
  float b_g = 0.0f;
  // The MLP pair score (d_a > 0; the sst2-relation model, models/training/sentiment/common.py):
  //   g_ij = w_a2ᵀ tanh(W_a1 x_ij + b_a1) + b_a2        then A_i· = softmax_j(σ(g_ij)) as above (no outer tanh)
  std::size_t d_a = 0;           // hidden size of the score MLP; 0: the single-layer score w_g, b_g
  const float* w_a1 = nullptr;   // [d_a × 2d]
  const float* b_a1 = nullptr;   // [d_a] or null
  const float* w_a2 = nullptr;   // [d_a]
  float b_a2 = 0.0f;
  // Optional second feature layer: f2 [n × d_f] = relu(W_f2 f1 + b_f2) for n pair rows f1 [n × d_f], run by the
  // caller (a model's own layer, e.g. with int8 weights) instead of w_f2 and b_f2.
  std::function<void(std::size_t n, const float* f1, float* f2)> feature_layer;
};
// x [T × d] → a [T × T], word [T × d_f] (null to skip), sentence [d_f]. Time O(T²·d_f²); extra memory
// O(T·(d_f + d_a)): the T² pair features are computed one word at a time and never stored together.
void relation_self_attention(const RelationAttentionWeights& w, const float* x, std::size_t t, float* a,
                             float* word, float* sentence);

}  // namespace attnlens::attention
