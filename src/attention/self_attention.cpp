// Structured and relation-network self-attention; formulas and papers in self_attention.h.
#include "attention/self_attention.h"

#include <string>
#include <vector>

#include "attention/alignment.h"
#include "attention/detail.h"
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
  detail::linear(h, t, w.d_h, w.w_s1, nullptr, w.d_a, hidden.data());
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
  require_data(w.w_f2, checked_mul(w.d_f, w.d_f, op), op, "w_f2 ([d_f x d_f])");
  require_data(w.w_g, d2, op, "w_g ([2d])");
  require_data(x, checked_mul(t, w.d, op), op, "x");
  const std::size_t pairs = checked_mul(t, t, op);
  require_data(a, pairs, op, "a");
  require_data(sentence, w.d_f, op, "sentence");
  for (std::size_t k = 0; k < w.d_f; ++k) sentence[k] = 0.0f;
  if (t == 0) return;

  // Both layers that read a pair split over its halves: for a weight row [w_a ; w_b],
  // w·[x_i; x_j] = w_a·x_i + w_b·x_j. So the pair scores and the first feature layer cost O(T·d) projections
  // plus O(T²) additions, and no T² × 2d pair matrix is ever built (memory stays O(T·d_f)).
  const std::size_t d = w.d, d_f = w.d_f;
  std::vector<float> score_i(t), score_j(t);
  detail::matmul_nt(t, 1, d, x, w.w_g, score_i.data());
  detail::matmul_nt(t, 1, d, x, w.w_g + d, score_j.data());
  for (std::size_t i = 0; i < t; ++i) {
    for (std::size_t j = 0; j < t; ++j) a[i * t + j] = score_i[i] + score_j[j] + w.b_g;
  }
  // g_ij = tanh(·), then sigmoid, then the softmax over each word's row.
  kernels::vtanh(a, pairs);
  kernels::vsigmoid(a, pairs);
  align_soft(a, t, t);

  // First feature layer halves: left[i] = W_f1[:, :d] x_i + b_f1, right[j] = W_f1[:, d:] x_j ([T × d_f]
  // each).
  std::vector<float> left(checked_mul(t, d_f, op)), right(t * d_f);
  kernels::gemm_nt(t, d_f, d, x, d, w.w_f1, d2, left.data(), d_f);
  kernels::gemm_nt(t, d_f, d, x, d, w.w_f1 + d, d2, right.data(), d_f);
  if (w.b_f1 != nullptr) {
    for (std::size_t i = 0; i < t; ++i) kernels::add(w.b_f1, left.data() + i * d_f, d_f);
  }

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
    detail::linear(f1.data(), t, d_f, w.w_f2, w.b_f2, d_f, f2.data());
    kernels::vrelu(f2.data(), f2.size());
    detail::matmul(1, d_f, t, a + i * t, f2.data(), word_row.data());
    if (word != nullptr) {
      for (std::size_t k = 0; k < d_f; ++k) word[i * d_f + k] = word_row[k];
    }
    kernels::axpy(inv_t, word_row.data(), sentence, d_f);
  }
}

}  // namespace attnlens::attention
