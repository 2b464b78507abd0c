// Co-attention (Lu et al. 2016, "Hierarchical Question-Image Co-Attention for Visual Question Answering",
// §3.3): the question guides attention over the image and the image guides attention over the question.
// Row-major here, so the paper's column matrices V ∈ R^{d×N}, Q ∈ R^{d×T} are passed as v [N × d], q [T × d].
#pragma once

#include <cstddef>

namespace attnlens::attention {

// parallel co-attention (Lu eq. 3–4):
//   C   = tanh(Qᵀ W_b V)                       affinity [T × N]
//   H^v = tanh(W_v V + (W_q Q) C),  H^q = tanh(W_q Q + (W_v V) Cᵀ)
//   a^v = softmax(w_hvᵀ H^v) [N],   a^q = softmax(w_hqᵀ H^q) [T]
//   v̂ = Σ_n a^v_n v_n,              q̂ = Σ_t a^q_t q_t
struct ParallelCoAttentionWeights {
  std::size_t d = 0;            // feature size of image regions and question words
  std::size_t k = 0;            // hidden size
  const float* w_b = nullptr;   // [d × d]
  const float* w_v = nullptr;   // [k × d]
  const float* w_q = nullptr;   // [k × d]
  const float* w_hv = nullptr;  // [k]
  const float* w_hq = nullptr;  // [k]
};
// v [N × d], q [T × d] → affinity [T × N], a_v [N], a_q [T], v_hat [d], q_hat [d].
void parallel_co_attention(const ParallelCoAttentionWeights& w, const float* v, std::size_t n, const float* q,
                           std::size_t t, float* affinity, float* a_v, float* a_q, float* v_hat,
                           float* q_hat);

// max-pooled co-attention (the pooling alternative docs/DESIGN.md §3 lists beside Lu's; as in dos Santos et al.
// 2016, "Attentive Pooling Networks", §2.2): the same affinity C = tanh(Qᵀ W_b V), and each side's attention
// is the softmax of C's maxima along the other side:
//   a^v_n = softmax_n(max_t C_tn),   a^q_t = softmax_t(max_n C_tn),   v̂ = Σ a^v_n v_n,   q̂ = Σ a^q_t q_t
// Only w.d and w.w_b are read. v [N × d], q [T × d], N, T ≥ 1 → affinity [T × N], a_v [N], a_q [T], v_hat,
// q_hat.
void max_pooled_co_attention(const ParallelCoAttentionWeights& w, const float* v, std::size_t n,
                             const float* q, std::size_t t, float* affinity, float* a_v, float* a_q,
                             float* v_hat, float* q_hat);

// One attention operation x̂ = A(X; g) of alternating co-attention (Lu eq. 5):
//   H = tanh(W_x X + (W_g g) 1ᵀ),  a^x = softmax(w_hxᵀ H),  x̂ = Σ_i a^x_i x_i
struct CoAttentionStepWeights {
  const float* w_x = nullptr;   // [k × d]
  const float* w_g = nullptr;   // [k × d]; unused (may be null) in step 1, whose guidance g is 0
  const float* w_hx = nullptr;  // [k]
};
// alternating co-attention: step 1 summarises the question (g = 0) into ŝ, step 2 attends to the image guided
// by ŝ, step 3 attends to the question guided by v̂. Each step has its own weights (pass the same pointers to
// share).
struct AlternatingCoAttentionWeights {
  std::size_t d = 0;
  std::size_t k = 0;
  CoAttentionStepWeights step[3];
};
// v [N × d], q [T × d] → a_s [T] (step 1), s_hat [d], a_v [N], v_hat [d], a_q [T] (step 3), q_hat [d].
void alternating_co_attention(const AlternatingCoAttentionWeights& w, const float* v, std::size_t n,
                              const float* q, std::size_t t, float* a_s, float* s_hat, float* a_v,
                              float* v_hat, float* a_q, float* q_hat);

}  // namespace attnlens::attention
