// Context vectors; formulas and papers in context.h.
#include "attention/context.h"

#include "attention/detail.h"
#include "attention/scores.h"

namespace attnlens::attention {

using detail::checked_mul;
using detail::require_data;

void soft_context(const float* weights, std::size_t n_q, std::size_t n_k, const float* values,
                  std::size_t d_v, float* context) {
  const char* op = "soft_context";
  require_data(weights, checked_mul(n_q, n_k, op), op, "weights");
  require_data(values, checked_mul(n_k, d_v, op), op, "values");
  require_data(context, checked_mul(n_q, d_v, op), op, "context");
  detail::matmul(n_q, d_v, n_k, weights, values, context);
}

void key_value_attention(const float* queries, std::size_t n_q, const float* keys, const float* values,
                         std::size_t n_k, std::size_t d_k, std::size_t d_v, float* weights, float* context,
                         KeyValueScore score, const AlignMask& mask) {
  if (score == KeyValueScore::kDot) {
    score_dot(queries, n_q, keys, n_k, d_k, weights);
  } else {
    score_scaled_dot(queries, n_q, keys, n_k, d_k, weights);
  }
  align_soft(weights, n_q, n_k, mask);
  soft_context(weights, n_q, n_k, values, d_v, context);
}

}  // namespace attnlens::attention
