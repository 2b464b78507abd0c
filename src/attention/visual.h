// Visual soft attention (Xu et al. 2015, "Show, Attend and Tell", §3.1.2 and §4.2): the caption decoder looks
// at the N cells a_i [d_a] of a CNN feature grid, guided by its previous hidden state h [d_h]:
//   e_i = f_att(a_i, h) = vᵀ tanh(U a_i + W h + b)     (additive; U a_i + b computed once per image)
//   α = softmax(e),   β = σ(w_βᵀ h + b_β)            (the gating scalar, §4.2.1)
//   z = β · Σ_i α_i a_i
// and the doubly stochastic regularisation (eq. 14) that asks every cell to be looked at about once over a
// caption of T words: λ Σ_i (1 − Σ_t α_ti)².
#pragma once

#include <cstddef>

#include "attention/scores.h"

namespace attnlens::attention {

struct VisualAttentionWeights {
  AdditiveScoreWeights att;       // query = h (d_q = d_h), key = a_i (d_k = d_a)
  const float* w_beta = nullptr;  // [d_h]; null disables the gate (β = 1)
  float b_beta = 0.0f;
};

// features [N × d_a], h [d_h] → alpha [N], *beta, context [d_a]. features_proj [N × d_att] is
// additive_project_keys(w.att, features, N, …) computed once per image; pass null to have it computed here.
void visual_soft_attention(const VisualAttentionWeights& w, const float* features, std::size_t n,
                           const float* features_proj, const float* h, float* alpha, float* beta,
                           float* context);

// λ Σ_i (1 − Σ_t α_ti)² over alphas [T × N].
double doubly_stochastic_penalty(const float* alphas, std::size_t t, std::size_t n, double lambda);

}  // namespace attnlens::attention
