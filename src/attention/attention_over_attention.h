// Attention-over-attention (Cui et al. 2017, "Attention-over-Attention Neural Networks for Reading
// Comprehension", §3): document D [n × d] and query Q [m × d] (their contextual embeddings).
//   M = D Qᵀ                                  pair-wise matching scores [n × m]
//   α(t) = softmax over i of M(i, t)          query-to-document attention, one column per query word
//   β(i) = softmax over t of M(i, t)          document-to-query attention, one row per document word
//   β̄ = (1/n) Σ_i β(i)                        averaged query-level attention [m]
//   s = α β̄                                   attended document-level attention [n] (sums to 1)
#pragma once

#include <cstddef>

namespace attnlens::attention {

// doc [n × d], query [m × d] → alpha [n × m] (columns sum to 1), beta [n × m] (rows sum to 1), beta_avg [m],
// s [n]. matching [n × m] receives M when not null.
void attention_over_attention(const float* doc, std::size_t n, const float* query, std::size_t m,
                              std::size_t d, float* alpha, float* beta, float* beta_avg, float* s,
                              float* matching = nullptr);

}  // namespace attnlens::attention
