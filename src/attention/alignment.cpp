// Alignment functions; formulas and papers in alignment.h.
#include "attention/alignment.h"

#include <cmath>
#include <string>
#include <vector>

#include "attention/detail.h"
#include "kernels/kernels.h"

namespace attnlens::attention {

using detail::checked_mul;
using detail::require_data;

void align_soft(float* scores, std::size_t n_q, std::size_t n_k, const AlignMask& mask) {
  const char* op = "align_soft";
  require_data(scores, checked_mul(n_q, n_k, op), op, "scores");
  if (mask.causal && n_k < n_q)  // the message is built only on failure: this runs on every decoding step
    throw Error("align_soft: a causal mask needs at least as many keys as queries (got " + std::to_string(n_q) +
                " queries, " + std::to_string(n_k) + " keys)");
  if (n_q == 0 || n_k == 0) return;
  const bool plain = mask.key_keep == nullptr && mask.keep == nullptr && !mask.causal;
  if (plain) {
    for (std::size_t i = 0; i < n_q; ++i) kernels::softmax(scores + i * n_k, n_k);
    return;
  }
  std::vector<std::uint8_t> keep(n_k);
  const std::size_t offset = n_k - (mask.causal ? n_q : 0);
  for (std::size_t i = 0; i < n_q; ++i) {
    for (std::size_t j = 0; j < n_k; ++j) {
      bool k = true;
      if (mask.key_keep != nullptr) k = k && mask.key_keep[j] != 0;
      if (mask.keep != nullptr) k = k && mask.keep[i * n_k + j] != 0;
      if (mask.causal) k = k && j <= i + offset;
      keep[j] = k ? 1 : 0;
    }
    kernels::softmax(scores + i * n_k, n_k, keep.data());
  }
}

bool row_is_empty(const float* weights, std::size_t n_k) {
  require_data(weights, n_k, "row_is_empty", "weights");
  for (std::size_t j = 0; j < n_k; ++j) {
    if (weights[j] != 0.0f) return false;
  }
  return true;
}

void align_local_m(float* scores, std::size_t n_k, std::size_t t, std::size_t window_d,
                   const std::uint8_t* key_keep) {
  require_data(scores, n_k, "align_local_m", "scores");
  if (n_k == 0) return;
  std::vector<std::uint8_t> keep(n_k);
  for (std::size_t s = 0; s < n_k; ++s) {
    // |s − t| ≤ D without unsigned wrap-around.
    const std::size_t dist = s > t ? s - t : t - s;
    keep[s] = (dist <= window_d && (key_keep == nullptr || key_keep[s] != 0)) ? 1 : 0;
  }
  kernels::softmax(scores, n_k, keep.data());
}

float local_p_position(const LocalPWeights& w, const float* q, std::size_t source_length) {
  const char* op = "local_p_position";
  detail::require_positive(w.d_att, op, "d_att");
  require_data(w.w_p, checked_mul(w.d_att, w.d_q, op), op, "w_p ([d_att x d_q])");
  require_data(w.v_p, w.d_att, op, "v_p ([d_att])");
  require_data(q, w.d_q, op, "q");
  std::vector<float> hidden(w.d_att);
  kernels::gemm_nt_bias_act(1, w.d_att, w.d_q, q, w.d_q, w.w_p, w.d_q, hidden.data(), w.d_att, nullptr,
                            kernels::Activation::none);
  kernels::vtanh(hidden.data(), w.d_att);
  float logit = kernels::dot(w.v_p, hidden.data(), w.d_att);
  kernels::vsigmoid(&logit, 1);
  return static_cast<float>(source_length) * logit;
}

void align_local_p(float* scores, std::size_t n_k, float p, std::size_t window_d,
                   const std::uint8_t* key_keep) {
  require_data(scores, n_k, "align_local_p", "scores");
  require(window_d >= 1,
          "align_local_p: the half window D must be at least 1 (sigma = D/2 must be positive)");
  require(std::isfinite(p), "align_local_p: the window centre p must be a finite number");
  if (n_k == 0) return;
  const double d = static_cast<double>(window_d);
  std::vector<std::uint8_t> keep(n_k);
  for (std::size_t s = 0; s < n_k; ++s) {
    const double dist = std::fabs(static_cast<double>(s) - static_cast<double>(p));
    keep[s] = (dist <= d && (key_keep == nullptr || key_keep[s] != 0)) ? 1 : 0;
  }
  kernels::softmax(scores, n_k, keep.data());
  const double sigma = d / 2.0;
  for (std::size_t s = 0; s < n_k; ++s) {
    if (keep[s] == 0) continue;
    const double delta = static_cast<double>(s) - static_cast<double>(p);
    scores[s] = static_cast<float>(scores[s] * std::exp(-(delta * delta) / (2.0 * sigma * sigma)));
  }
}

std::size_t align_hard_argmax(const float* weights, std::size_t n, float* one_hot) {
  require(n >= 1, "align_hard_argmax: needs at least one position");
  require_data(weights, n, "align_hard_argmax", "weights");
  require_data(one_hot, n, "align_hard_argmax", "one_hot");
  std::size_t best = 0;
  for (std::size_t j = 1; j < n; ++j) {
    // NaN never wins: comparisons with NaN are false.
    if (weights[j] > weights[best] || std::isnan(weights[best])) best = j;
  }
  for (std::size_t j = 0; j < n; ++j) one_hot[j] = j == best ? 1.0f : 0.0f;
  return best;
}

std::uint64_t SplitMix64::next_u64() {
  // splitmix64: a Weyl sequence (golden-ratio increment) passed through a bijective 64-bit finaliser.
  state_ += 0x9E3779B97F4A7C15ull;
  std::uint64_t z = state_;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double SplitMix64::next_double() {
  // The top 53 bits scaled by 2^-53: every value k/2^53, k < 2^53, is exact in double on every platform.
  return static_cast<double>(next_u64() >> 11) * (1.0 / 9007199254740992.0);
}

std::size_t align_hard_sample(const float* weights, std::size_t n, SplitMix64& rng, float* one_hot) {
  require(n >= 1, "align_hard_sample: needs at least one position");
  require_data(weights, n, "align_hard_sample", "weights");
  double total = 0.0;
  for (std::size_t j = 0; j < n; ++j) {
    require(std::isfinite(weights[j]) && weights[j] >= 0.0f,
            "align_hard_sample: weights must be finite and >= 0 (position " + std::to_string(j) + " is " +
                std::to_string(weights[j]) + ")");
    total += weights[j];
  }
  require(total > 0.0, "align_hard_sample: weights sum to 0; nothing can be sampled (fully masked row?)");
  const double target = rng.next_double() * total;
  std::size_t chosen = n;
  double running = 0.0;
  std::size_t last_positive = 0;
  for (std::size_t j = 0; j < n; ++j) {
    if (weights[j] <= 0.0f) continue;
    last_positive = j;
    running += weights[j];
    if (target < running) {
      chosen = j;
      break;
    }
  }
  // Rounding can leave target ≥ the final running sum: the draw then belongs to the last position with mass.
  if (chosen == n) chosen = last_positive;
  if (one_hot != nullptr) {
    for (std::size_t j = 0; j < n; ++j) one_hot[j] = j == chosen ? 1.0f : 0.0f;
  }
  return chosen;
}

}  // namespace attnlens::attention
