// Score functions; formulas and papers in scores.h.
#include "attention/scores.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "attention/detail.h"
#include "kernels/kernels.h"

namespace attnlens::attention {

using detail::checked_mul;
using detail::require_data;

namespace {
// scores [n_q × n_k] = queries [n_q × d] · keysᵀ [d × n_k]; `keys_name` names the keys in the messages.
void dot_scores(const char* op, const char* keys_name, const float* queries, std::size_t n_q,
                const float* keys, std::size_t n_k, std::size_t d, float* scores) {
  require_data(queries, checked_mul(n_q, d, op), op, "queries");
  require_data(keys, checked_mul(n_k, d, op), op, keys_name);
  require_data(scores, checked_mul(n_q, n_k, op), op, "scores");
  detail::matmul_nt(n_q, n_k, d, queries, keys, scores);
}
}  // namespace

void score_dot(const float* queries, std::size_t n_q, const float* keys, std::size_t n_k, std::size_t d,
               float* scores) {
  dot_scores("score_dot", "keys", queries, n_q, keys, n_k, d, scores);
}

void score_scaled_dot(const float* queries, std::size_t n_q, const float* keys, std::size_t n_k,
                      std::size_t d, float* scores) {
  score_dot(queries, n_q, keys, n_k, d, scores);
  if (n_q == 0 || n_k == 0 || d == 0) return;
  kernels::scale(1.0f / std::sqrt(static_cast<float>(d)), scores, n_q * n_k);
}

void score_general(const float* queries, std::size_t n_q, std::size_t d_q, const float* w, const float* keys,
                   std::size_t n_k, std::size_t d_k, float* scores) {
  const char* op = "score_general";
  require_data(queries, checked_mul(n_q, d_q, op), op, "queries");
  require_data(w, checked_mul(d_q, d_k, op), op, "w");
  require_data(keys, checked_mul(n_k, d_k, op), op, "keys");
  require_data(scores, checked_mul(n_q, n_k, op), op, "scores");
  if (n_q == 0 || n_k == 0) return;
  // qw = Q·W  [n_q × d_k], then scores = qw·Kᵀ.
  std::vector<float> qw(n_q * d_k);
  detail::matmul(n_q, d_k, d_q, queries, w, qw.data());
  detail::matmul_nt(n_q, n_k, d_k, qw.data(), keys, scores);
}

static void check_additive(const AdditiveScoreWeights& w, const char* op) {
  if (w.d_att == 0) throw Error(std::string(op) + ": d_att must be at least 1");
  require_data(w.w, checked_mul(w.d_att, w.d_q, op), op, "w (W, [d_att x d_q])");
  require_data(w.u, checked_mul(w.d_att, w.d_k, op), op, "u (U, [d_att x d_k])");
  require_data(w.v, w.d_att, op, "v ([d_att])");
}

void additive_project_keys(const AdditiveScoreWeights& w, const float* keys, std::size_t n_k,
                           float* keys_proj) {
  const char* op = "additive_project_keys";
  check_additive(w, op);
  require_data(keys, checked_mul(n_k, w.d_k, op), op, "keys");
  require_data(keys_proj, checked_mul(n_k, w.d_att, op), op, "keys_proj");
  kernels::gemm_nt_bias_act(n_k, w.d_att, w.d_k, keys, w.d_k, w.u, w.d_k, keys_proj, w.d_att, w.bias,
                            kernels::Activation::none);
}

void score_additive_projected(const AdditiveScoreWeights& w, const float* queries, std::size_t n_q,
                              const float* keys_proj, std::size_t n_k, float* scores) {
  const char* op = "score_additive";
  check_additive(w, op);
  require_data(queries, checked_mul(n_q, w.d_q, op), op, "queries");
  require_data(keys_proj, checked_mul(n_k, w.d_att, op), op, "keys_proj");
  require_data(scores, checked_mul(n_q, n_k, op), op, "scores");
  if (n_q == 0 || n_k == 0) return;
  std::vector<float> wq(checked_mul(n_q, w.d_att, op));
  std::vector<float> hidden(checked_mul(n_k, w.d_att, op));
  kernels::gemm_nt_bias_act(n_q, w.d_att, w.d_q, queries, w.d_q, w.w, w.d_q, wq.data(), w.d_att, nullptr,
                            kernels::Activation::none);
  score_additive_hidden(w.v, w.d_att, wq.data(), n_q, keys_proj, n_k, scores, hidden.data());
}

void score_additive_hidden(const float* v, std::size_t d_att, const float* queries_proj, std::size_t n_q,
                           const float* keys_proj, std::size_t n_k, float* scores, float* scratch) {
  const char* op = "score_additive";
  require_data(v, d_att, op, "v");
  require_data(queries_proj, checked_mul(n_q, d_att, op), op, "queries_proj");
  require_data(keys_proj, checked_mul(n_k, d_att, op), op, "keys_proj");
  require_data(scores, checked_mul(n_q, n_k, op), op, "scores");
  require_data(scratch, checked_mul(n_k, d_att, op), op, "scratch");
  if (n_q == 0 || n_k == 0) return;
  for (std::size_t i = 0; i < n_q; ++i) {
    // scratch (n_k, d_att) = tanh(q̃_i + ũ_j) for every key j; then one matrix-vector product with v.
    for (std::size_t j = 0; j < n_k; ++j) {
      float* h = scratch + j * d_att;
      std::copy_n(keys_proj + j * d_att, d_att, h);
      kernels::add(queries_proj + i * d_att, h, d_att);
    }
    kernels::vtanh(scratch, n_k * d_att);
    kernels::gemv_nt(n_k, d_att, v, scratch, d_att, scores + i * n_k);
  }
}

void smooth_grid_scores(float* scores, std::size_t g, std::size_t k, float* scratch) {
  const char* op = "smooth_grid_scores";
  if (k % 2 == 0) throw Error(std::string(op) + ": the window side must be odd, got " + std::to_string(k));
  const std::size_t n = checked_mul(g, g, op);
  require_data(scores, n, op, "scores");
  require_data(scratch, n, op, "scratch");
  const std::size_t half = k / 2;
  for (std::size_t r = 0; r < g; ++r) {
    const std::size_t r0 = r > half ? r - half : 0, r1 = std::min(g, r + half + 1);
    for (std::size_t c = 0; c < g; ++c) {
      const std::size_t c0 = c > half ? c - half : 0, c1 = std::min(g, c + half + 1);
      float sum = 0;
      for (std::size_t y = r0; y < r1; ++y)
        for (std::size_t x = c0; x < c1; ++x) sum += scores[y * g + x];
      scratch[r * g + c] = sum / static_cast<float>((r1 - r0) * (c1 - c0));
    }
  }
  std::copy_n(scratch, n, scores);
}

void score_additive(const AdditiveScoreWeights& w, const float* queries, std::size_t n_q, const float* keys,
                    std::size_t n_k, float* scores) {
  check_additive(w, "score_additive");
  std::vector<float> keys_proj(checked_mul(n_k, w.d_att, "score_additive"));
  additive_project_keys(w, keys, n_k, keys_proj.data());
  score_additive_projected(w, queries, n_q, keys_proj.data(), n_k, scores);
}

void score_cosine(const float* queries, std::size_t n_q, const float* keys, std::size_t n_k, std::size_t d,
                  float* scores, float eps) {
  require(eps >= 0.0f && std::isfinite(eps), "score_cosine: eps must be a finite number >= 0");
  score_dot(queries, n_q, keys, n_k, d, scores);
  if (n_q == 0 || n_k == 0) return;
  std::vector<float> key_norm(n_k);
  for (std::size_t j = 0; j < n_k; ++j) {
    key_norm[j] = std::max(std::sqrt(kernels::dot(keys + j * d, keys + j * d, d)), eps);
  }
  for (std::size_t i = 0; i < n_q; ++i) {
    const float q_norm = std::max(std::sqrt(kernels::dot(queries + i * d, queries + i * d, d)), eps);
    for (std::size_t j = 0; j < n_k; ++j) {
      const float denom = q_norm * key_norm[j];
      // denom is 0 only when eps is 0 and a vector is 0: its score is 0 (as with a tiny eps), never NaN.
      scores[i * n_k + j] = denom > 0.0f ? scores[i * n_k + j] / denom : 0.0f;
    }
  }
}

void score_location(const float* queries, std::size_t n_q, std::size_t d_q, const float* w_a, std::size_t n_k,
                    float* scores) {
  // s_ij = w_a[j]ᵀ q_i: a dot score whose "keys" are the rows of W_a, one per position.
  dot_scores("score_location", "w_a ([n_k x d_q])", queries, n_q, w_a, n_k, d_q, scores);
}

}  // namespace attnlens::attention
