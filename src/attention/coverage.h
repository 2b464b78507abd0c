// Coverage (Tu et al. 2016, "Modeling Coverage for Neural Machine Translation"): remember how much attention
// each source word has received so that the decoder neither repeats nor drops words.
#pragma once

#include <cstddef>
#include <cstdint>

#include "attention/scores.h"

namespace attnlens::attention {

// Coverage-aware additive score (Tu 2016 eq. 6 with the linguistic coverage C_{i−1,j} = Σ_{t'<i} α_{t'j}):
//   e_ij = vᵀ tanh(W q_i + U k_j + b + w_c · c_j),   α_i = softmax_j(e_ij),   c ← c + α_i
struct CoverageAttentionWeights {
  AdditiveScoreWeights score;
  const float* w_c = nullptr;  // [d_att]: how a position's coverage enters the score
};

// One decoding step. keys_proj [n_k × d_att] comes from additive_project_keys(w.score, …); coverage [n_k] is
// read (the sum of all earlier steps' weights, zeros at step 0) and then updated with this step's weights
// [n_k].
void coverage_attention_step(const CoverageAttentionWeights& w, const float* q, const float* keys_proj,
                             std::size_t n_k, float* coverage, float* weights,
                             const std::uint8_t* key_keep = nullptr);

// T steps from zero coverage, teacher-forced queries [T × d_q] over keys [n_k × d_k] → weights [T × n_k]; the
// final coverage [n_k] (Σ over all T steps) is written when not null.
void coverage_attention(const CoverageAttentionWeights& w, const float* queries, std::size_t t,
                        const float* keys, std::size_t n_k, float* weights, float* coverage_out = nullptr,
                        const std::uint8_t* key_keep = nullptr);

// Coverage penalty for beam search (Wu et al. 2016, GNMT, eq. 14):
//   cp = β · Σ_j log(min(Σ_i α_ij, 1.0))
// over weights [T × S] (T target steps, S source positions). It is ≤ 0 and is added to a hypothesis' score; a
// source position that got no attention at all gives −∞, as in the formula (exclude padding by passing the
// true S).
double coverage_penalty(const float* weights, std::size_t t, std::size_t s, double beta);

}  // namespace attnlens::attention
