// Recording an op's attention weights into an AttentionTrace, so that whatever a model computes can be drawn.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "trace/trace.h"

namespace attnlens::attention {

// Copies one map of product(dims) weights. No-op when the trace is disabled.
void record_weights(AttentionTrace& trace, const std::string& name, const float* weights,
                    std::vector<std::size_t> dims, int layer = -1, int head = -1, int step = -1);

// Records the per-head weights of multi_head_attention / MultiHeadKvCache::attend (head_weights
// [H × n_q × n_k]) as H maps named `name` with head = 0..H−1 and dims {n_q, n_k}.
void record_heads(AttentionTrace& trace, const std::string& name, const float* head_weights,
                  std::size_t num_heads, std::size_t n_q, std::size_t n_k, int layer = -1, int step = -1);

// Records head `head`'s columns [head·d_head, (head + 1)·d_head) of projected rows x [rows × d] as one map `name`
// [rows, d_head] (layer, head): the query or key vectors behind a dot-product map (the neuron view's `qk`).
// No-op when the trace is disabled.
void record_head_vectors(AttentionTrace& trace, const std::string& name, std::size_t layer, std::size_t head,
                         const float* x, std::size_t rows, std::size_t d, std::size_t d_head);

}  // namespace attnlens::attention
