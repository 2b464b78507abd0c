// Trace recording helpers; see trace_record.h.
#include "attention/trace_record.h"

#include <algorithm>

#include "attention/detail.h"

namespace attnlens::attention {

void record_weights(AttentionTrace& trace, const std::string& name, const float* weights,
                    std::vector<std::size_t> dims, int layer, int head, int step) {
  if (!trace.enabled()) return;
  std::size_t count = 1;
  for (std::size_t d : dims) count = detail::checked_mul(count, d, "record_weights");
  detail::require_data(weights, count, "record_weights", "weights");
  trace.record(name, layer, head, step, dims, weights);
}

void record_heads(AttentionTrace& trace, const std::string& name, const float* head_weights,
                  std::size_t num_heads, std::size_t n_q, std::size_t n_k, int layer, int step) {
  if (!trace.enabled()) return;
  const std::size_t per_head = detail::checked_mul(n_q, n_k, "record_heads");
  detail::require_data(head_weights, detail::checked_mul(num_heads, per_head, "record_heads"), "record_heads",
                       "head_weights");
  for (std::size_t h = 0; h < num_heads; ++h) {
    record_weights(trace, name, head_weights + h * per_head, {n_q, n_k}, layer, static_cast<int>(h), step);
  }
}

void record_head_vectors(AttentionTrace& trace, const std::string& name, std::size_t layer, std::size_t head,
                         const float* x, std::size_t rows, std::size_t d, std::size_t d_head) {
  float* m = trace.add(name, static_cast<int>(layer), static_cast<int>(head), -1, {rows, d_head});
  if (m == nullptr) return;
  for (std::size_t i = 0; i < rows; ++i) std::copy_n(x + i * d + head * d_head, d_head, m + i * d_head);
}

}  // namespace attnlens::attention
