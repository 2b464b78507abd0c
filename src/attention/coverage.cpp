// Coverage attention and the GNMT coverage penalty; formulas and papers in coverage.h.
#include "attention/coverage.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attention/alignment.h"
#include "attention/detail.h"
#include "kernels/kernels.h"

namespace attnlens::attention {

using detail::checked_mul;
using detail::require_data;

void coverage_attention_step(const CoverageAttentionWeights& w, const float* q, const float* keys_proj,
                             std::size_t n_k, float* coverage, float* weights, const std::uint8_t* key_keep) {
  const char* op = "coverage_attention_step";
  const AdditiveScoreWeights& a = w.score;
  detail::require_positive(a.d_att, op, "score.d_att");
  require_data(a.w, checked_mul(a.d_att, a.d_q, op), op, "score.w ([d_att x d_q])");
  require_data(a.v, a.d_att, op, "score.v ([d_att])");
  require_data(w.w_c, a.d_att, op, "w_c ([d_att])");
  require_data(q, a.d_q, op, "q");
  require_data(keys_proj, checked_mul(n_k, a.d_att, op), op, "keys_proj");
  require_data(coverage, n_k, op, "coverage");
  require_data(weights, n_k, op, "weights");
  if (n_k == 0) return;
  std::vector<float> wq(a.d_att), hidden(a.d_att);
  kernels::gemm_nt_bias_act(1, a.d_att, a.d_q, q, a.d_q, a.w, a.d_q, wq.data(), a.d_att, nullptr,
                            kernels::Activation::none);
  for (std::size_t j = 0; j < n_k; ++j) {
    const float* uk = keys_proj + j * a.d_att;
    for (std::size_t h = 0; h < a.d_att; ++h) hidden[h] = wq[h] + uk[h] + w.w_c[h] * coverage[j];
    kernels::vtanh(hidden.data(), a.d_att);
    weights[j] = kernels::dot(a.v, hidden.data(), a.d_att);
  }
  AlignMask mask;
  mask.key_keep = key_keep;
  align_soft(weights, 1, n_k, mask);
  kernels::add(weights, coverage, n_k);
}

void coverage_attention(const CoverageAttentionWeights& w, const float* queries, std::size_t t,
                        const float* keys, std::size_t n_k, float* weights, float* coverage_out,
                        const std::uint8_t* key_keep) {
  const char* op = "coverage_attention";
  detail::require_positive(w.score.d_att, op, "score.d_att");
  require_data(queries, checked_mul(t, w.score.d_q, op), op, "queries");
  require_data(weights, checked_mul(t, n_k, op), op, "weights");
  std::vector<float> keys_proj(checked_mul(n_k, w.score.d_att, op));
  additive_project_keys(w.score, keys, n_k, keys_proj.data());
  std::vector<float> coverage(n_k, 0.0f);
  for (std::size_t i = 0; i < t; ++i) {
    coverage_attention_step(w, queries + i * w.score.d_q, keys_proj.data(), n_k, coverage.data(),
                            weights + i * n_k, key_keep);
  }
  if (coverage_out != nullptr) std::copy(coverage.begin(), coverage.end(), coverage_out);
}

double coverage_penalty(const float* weights, std::size_t t, std::size_t s, double beta) {
  const char* op = "coverage_penalty";
  require_data(weights, checked_mul(t, s, op), op, "weights");
  require(std::isfinite(beta), "coverage_penalty: beta must be a finite number");
  double total = 0.0;
  for (std::size_t j = 0; j < s; ++j) {
    double attended = 0.0;
    for (std::size_t i = 0; i < t; ++i) attended += weights[i * s + j];
    if (attended <= 0.0)
      return beta == 0.0 ? 0.0 : -std::numeric_limits<double>::infinity() * (beta > 0 ? 1 : -1);
    total += std::log(std::min(attended, 1.0));
  }
  return beta * total;
}

}  // namespace attnlens::attention
