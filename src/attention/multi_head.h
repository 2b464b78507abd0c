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

// Every head of already projected rows: qp [n_q × E], kp and vp [n_k × E] (head h owning columns
// [h·d_head, (h+1)·d_head)) → concat [n_q × E], the heads' contexts side by side before out_proj, and
// head_weights [H × n_q × n_k]. Each head is key_value_attention (context.h, scaled dot) read in place.
void attend_heads(std::size_t embed_dim, std::size_t num_heads, const float* qp, std::size_t n_q, const float* kp,
                  const float* vp, std::size_t n_k, float* concat, float* head_weights, const AlignMask& mask = {});

// Incremental decoding cache: keeps K W_k + b_k and V W_v + b_v of every position seen so far, so each
// decoding step projects only its new position and attends over the cache. Appending the positions one at a
// time and attending with `causal` gives the same outputs and weights as multi_head_attention on the full
// sequence with mask.causal (tested).
//
// It holds `rows` sequences side by side that advance together, one new position each per step (a beam's
// hypotheses, or sentences decoded together): reorder() makes row r a copy of row parents[r], as a beam search
// keeps and forks hypotheses. A cache built from weights projects what it is given (append, attend) and owns the
// out projection; one built from sizes only stores rows its owner has projected (append_projected) and returns
// the heads' contexts (attend_heads), so a model projects every row of a step in one product with its own layers
// and writes each head's weights wherever it records them. Weights are referenced, not copied: they must outlive
// the cache.
class MultiHeadKvCache {
 public:
  // Room for `capacity` positions per row, allocated once: appending never reallocates or moves cached rows.
  MultiHeadKvCache(const MultiHeadWeights& w, std::size_t capacity, std::size_t rows = 1);
  MultiHeadKvCache(std::size_t embed_dim, std::size_t num_heads, std::size_t capacity, std::size_t rows = 1);

  // Projects and stores n new positions of the only row: key [n × E], value [n × E] (self-attention passes the
  // same rows twice; cross-attention appends the encoder output once). Needs the weights.
  void append(const float* key, const float* value, std::size_t n);
  // Stores n new positions of every row, already projected: key and value [rows × n × E], row by row.
  void append_projected(const float* key, const float* value, std::size_t n = 1);
  // Attends n_q queries [n_q × E] of the only row over every cached position → out [n_q × E] (after out_proj),
  // head_weights [H × n_q × length()]. With causal = true, query i is the position length() − n_q + i and sees
  // only positions ≤ itself. Needs the weights.
  void attend(const float* query, std::size_t n_q, float* out, float* head_weights = nullptr,
              bool causal = true, const std::uint8_t* key_keep = nullptr);
  // Row `row`'s n_q projected queries qp [n_q × E] over its cached positions → concat [n_q × E] (heads side by
  // side, before out_proj), head_weights [H × n_q × length()] (null: scratch).
  void attend_heads(std::size_t row, const float* qp, std::size_t n_q, float* concat, float* head_weights = nullptr,
                    bool causal = true, const std::uint8_t* key_keep = nullptr);
  // Row r becomes a copy of row parents[r]; the cache then holds parents.size() rows.
  void reorder(const std::vector<int>& parents);

  std::size_t length() const { return length_; }
  std::size_t capacity() const { return capacity_; }
  std::size_t rows() const { return rows_; }
  std::size_t embed_dim() const { return e_; }
  std::size_t num_heads() const { return heads_; }
  void clear() { length_ = 0; }

 private:
  void check_row(std::size_t row, const char* op) const;
  float* row_keys(std::size_t r) { return keys_.data() + r * capacity_ * e_; }
  float* row_values(std::size_t r) { return values_.data() + r * capacity_ * e_; }

  MultiHeadWeights w_;  // in_proj_weight null: a cache of projected rows
  std::size_t e_, heads_, capacity_, rows_;
  std::size_t length_ = 0;
  std::vector<float> keys_;    // [rows × capacity × E], projected
  std::vector<float> values_;  // [rows × capacity × E], projected
  // Reused so that steady-state decoding steps do not allocate.
  std::vector<float> query_scratch_, scores_scratch_, concat_scratch_, spare_;
};

}  // namespace attnlens::attention
