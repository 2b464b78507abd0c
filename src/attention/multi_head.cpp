// Multi-head attention and its KV cache; formulas and semantics in multi_head.h.
#include "attention/multi_head.h"

#include <algorithm>
#include <string>

#include "attention/context.h"
#include "attention/detail.h"
#include "kernels/kernels.h"

namespace attnlens::attention {

using detail::checked_mul;
using detail::require_data;

namespace {

void check_sizes(std::size_t embed_dim, std::size_t num_heads, const char* op) {
  require(embed_dim > 0, std::string(op) + ": embed_dim must be at least 1");
  require(num_heads > 0 && embed_dim % num_heads == 0,
          std::string(op) + ": num_heads (" + std::to_string(num_heads) + ") must divide embed_dim (" +
              std::to_string(embed_dim) + ")");
}

void check_weights(const MultiHeadWeights& w, const char* op) {
  check_sizes(w.embed_dim, w.num_heads, op);
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
  kernels::gemm_nt_bias_act(n, e, e, x, e, weight, e, y, e, bias, kernels::Activation::none);
}

// out [n_q × E] = concat Wᴼᵀ + bᴼ.
void out_project(const MultiHeadWeights& w, const float* concat, std::size_t n_q, float* out) {
  const std::size_t e = w.embed_dim;
  kernels::gemm_nt_bias_act(n_q, e, e, concat, e, w.out_proj_weight, e, out, e, w.out_proj_bias,
                            kernels::Activation::none);
}

}  // namespace

void attend_heads(std::size_t embed_dim, std::size_t num_heads, const float* qp, std::size_t n_q,
                  const float* kp, const float* vp, std::size_t n_k, float* concat, float* head_weights,
                  const AlignMask& mask) {
  const std::size_t e = embed_dim, d_head = e / num_heads;
  for (std::size_t h = 0; h < num_heads; ++h)
    key_value_attention(qp + h * d_head, n_q, kp + h * d_head, vp + h * d_head, n_k, d_head, d_head,
                        head_weights + h * n_q * n_k, concat + h * d_head, KeyValueScore::kScaledDot, mask,
                        {e, e, e, e});
}

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
  std::vector<float> qp(n_q * e), kp(checked_mul(n_k, e, op)), vp(n_k * e), concat(n_q * e);
  project(w, 0, query, n_q, qp.data());
  project(w, 1, key, n_k, kp.data());
  project(w, 2, value, n_k, vp.data());
  std::vector<float> scores;
  if (head_weights == nullptr) scores.resize(checked_mul(w.num_heads * n_q, n_k, op));
  attend_heads(e, w.num_heads, qp.data(), n_q, kp.data(), vp.data(), n_k, concat.data(),
               head_weights != nullptr ? head_weights : scores.data(), mask);
  out_project(w, concat.data(), n_q, out);
}

MultiHeadKvCache::MultiHeadKvCache(const MultiHeadWeights& w, std::size_t capacity, std::size_t rows)
    : MultiHeadKvCache(w.embed_dim, w.num_heads, capacity, rows) {
  check_weights(w, "MultiHeadKvCache");
  w_ = w;
}

MultiHeadKvCache::MultiHeadKvCache(std::size_t embed_dim, std::size_t num_heads, std::size_t capacity,
                                   std::size_t rows)
    : e_(embed_dim), heads_(num_heads), capacity_(capacity), rows_(rows) {
  const char* op = "MultiHeadKvCache";
  check_sizes(embed_dim, num_heads, op);
  detail::require_positive(rows, op, "rows");
  w_.embed_dim = embed_dim;
  w_.num_heads = num_heads;
  keys_.resize(checked_mul(checked_mul(rows, capacity, op), embed_dim, op));
  values_.resize(keys_.size());
}

void MultiHeadKvCache::check_row(std::size_t row, const char* op) const {
  if (row >= rows_)
    throw Error(std::string(op) + ": row " + std::to_string(row) + " of a cache of " + std::to_string(rows_) +
                " rows");
}

void MultiHeadKvCache::append(const float* key, const float* value, std::size_t n) {
  const char* op = "MultiHeadKvCache::append";
  require(w_.in_proj_weight != nullptr,
          "MultiHeadKvCache::append: a cache without weights takes projected rows");
  require(rows_ == 1, "MultiHeadKvCache::append: projects into a cache of one row");
  require(n <= capacity_ - length_, "MultiHeadKvCache::append: cache full (capacity " +
                                        std::to_string(capacity_) + " positions, " + std::to_string(length_) +
                                        " used, " + std::to_string(n) +
                                        " more requested); create it with a larger capacity");
  require_data(key, checked_mul(n, e_, op), op, "key");
  require_data(value, n * e_, op, "value");
  project(w_, 1, key, n, row_keys(0) + length_ * e_);
  project(w_, 2, value, n, row_values(0) + length_ * e_);
  length_ += n;
}

void MultiHeadKvCache::append_projected(const float* key, const float* value, std::size_t n) {
  const char* op = "MultiHeadKvCache::append_projected";
  if (n > capacity_ - length_)  // (messages are built only on failure: this runs every decoding step)
    throw Error("MultiHeadKvCache::append_projected: cache full (capacity " + std::to_string(capacity_) +
                " positions, " + std::to_string(length_) + " used, " + std::to_string(n) + " more requested)");
  const std::size_t row_floats = checked_mul(n, e_, op);
  require_data(key, checked_mul(rows_, row_floats, op), op, "key");
  require_data(value, rows_ * row_floats, op, "value");
  for (std::size_t r = 0; r < rows_; ++r) {
    std::copy_n(key + r * row_floats, row_floats, row_keys(r) + length_ * e_);
    std::copy_n(value + r * row_floats, row_floats, row_values(r) + length_ * e_);
  }
  length_ += n;
}

void MultiHeadKvCache::attend_heads(std::size_t row, const float* qp, std::size_t n_q, float* concat,
                                    float* head_weights, bool causal, const std::uint8_t* key_keep) {
  const char* op = "MultiHeadKvCache::attend";
  check_row(row, op);
  require_data(qp, checked_mul(n_q, e_, op), op, "query");
  require_data(concat, n_q * e_, op, "out");
  if (causal && n_q > length_)
    throw Error("MultiHeadKvCache::attend: " + std::to_string(n_q) + " causal queries but only " +
                std::to_string(length_) + " cached positions; append the new positions before attending");
  if (n_q == 0) return;
  if (head_weights == nullptr) {
    scores_scratch_.resize(checked_mul(heads_ * n_q, length_, op));
    head_weights = scores_scratch_.data();
  }
  AlignMask mask;
  mask.causal = causal;
  mask.key_keep = key_keep;
  attention::attend_heads(e_, heads_, qp, n_q, row_keys(row), row_values(row), length_, concat, head_weights,
                          mask);
}

void MultiHeadKvCache::attend(const float* query, std::size_t n_q, float* out, float* head_weights,
                              bool causal, const std::uint8_t* key_keep) {
  const char* op = "MultiHeadKvCache::attend";
  require(w_.in_proj_weight != nullptr,
          "MultiHeadKvCache::attend: a cache without weights takes projected queries");
  require(rows_ == 1, "MultiHeadKvCache::attend: projects the queries of a cache of one row");
  require_data(query, checked_mul(n_q, e_, op), op, "query");
  require_data(out, n_q * e_, op, "out");
  if (n_q == 0) return;
  query_scratch_.resize(n_q * e_);
  concat_scratch_.resize(n_q * e_);
  project(w_, 0, query, n_q, query_scratch_.data());
  attend_heads(0, query_scratch_.data(), n_q, concat_scratch_.data(), head_weights, causal, key_keep);
  out_project(w_, concat_scratch_.data(), n_q, out);
}

void MultiHeadKvCache::reorder(const std::vector<int>& parents) {
  const char* op = "MultiHeadKvCache::reorder";
  require(!parents.empty(), "MultiHeadKvCache::reorder: to zero rows");
  for (int p : parents)
    if (p < 0 || static_cast<std::size_t>(p) >= rows_)
      throw Error("MultiHeadKvCache::reorder: parent row " + std::to_string(p) + " out of range");
  const std::size_t per_row = capacity_ * e_, used = length_ * e_;
  for (auto* cache : {&keys_, &values_}) {
    spare_.resize(checked_mul(parents.size(), per_row, op));
    for (std::size_t r = 0; r < parents.size(); ++r)
      std::copy_n(cache->data() + static_cast<std::size_t>(parents[r]) * per_row, used,
                  spare_.data() + r * per_row);
    cache->swap(spare_);
  }
  rows_ = parents.size();
}

}  // namespace attnlens::attention
