// Score functions s(q, k): how well each query matches each key, before any normalisation.
//
// Every score takes n_q queries at once (row-major [n_q × d_q]) and writes scores[n_q × n_k], row i holding
// the scores of query i against every key; n_q = 1 is the single decoder step. Keys are rows of [n_k × d_k].
// Notation follows Luong et al. 2015 ("Effective Approaches to Attention-based NMT", §3.1) and the seeds.
#pragma once

#include <cstddef>

namespace attnlens::attention {

// dot (Luong 2015):            s(q, k) = qᵀk                       (d_q = d_k = d)
void score_dot(const float* queries, std::size_t n_q, const float* keys, std::size_t n_k, std::size_t d,
               float* scores);

// scaled dot (Vaswani 2017):   s(q, k) = qᵀk / √d — keeps the softmax out of its saturated region when d
// grows.
void score_scaled_dot(const float* queries, std::size_t n_q, const float* keys, std::size_t n_k,
                      std::size_t d, float* scores);

// general / bilinear (Luong 2015): s(q, k) = qᵀ W k, W is [d_q × d_k]. Computed as (qᵀW)·k so each query
// costs one d_q×d_k product and each key one dot.
void score_general(const float* queries, std::size_t n_q, std::size_t d_q, const float* w, const float* keys,
                   std::size_t n_k, std::size_t d_k, float* scores);

// additive / concat (Bahdanau et al. 2014, eq. 4 of seed 000): s(q, k) = vᵀ tanh(W q + U k + b).
// Weights use the PyTorch Linear layout [out, in]. `bias` may be null (Bahdanau has none; PyTorch Linear
// does).
struct AdditiveScoreWeights {
  std::size_t d_q = 0;          // query size
  std::size_t d_k = 0;          // key size
  std::size_t d_att = 0;        // hidden size of the scoring MLP
  const float* w = nullptr;     // W  [d_att × d_q]
  const float* u = nullptr;     // U  [d_att × d_k]
  const float* bias = nullptr;  // b  [d_att] or null
  const float* v = nullptr;     // v  [d_att]
};

// U k_j + b does not depend on the query: compute it once per source sentence (seed 000, after eq. 4).
// keys_proj: [n_k × d_att].
void additive_project_keys(const AdditiveScoreWeights& w, const float* keys, std::size_t n_k,
                           float* keys_proj);
// Scores from keys already passed through additive_project_keys.
void score_additive_projected(const AdditiveScoreWeights& w, const float* queries, std::size_t n_q,
                              const float* keys_proj, std::size_t n_k, float* scores);
// The same from projected queries too, as a decoder runs it every step: s_ij = vᵀ tanh(q̃_i + ũ_j), q̃ [n_q × d_att]
// (W q, plus b when the model adds it there), ũ [n_k × d_att]; `scratch` holds n_k × d_att floats. No allocation.
void score_additive_hidden(const float* v, std::size_t d_att, const float* queries_proj, std::size_t n_q,
                           const float* keys_proj, std::size_t n_k, float* scores, float* scratch);
// Convenience: projects the keys then scores (allocates n_k × d_att floats).
void score_additive(const AdditiveScoreWeights& w, const float* queries, std::size_t n_q, const float* keys,
                    std::size_t n_k, float* scores);

// cosine / content-based (Graves et al. 2014, Neural Turing Machines):
//   s(q, k) = qᵀk / (max(‖q‖, eps) · max(‖k‖, eps))
// The per-vector clamp is what torch.nn.functional.cosine_similarity (1.13) does: a zero vector scores 0, not
// NaN.
void score_cosine(const float* queries, std::size_t n_q, const float* keys, std::size_t n_k, std::size_t d,
                  float* scores, float eps = 1e-8f);

// location-based (Luong 2015, eq. 8 "location"): a_t = softmax(W_a q) — the query alone predicts the weights
// of the n_k source positions, no key is read. W_a is [n_k × d_q] (use its first n_k rows when sentences are
// shorter than the trained maximum). Writes the logits W_a q; normalise with align_soft.
void score_location(const float* queries, std::size_t n_q, std::size_t d_q, const float* w_a, std::size_t n_k,
                    float* scores);

// Scores over a g × g grid of keys (row-major cells, n_k = g·g), smoothed in place: each cell's score becomes the mean
// of the scores of the cells of the k × k window centred on it that lie inside the grid (k odd; torch's
// avg_pool2d(k, stride 1, padding k/2, count_include_pad=False), summed row by row in window order). Adding one
// constant to every score adds it to every mean, so the softmax after it ignores the scorer's bias as before.
// A Show-Attend-Tell bundle with config.json "decoder.score_smoothing" = k passes its scores through it: a peak of α
// then needs high scores around it, not one isolated cell. scratch: n_k floats.
void smooth_grid_scores(float* scores, std::size_t g, std::size_t k, float* scratch);

}  // namespace attnlens::attention
