// Context vectors; formulas and papers in context.h.
#include "attention/context.h"

#include <algorithm>
#include <cmath>

#include "attention/detail.h"
#include "attention/scores.h"
#include "common.h"
#include "kernels/kernels.h"

namespace attnlens::attention {

using detail::checked_mul;
using detail::require_data;

namespace {
// Extent of n rows of `width` floats, `ld` apart.
std::size_t extent(std::size_t n, std::size_t width, std::size_t ld, const char* op) {
  return n == 0 ? 0 : checked_mul(n - 1, ld, op) + width;
}
}  // namespace

void soft_context(const float* weights, std::size_t n_q, std::size_t n_k, const float* values,
                  std::size_t d_v, float* context, std::size_t ld_values, std::size_t ld_context) {
  const char* op = "soft_context";
  const std::size_t lv = ld_values != 0 ? ld_values : d_v, lc = ld_context != 0 ? ld_context : d_v;
  require(lv >= d_v && lc >= d_v, "soft_context: a row stride is shorter than its row");
  require_data(weights, checked_mul(n_q, n_k, op), op, "weights");
  require_data(values, extent(n_k, d_v, lv, op), op, "values");
  require_data(context, extent(n_q, d_v, lc, op), op, "context");
  if (n_q == 0 || d_v == 0) return;
  if (n_k == 0) {
    for (std::size_t i = 0; i < n_q; ++i) std::fill(context + i * lc, context + i * lc + d_v, 0.0f);
  } else if (n_q == 1) {
    kernels::gemv(d_v, n_k, weights, values, lv, context);
  } else {
    kernels::gemm(n_q, d_v, n_k, weights, n_k, values, lv, context, lc);
  }
}

void key_value_attention(const float* queries, std::size_t n_q, const float* keys, const float* values,
                         std::size_t n_k, std::size_t d_k, std::size_t d_v, float* weights, float* context,
                         KeyValueScore score, const AlignMask& mask, const KeyValueLayout& layout) {
  const char* op = "key_value_attention";
  const std::size_t lq = layout.queries != 0 ? layout.queries : d_k, lk = layout.keys != 0 ? layout.keys : d_k;
  const std::size_t lv = layout.values != 0 ? layout.values : d_v, lc = layout.context != 0 ? layout.context : d_v;
  require(lq >= d_k && lk >= d_k && lv >= d_v && lc >= d_v,
          "key_value_attention: a row stride is shorter than its row");
  require_data(queries, extent(n_q, d_k, lq, op), op, "queries");
  require_data(keys, extent(n_k, d_k, lk, op), op, "keys");
  require_data(values, extent(n_k, d_v, lv, op), op, "values");
  require_data(weights, checked_mul(n_q, n_k, op), op, "weights");
  require_data(context, extent(n_q, d_v, lc, op), op, "context");
  if (n_q == 0) return;
  if (n_k == 0 || d_k == 0) {
    std::fill(weights, weights + n_q * n_k, 0.0f);
  } else if (n_q == 1) {
    kernels::gemv_nt(n_k, d_k, queries, keys, lk, weights);
  } else {
    kernels::gemm_nt(n_q, n_k, d_k, queries, lq, keys, lk, weights, n_k);
  }
  if (score == KeyValueScore::kScaledDot && n_k != 0 && d_k != 0)
    kernels::scale(1.0f / std::sqrt(static_cast<float>(d_k)), weights, n_q * n_k);
  align_soft(weights, n_q, n_k, mask);
  soft_context(weights, n_q, n_k, values, d_v, context, lv, lc);
}

}  // namespace attnlens::attention
