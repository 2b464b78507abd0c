// Show, Attend and Tell soft attention; formulas in visual.h.
#include "attention/visual.h"

#include <vector>

#include "attention/alignment.h"
#include "attention/detail.h"
#include "kernels/kernels.h"

namespace attnlens::attention {

using detail::checked_mul;
using detail::require_data;

void visual_soft_attention(const VisualAttentionWeights& w, const float* features, std::size_t n,
                           const float* features_proj, const float* h, float* alpha, float* beta,
                           float* context) {
  const char* op = "visual_soft_attention";
  const std::size_t d_a = w.att.d_k;
  detail::require_positive(n, op, "n (grid cells)");
  require_data(features, checked_mul(n, d_a, op), op, "features");
  require_data(h, w.att.d_q, op, "h");
  require_data(alpha, n, op, "alpha");
  require_data(beta, 1, op, "beta");
  require_data(context, d_a, op, "context");
  std::vector<float> projected;
  if (features_proj == nullptr) {
    projected.resize(checked_mul(n, w.att.d_att, op));
    additive_project_keys(w.att, features, n, projected.data());
    features_proj = projected.data();
  }
  score_additive_projected(w.att, h, 1, features_proj, n, alpha);
  align_soft(alpha, 1, n);
  float gate = 1.0f;
  if (w.w_beta != nullptr) {
    gate = kernels::dot(w.w_beta, h, w.att.d_q) + w.b_beta;
    kernels::vsigmoid(&gate, 1);
  }
  *beta = gate;
  detail::matmul(1, d_a, n, alpha, features, context);
  kernels::scale(gate, context, d_a);
}

double doubly_stochastic_penalty(const float* alphas, std::size_t t, std::size_t n, double lambda) {
  const char* op = "doubly_stochastic_penalty";
  require_data(alphas, checked_mul(t, n, op), op, "alphas");
  double total = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    double seen = 0.0;
    for (std::size_t s = 0; s < t; ++s) seen += alphas[s * n + i];
    total += (1.0 - seen) * (1.0 - seen);
  }
  return lambda * total;
}

}  // namespace attnlens::attention
