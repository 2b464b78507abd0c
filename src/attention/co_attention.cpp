// Parallel and alternating co-attention; formulas and paper in co_attention.h.
#include "attention/co_attention.h"

#include <algorithm>
#include <vector>

#include "attention/alignment.h"
#include "attention/detail.h"
#include "kernels/kernels.h"

namespace attnlens::attention {

using detail::checked_mul;
using detail::require_data;

namespace {
// The tensors both parallel co-attentions read and write.
void check_parallel_buffers(const char* op, std::size_t d, const float* v, std::size_t n, const float* q,
                            std::size_t t, const float* affinity, const float* a_v, const float* a_q,
                            const float* v_hat, const float* q_hat) {
  require_data(v, checked_mul(n, d, op), op, "v");
  require_data(q, checked_mul(t, d, op), op, "q");
  require_data(affinity, checked_mul(t, n, op), op, "affinity");
  require_data(a_v, n, op, "a_v");
  require_data(a_q, t, op, "a_q");
  require_data(v_hat, d, op, "v_hat");
  require_data(q_hat, d, op, "q_hat");
}
}  // namespace

void parallel_co_attention(const ParallelCoAttentionWeights& w, const float* v, std::size_t n, const float* q,
                           std::size_t t, float* affinity, float* a_v, float* a_q, float* v_hat,
                           float* q_hat) {
  const char* op = "parallel_co_attention";
  detail::require_positive(w.k, op, "k");
  require_data(w.w_b, checked_mul(w.d, w.d, op), op, "w_b ([d x d])");
  require_data(w.w_v, checked_mul(w.k, w.d, op), op, "w_v ([k x d])");
  require_data(w.w_q, checked_mul(w.k, w.d, op), op, "w_q ([k x d])");
  require_data(w.w_hv, w.k, op, "w_hv ([k])");
  require_data(w.w_hq, w.k, op, "w_hq ([k])");
  check_parallel_buffers(op, w.d, v, n, q, t, affinity, a_v, a_q, v_hat, q_hat);
  const std::size_t d = w.d, k = w.k;

  // C = tanh(Q W_b Vᵀ) [T × N].
  std::vector<float> qw(t * d);
  detail::matmul(t, d, d, q, w.w_b, qw.data());
  detail::matmul_nt(t, n, d, qw.data(), v, affinity);
  kernels::vtanh(affinity, t * n);

  // Row-major transposes of the paper's terms: (W_v V)ᵀ = V W_vᵀ [N × k], (W_q Q)ᵀ = Q W_qᵀ [T × k].
  std::vector<float> vw(n * k), qwk(t * k);
  kernels::gemm_nt_bias_act(n, k, d, v, d, w.w_v, d, vw.data(), k, nullptr, kernels::Activation::none);
  kernels::gemm_nt_bias_act(t, k, d, q, d, w.w_q, d, qwk.data(), k, nullptr, kernels::Activation::none);
  // H^vᵀ = tanh(V W_vᵀ + Cᵀ (Q W_qᵀ)) [N × k];  H^qᵀ = tanh(Q W_qᵀ + C (V W_vᵀ)) [T × k].
  std::vector<float> hv(vw), hq(qwk);
  // The kernel contract has no transposed-A gemm: materialise Cᵀ once.
  std::vector<float> affinity_t(n * t);
  for (std::size_t i = 0; i < t; ++i) {
    for (std::size_t j = 0; j < n; ++j) affinity_t[j * t + i] = affinity[i * n + j];
  }
  if (n > 0 && t > 0) {
    kernels::gemm(n, k, t, affinity_t.data(), t, qwk.data(), k, hv.data(), k, true);
    kernels::gemm(t, k, n, affinity, n, vw.data(), k, hq.data(), k, true);
  }
  kernels::vtanh(hv.data(), hv.size());
  kernels::vtanh(hq.data(), hq.size());
  kernels::gemm_nt_bias_act(n, 1, k, hv.data(), k, w.w_hv, k, a_v, 1, nullptr, kernels::Activation::none);
  kernels::gemm_nt_bias_act(t, 1, k, hq.data(), k, w.w_hq, k, a_q, 1, nullptr, kernels::Activation::none);
  align_soft(a_v, 1, n);
  align_soft(a_q, 1, t);
  detail::matmul(1, d, n, a_v, v, v_hat);
  detail::matmul(1, d, t, a_q, q, q_hat);
}

void max_pooled_co_attention(const ParallelCoAttentionWeights& w, const float* v, std::size_t n,
                             const float* q, std::size_t t, float* affinity, float* a_v, float* a_q,
                             float* v_hat, float* q_hat) {
  const char* op = "max_pooled_co_attention";
  detail::require_positive(n, op, "n (image regions)");
  detail::require_positive(t, op, "t (question words)");
  require_data(w.w_b, checked_mul(w.d, w.d, op), op, "w_b ([d x d])");
  check_parallel_buffers(op, w.d, v, n, q, t, affinity, a_v, a_q, v_hat, q_hat);
  const std::size_t d = w.d;
  std::vector<float> qw(t * d);
  detail::matmul(t, d, d, q, w.w_b, qw.data());
  detail::matmul_nt(t, n, d, qw.data(), v, affinity);
  kernels::vtanh(affinity, t * n);
  for (std::size_t j = 0; j < n; ++j) a_v[j] = affinity[j];
  for (std::size_t i = 0; i < t; ++i) {
    const float* row = affinity + i * n;
    float row_max = row[0];
    for (std::size_t j = 0; j < n; ++j) {
      row_max = std::max(row_max, row[j]);
      a_v[j] = std::max(a_v[j], row[j]);
    }
    a_q[i] = row_max;
  }
  align_soft(a_v, 1, n);
  align_soft(a_q, 1, t);
  detail::matmul(1, d, n, a_v, v, v_hat);
  detail::matmul(1, d, t, a_q, q, q_hat);
}

namespace {

// x̂ = A(X; g) (Lu eq. 5). g may be null (g = 0).
void co_attention_step(const CoAttentionStepWeights& w, std::size_t d, std::size_t k, const float* x,
                       std::size_t n, const float* g, float* a, float* x_hat) {
  std::vector<float> h(n * k);
  kernels::gemm_nt_bias_act(n, k, d, x, d, w.w_x, d, h.data(), k, nullptr, kernels::Activation::none);
  if (g != nullptr) {
    std::vector<float> wg(k);
    kernels::gemm_nt_bias_act(1, k, d, g, d, w.w_g, d, wg.data(), k, nullptr, kernels::Activation::none);
    for (std::size_t i = 0; i < n; ++i) kernels::add(wg.data(), h.data() + i * k, k);
  }
  kernels::vtanh(h.data(), h.size());
  kernels::gemm_nt_bias_act(n, 1, k, h.data(), k, w.w_hx, k, a, 1, nullptr, kernels::Activation::none);
  align_soft(a, 1, n);
  detail::matmul(1, d, n, a, x, x_hat);
}

}  // namespace

void alternating_co_attention(const AlternatingCoAttentionWeights& w, const float* v, std::size_t n,
                              const float* q, std::size_t t, float* a_s, float* s_hat, float* a_v,
                              float* v_hat, float* a_q, float* q_hat) {
  const char* op = "alternating_co_attention";
  detail::require_positive(w.k, op, "k");
  const std::size_t kd = checked_mul(w.k, w.d, op);
  for (int s = 0; s < 3; ++s) {
    require_data(w.step[s].w_x, kd, op, s == 0 ? "step[0].w_x" : (s == 1 ? "step[1].w_x" : "step[2].w_x"));
    require_data(w.step[s].w_hx, w.k, op,
                 s == 0 ? "step[0].w_hx" : (s == 1 ? "step[1].w_hx" : "step[2].w_hx"));
  }
  require_data(w.step[1].w_g, kd, op, "step[1].w_g");
  require_data(w.step[2].w_g, kd, op, "step[2].w_g");
  require_data(v, checked_mul(n, w.d, op), op, "v");
  require_data(q, checked_mul(t, w.d, op), op, "q");
  require_data(a_s, t, op, "a_s");
  require_data(a_v, n, op, "a_v");
  require_data(a_q, t, op, "a_q");
  require_data(s_hat, w.d, op, "s_hat");
  require_data(v_hat, w.d, op, "v_hat");
  require_data(q_hat, w.d, op, "q_hat");
  co_attention_step(w.step[0], w.d, w.k, q, t, nullptr, a_s, s_hat);
  co_attention_step(w.step[1], w.d, w.k, v, n, s_hat, a_v, v_hat);
  co_attention_step(w.step[2], w.d, w.k, q, t, v_hat, a_q, q_hat);
}

}  // namespace attnlens::attention
