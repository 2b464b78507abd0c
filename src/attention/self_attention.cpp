// Structured and relation-network self-attention; formulas and papers in self_attention.h.
#include "attention/self_attention.h"

#include <algorithm>
#include <string>
#include <vector>

#include "attention/alignment.h"
#include "attention/detail.h"
#include "attention/scores.h"
#include "kernels/kernels.h"

namespace attnlens::attention {

using detail::checked_mul;
using detail::require_data;

void structured_self_attention(const StructuredSelfAttentionWeights& w, const float* h, std::size_t t,
                               float* a, float* m, const std::uint8_t* key_keep) {
  const char* op = "structured_self_attention";
  detail::require_positive(w.d_a, op, "d_a");
  detail::require_positive(w.r, op, "r (hops)");
  require_data(w.w_s1, checked_mul(w.d_a, w.d_h, op), op, "w_s1 ([d_a x d_h])");
  require_data(w.w_s2, checked_mul(w.r, w.d_a, op), op, "w_s2 ([r x d_a])");
  require_data(h, checked_mul(t, w.d_h, op), op, "h");
  require_data(a, checked_mul(w.r, t, op), op, "a");
  require_data(m, checked_mul(w.r, w.d_h, op), op, "m");
  if (t == 0) {
    for (std::size_t i = 0; i < w.r * w.d_h; ++i) m[i] = 0.0f;
    return;
  }
  // hidden = tanh(H W_s1ᵀ) [T × d_a]; logits = W_s2 hiddenᵀ [r × T].
  std::vector<float> hidden(t * w.d_a);
  kernels::gemm_nt_bias_act(t, w.d_a, w.d_h, h, w.d_h, w.w_s1, w.d_h, hidden.data(), w.d_a, nullptr,
                            kernels::Activation::none);
  kernels::vtanh(hidden.data(), hidden.size());
  detail::matmul_nt(w.r, t, w.d_a, w.w_s2, hidden.data(), a);
  AlignMask mask;
  mask.key_keep = key_keep;
  align_soft(a, w.r, t, mask);
  detail::matmul(w.r, w.d_h, t, a, h, m);
}

float structured_penalty(const float* a, std::size_t r, std::size_t t) {
  const char* op = "structured_penalty";
  require_data(a, checked_mul(r, t, op), op, "a");
  // Accumulated in double: the penalty sums r² squared terms that are often tiny.
  double total = 0.0;
  for (std::size_t i = 0; i < r; ++i) {
    for (std::size_t k = 0; k < r; ++k) {
      double g = static_cast<double>(kernels::dot(a + i * t, a + k * t, t));
      if (i == k) g -= 1.0;
      total += g * g;
    }
  }
  return static_cast<float>(total);
}

void relation_self_attention(const RelationAttentionWeights& w, const float* x, std::size_t t, float* a,
                             float* word, float* sentence) {
  const char* op = "relation_self_attention";
  detail::require_positive(w.d, op, "d");
  detail::require_positive(w.d_f, op, "d_f");
  const std::size_t d2 = checked_mul(2, w.d, op);
  require_data(w.w_f1, checked_mul(w.d_f, d2, op), op, "w_f1 ([d_f x 2d])");
  if (!w.feature_layer) require_data(w.w_f2, checked_mul(w.d_f, w.d_f, op), op, "w_f2 ([d_f x d_f])");
  if (w.d_a == 0) {
    require_data(w.w_g, d2, op, "w_g ([2d])");
  } else {
    require_data(w.w_a1, checked_mul(w.d_a, d2, op), op, "w_a1 ([d_a x 2d])");
    require_data(w.w_a2, w.d_a, op, "w_a2 ([d_a])");
  }
  require_data(x, checked_mul(t, w.d, op), op, "x");
  const std::size_t pairs = checked_mul(t, t, op);
  require_data(a, pairs, op, "a");
  require_data(sentence, w.d_f, op, "sentence");
  for (std::size_t k = 0; k < w.d_f; ++k) sentence[k] = 0.0f;
  if (t == 0) return;

  // Every layer that reads a pair splits over its halves: for a weight row [w_a ; w_b],
  // w·[x_i; x_j] = w_a·x_i + w_b·x_j. So the pair scores and the first feature layer cost O(T·d) projections
  // plus O(T²) additions, and no T² × 2d pair matrix is ever built.
  const std::size_t d = w.d, d_f = w.d_f;
  using kernels::Activation;
  // left [T × n] = x W[:, :d]ᵀ + b, right [T × n] = x W[:, d:]ᵀ for a pair layer W [n × 2d].
  auto halves = [&](const float* weight, const float* bias, std::size_t n, std::vector<float>& left,
                    std::vector<float>& right) {
    left.resize(checked_mul(t, n, op));
    right.resize(t * n);
    kernels::gemm_nt_bias_act(t, n, d, x, d, weight, d2, left.data(), n, bias, Activation::none);
    kernels::gemm_nt_bias_act(t, n, d, x, d, weight + d, d2, right.data(), n, nullptr, Activation::none);
  };
  std::vector<float> left, right;
  if (w.d_a == 0) {
    // g_ij = tanh(w_gᵀ x_ij + b_g)
    halves(w.w_g, nullptr, 1, left, right);
    for (std::size_t i = 0; i < t; ++i) {
      for (std::size_t j = 0; j < t; ++j) a[i * t + j] = left[i] + right[j] + w.b_g;
    }
    kernels::vtanh(a, pairs);
  } else {
    // g_ij = w_a2ᵀ tanh(left_i + right_j) + b_a2: the additive score with both sides projected (scores.h).
    halves(w.w_a1, w.b_a1, w.d_a, left, right);
    std::vector<float> hidden(t * w.d_a);
    score_additive_hidden(w.w_a2, w.d_a, left.data(), t, right.data(), t, a, hidden.data());
    for (std::size_t k = 0; k < pairs; ++k) a[k] += w.b_a2;
  }
  // then the sigmoid and the softmax over each word's row.
  kernels::vsigmoid(a, pairs);
  align_soft(a, t, t);

  // First feature layer halves: left[i] = W_f1[:, :d] x_i + b_f1, right[j] = W_f1[:, d:] x_j ([T × d_f]
  // each).
  halves(w.w_f1, w.b_f1, d_f, left, right);

  // Word i's T pair features, one row block at a time: f1 = relu(left_i + right_j), f2 = relu(W_f2 f1 +
  // b_f2), r_i = Σ_j A_ij f2_ij. Cost O(T²·d_f²) in all.
  std::vector<float> f1(t * d_f), f2(t * d_f), word_row(d_f);
  const float inv_t = 1.0f / static_cast<float>(t);
  for (std::size_t i = 0; i < t; ++i) {
    for (std::size_t j = 0; j < t; ++j) {
      float* row = f1.data() + j * d_f;
      for (std::size_t k = 0; k < d_f; ++k) row[k] = left[i * d_f + k] + right[j * d_f + k];
    }
    kernels::vrelu(f1.data(), f1.size());
    if (w.feature_layer)
      w.feature_layer(t, f1.data(), f2.data());
    else
      kernels::gemm_nt_bias_act(t, d_f, d_f, f1.data(), d_f, w.w_f2, d_f, f2.data(), d_f, w.b_f2,
                                Activation::relu);
    kernels::gemv(d_f, t, a + i * t, f2.data(), d_f, word_row.data());  // r_i = Σ_j A_ij f2_ij
    if (word != nullptr) std::copy_n(word_row.data(), d_f, word + i * d_f);
    kernels::axpy(inv_t, word_row.data(), sentence, d_f);
  }
}

}  // namespace attnlens::attention
