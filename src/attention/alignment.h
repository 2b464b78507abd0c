// Alignment functions: turn scores into attention weights α (each row a distribution over keys).
//
// Masks use 1 = attend, 0 = masked (the opposite of PyTorch's boolean masks, where True means "ignore").
// A masked position gets weight exactly 0. A row in which every position is masked becomes all zeros (PyTorch
// would produce NaN); check with row_is_empty() where it matters.
#pragma once

#include <cstddef>
#include <cstdint>

namespace attnlens::attention {

// Which keys each query may see.
struct AlignMask {
  const std::uint8_t* key_keep = nullptr;  // [n_k] padding mask shared by all rows, or null
  const std::uint8_t* keep = nullptr;      // [n_q × n_k] full mask (like attn_mask), or null
  bool causal = false;                     // query i sees key j only when j ≤ i + (n_k − n_q)
};

// global soft alignment (Bahdanau 2014; Luong 2015 "global"): α_ij = exp(s_ij) / Σ_j' exp(s_ij') over the
// keys the mask keeps. In place on scores[n_q × n_k]. The causal offset n_k − n_q (requires n_k ≥ n_q) makes
// the last query see every key: that is the decoder with an incremental KV cache, where n_q new queries
// follow n_k − n_q cached positions.
void align_soft(float* scores, std::size_t n_q, std::size_t n_k, const AlignMask& mask = {});

// True when every weight of the row is 0 (a fully masked row).
bool row_is_empty(const float* weights, std::size_t n_k);

// local-m (Luong 2015 §3.2, monotonic alignment): p_t = t; softmax over the window [p_t − D, p_t + D] clipped
// to the sentence, zeros outside. One query row in place on scores[n_k]; key_keep may be null.
void align_local_m(float* scores, std::size_t n_k, std::size_t t, std::size_t window_d,
                   const std::uint8_t* key_keep = nullptr);

// local-p (Luong 2015 §3.2, predictive alignment), eq. 9: p_t = S · sigmoid(v_pᵀ tanh(W_p q)).
struct LocalPWeights {
  std::size_t d_q = 0;
  std::size_t d_att = 0;
  const float* w_p = nullptr;  // W_p [d_att × d_q]
  const float* v_p = nullptr;  // v_p [d_att]
};
// Predicted window centre p ∈ [0, S] for a query q[d_q] and a source of S positions.
float local_p_position(const LocalPWeights& w, const float* q, std::size_t source_length);
// eq. 10: α_s = softmax(score)_s · exp(−(s − p)² / (2σ²)), σ = D/2, with the softmax over the window
// p − D ≤ s ≤ p + D (real-valued p, positions 0..n_k−1) and zeros outside. Not renormalised after the
// Gaussian, as in the paper, so rows sum to ≤ 1. D must be ≥ 1 (σ = D/2 > 0). In place on scores[n_k].
void align_local_p(float* scores, std::size_t n_k, float p, std::size_t window_d,
                   const std::uint8_t* key_keep = nullptr);

// hard attention (Xu et al. 2015 §4.1; eq. 9 of seed 000): one position is chosen, α becomes one-hot.
// Deterministic variant: the argmax (first maximum on ties). Writes one_hot[n] (may alias weights) and
// returns the index. n must be ≥ 1.
std::size_t align_hard_argmax(const float* weights, std::size_t n, float* one_hot);

// A small deterministic generator that gives the same stream on every platform (native, WASM, JS): splitmix64
// (Steele, Lea, Flood 2014, "Fast splittable pseudorandom number generators"). std:: distributions are not
// used because their output differs between standard libraries.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed = 0) : state_(seed) {}
  std::uint64_t next_u64();
  // Uniform in [0, 1) with 53 random bits (exactly representable as a double).
  double next_double();
  std::uint64_t state() const { return state_; }

 private:
  std::uint64_t state_;
};

// Stochastic variant: s ~ Multinoulli(α) (Xu 2015 eq. 8). Draws u = next_double() and returns the first index
// whose running sum of α (in double) exceeds u·Σα; positions with α = 0 are never chosen. Weights must be
// finite, ≥ 0, with a positive sum. Writes one_hot[n] when it is not null (it may alias weights).
std::size_t align_hard_sample(const float* weights, std::size_t n, SplitMix64& rng, float* one_hot = nullptr);

}  // namespace attnlens::attention
