// Attention-over-attention; formula and paper in attention_over_attention.h.
#include "attention/attention_over_attention.h"

#include <vector>

#include "attention/alignment.h"
#include "attention/detail.h"
#include "kernels/kernels.h"

namespace attnlens::attention {

using detail::checked_mul;
using detail::require_data;

void attention_over_attention(const float* doc, std::size_t n, const float* query, std::size_t m,
                              std::size_t d, float* alpha, float* beta, float* beta_avg, float* s,
                              float* matching) {
  const char* op = "attention_over_attention";
  detail::require_positive(n, op, "n (document length)");
  detail::require_positive(m, op, "m (query length)");
  require_data(doc, checked_mul(n, d, op), op, "doc");
  require_data(query, checked_mul(m, d, op), op, "query");
  const std::size_t nm = checked_mul(n, m, op);
  require_data(alpha, nm, op, "alpha");
  require_data(beta, nm, op, "beta");
  require_data(beta_avg, m, op, "beta_avg");
  require_data(s, n, op, "s");

  std::vector<float> mt(nm);  // Mᵀ [m × n]: column softmax of M = row softmax of Mᵀ
  detail::matmul_nt(m, n, d, query, doc, mt.data());
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t t = 0; t < m; ++t) beta[i * m + t] = mt[t * n + i];
  }
  if (matching != nullptr) {
    for (std::size_t p = 0; p < nm; ++p) matching[p] = beta[p];
  }
  align_soft(mt.data(), m, n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t t = 0; t < m; ++t) alpha[i * m + t] = mt[t * n + i];
  }
  align_soft(beta, n, m);
  for (std::size_t t = 0; t < m; ++t) beta_avg[t] = 0.0f;
  const float inv_n = 1.0f / static_cast<float>(n);
  for (std::size_t i = 0; i < n; ++i) kernels::axpy(inv_n, beta + i * m, beta_avg, m);
  detail::matmul(n, 1, m, alpha, beta_avg, s);
}

}  // namespace attnlens::attention
