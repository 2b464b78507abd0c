// Multi-head attention and its KV cache; formulas and semantics in multi_head.h.
#include "attention/multi_head.h"

#include <cmath>
#include <string>

#include "attention/detail.h"
#include "kernels/kernels.h"

namespace attnlens::attention {

using detail::checked_mul;
using detail::require_data;

namespace {

void check_weights(const MultiHeadWeights& w, const char* op) {
  require(w.embed_dim > 0, std::string(op) + ": embed_dim must be at least 1");
  require(w.num_heads > 0 && w.embed_dim % w.num_heads == 0,
          std::string(op) + ": num_heads (" + std::to_string(w.num_heads) + ") must divide embed_dim (" +
              std::to_string(w.embed_dim) + ")");
  const std::size_t e = w.embed_dim;
  require_data(w.in_proj_weight, checked_mul(3 * e, e, op), op, "in_proj_weight ([3E x E])");
  require_data(w.out_proj_weight, checked_mul(e, e, op), op, "out_proj_weight ([E x E])");
}

// Projection p ∈ {0: q, 1: k, 2: v} of n rows: y = x W_pᵀ + b_p (rows p·E … (p+1)·E − 1 of the packed
// in_proj).
void project(const MultiHeadWeights& w, int p, const float* x, std::size_t n, float* y) {
  const std::size_t e = w.embed_dim;
  const float* weight = w.in_proj_weight + static_cast<std::size_t>(p) * e * e;
  const float* bias = w.in_proj_bias == nullptr ? nullptr : w.in_proj_bias + static_cast<std::size_t>(p) * e;
  detail::linear(x, n, e, weight, bias, e, y);
}

// Scaled dot-product attention of every head over projected rows, then out_proj.
// qp [n_q × E] (already projected), kp/vp [n_k × E] → out [n_q × E].
// `scores` and `concat` are scratch buffers, resized here; reusing them across decoding steps avoids
// allocating once the cache has reached its longest length.
void attend_projected(const MultiHeadWeights& w, const float* qp, std::size_t n_q, const float* kp,
                      const float* vp, std::size_t n_k, const AlignMask& mask, float* out,
                      float* head_weights, std::vector<float>& scores_scratch, std::vector<float>& concat) {
  const std::size_t e = w.embed_dim;
  const std::size_t h_count = w.num_heads;
  const std::size_t d_head = e / h_count;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d_head));
  if (head_weights == nullptr) scores_scratch.resize(n_q * n_k);
  concat.assign(n_q * e, 0.0f);
  for (std::size_t h = 0; h < h_count; ++h) {
    float* scores = head_weights != nullptr ? head_weights + h * n_q * n_k : scores_scratch.data();
    if (n_k > 0) {
      // scores = (Q_h K_hᵀ)/√d_head, reading head h's columns in place through the leading dimension E.
      kernels::gemm_nt(n_q, n_k, d_head, qp + h * d_head, e, kp + h * d_head, e, scores, n_k);
      kernels::scale(scale, scores, n_q * n_k);
      align_soft(scores, n_q, n_k, mask);
      kernels::gemm(n_q, d_head, n_k, scores, n_k, vp + h * d_head, e, concat.data() + h * d_head, e);
    }
  }
  detail::linear(concat.data(), n_q, e, w.out_proj_weight, w.out_proj_bias, e, out);
}

}  // namespace

void multi_head_attention(const MultiHeadWeights& w, const float* query, std::size_t n_q, const float* key,
                          const float* value, std::size_t n_k, float* out, float* head_weights,
                          const AlignMask& mask) {
  const char* op = "multi_head_attention";
  check_weights(w, op);
  const std::size_t e = w.embed_dim;
  require_data(query, checked_mul(n_q, e, op), op, "query");
  require_data(key, checked_mul(n_k, e, op), op, "key");
  require_data(value, checked_mul(n_k, e, op), op, "value");
  require_data(out, checked_mul(n_q, e, op), op, "out");
  require(!mask.causal || n_k >= n_q,
          "multi_head_attention: a causal mask needs at least as many keys as queries");
  if (n_q == 0) return;
  std::vector<float> qp(n_q * e), kp(checked_mul(n_k, e, op)), vp(n_k * e);
  project(w, 0, query, n_q, qp.data());
  project(w, 1, key, n_k, kp.data());
  project(w, 2, value, n_k, vp.data());
  std::vector<float> scores_scratch, concat;
  attend_projected(w, qp.data(), n_q, kp.data(), vp.data(), n_k, mask, out, head_weights, scores_scratch,
                   concat);
}

MultiHeadKvCache::MultiHeadKvCache(const MultiHeadWeights& w, std::size_t capacity)
    : w_(w), capacity_(capacity) {
  const char* op = "MultiHeadKvCache";
  check_weights(w, op);
  keys_.resize(checked_mul(capacity, w.embed_dim, op));
  values_.resize(capacity * w.embed_dim);
}

void MultiHeadKvCache::append(const float* key, const float* value, std::size_t n) {
  const char* op = "MultiHeadKvCache::append";
  const std::size_t e = w_.embed_dim;
  require(n <= capacity_ - length_, "MultiHeadKvCache::append: cache full (capacity " +
                                        std::to_string(capacity_) + " positions, " + std::to_string(length_) +
                                        " used, " + std::to_string(n) +
                                        " more requested); create it with a larger capacity");
  require_data(key, checked_mul(n, e, op), op, "key");
  require_data(value, n * e, op, "value");
  project(w_, 1, key, n, keys_.data() + length_ * e);
  project(w_, 2, value, n, values_.data() + length_ * e);
  length_ += n;
}

void MultiHeadKvCache::attend(const float* query, std::size_t n_q, float* out, float* head_weights,
                              bool causal, const std::uint8_t* key_keep) {
  const char* op = "MultiHeadKvCache::attend";
  const std::size_t e = w_.embed_dim;
  require_data(query, checked_mul(n_q, e, op), op, "query");
  require_data(out, n_q * e, op, "out");
  require(!causal || n_q <= length_, "MultiHeadKvCache::attend: " + std::to_string(n_q) +
                                         " causal queries but only " + std::to_string(length_) +
                                         " cached positions; append the new positions before attending");
  if (n_q == 0) return;
  query_scratch_.resize(n_q * e);
  project(w_, 0, query, n_q, query_scratch_.data());
  AlignMask mask;
  mask.causal = causal;
  mask.key_keep = key_keep;
  attend_projected(w_, query_scratch_.data(), n_q, keys_.data(), values_.data(), length_, mask, out,
                   head_weights, scores_scratch_, concat_scratch_);
}

}  // namespace attnlens::attention
