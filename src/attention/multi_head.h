// Multi-head attention (Vaswani et al. 2017, "Attention Is All You Need", §3.2.2):
//   MultiHead(Q, K, V) = Concat(head_1, …, head_h) Wᴼ,   head_i = softmax(Q W_iᵠ (K W_iᴷ)ᵀ / √d_head) V W_iⱽ
// with the semantics of torch.nn.MultiheadAttention (batch_first, dropout 0, kdim = vdim = embed_dim, no
// add_bias_kv / add_zero_attn): one packed in_proj [3E × E] whose rows are W_q, W_k, W_v, an out_proj [E ×
// E], optional biases, head h owning columns [h·d_head, (h+1)·d_head) of each projection. Unlike PyTorch's
// default (average_attn_weights=True) the weights of every head are returned.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attention/alignment.h"

namespace attnlens::attention {

struct MultiHeadWeights {
  std::size_t embed_dim = 0;               // E
  std::size_t num_heads = 0;               // H, must divide E
  const float* in_proj_weight = nullptr;   // [3E × E]
  const float* in_proj_bias = nullptr;     // [3E] or null
  const float* out_proj_weight = nullptr;  // [E × E]
  const float* out_proj_bias = nullptr;    // [E] or null
};

// query [n_q × E], key and value [n_k × E] → out [n_q × E]; head_weights [H × n_q × n_k] (null to skip).
// Masks (1 = attend): mask.key_keep is PyTorch's key_padding_mask inverted, mask.keep its attn_mask inverted,
// mask.causal the usual subsequent-position mask. A fully masked row yields zero weights (PyTorch: NaN).
void multi_head_attention(const MultiHeadWeights& w, const float* query, std::size_t n_q, const float* key,
                          const float* value, std::size_t n_k, float* out, float* head_weights = nullptr,
                          const AlignMask& mask = {});

// Incremental decoding cache: keeps K W_k + b_k and V W_v + b_v of every position seen so far, so each
// decoding step projects only its new position and attends over the cache. Appending the positions one at a
// time and attending with `causal` gives the same outputs and weights as multi_head_attention on the full
// sequence with mask.causal (tested). The weights are referenced, not copied: they must outlive the cache.
class MultiHeadKvCache {
 public:
  // Room for `capacity` positions, allocated once: appending never reallocates or moves cached rows.
  MultiHeadKvCache(const MultiHeadWeights& w, std::size_t capacity);

  // Projects and stores n new positions: key [n × E], value [n × E] (self-attention passes the same rows
  // twice; cross-attention appends the encoder output once).
  void append(const float* key, const float* value, std::size_t n);
  // Attends n_q queries [n_q × E] over every cached position → out [n_q × E], head_weights [H × n_q ×
  // length()]. With causal = true, query i is the position length() − n_q + i and sees only positions ≤
  // itself.
  void attend(const float* query, std::size_t n_q, float* out, float* head_weights = nullptr,
              bool causal = true, const std::uint8_t* key_keep = nullptr);

  std::size_t length() const { return length_; }
  std::size_t capacity() const { return capacity_; }
  void clear() { length_ = 0; }

 private:
  MultiHeadWeights w_;
  std::size_t capacity_;
  std::size_t length_ = 0;
  std::vector<float> keys_;    // [capacity × E], projected
  std::vector<float> values_;  // [capacity × E], projected
  // Reused by attend() so that steady-state decoding steps do not allocate.
  std::vector<float> query_scratch_, scores_scratch_, concat_scratch_;
};

}  // namespace attnlens::attention
