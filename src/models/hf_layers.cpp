#include "models/hf_layers.h"

#include <vector>

#include "attention/multi_head.h"

namespace attnlens::models::hf {

void add_in_place(float* y, const float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] += x[i];
}

SelfAttention::SelfAttention(const io::Bundle& b, const std::string& q, const std::string& k,
                             const std::string& v, const std::string& out, std::size_t d, std::size_t heads)
    : q_(b, q + ".weight", d, d, q + ".bias"),
      k_(b, k + ".weight", d, d, k + ".bias"),
      v_(b, v + ".weight", d, d, v + ".bias"),
      out_(b, out + ".weight", d, d, out + ".bias"),
      d_(d),
      heads_(heads) {}

void SelfAttention::forward(const float* x, std::size_t n, float* y, AttentionTrace* trace,
                            const std::string& kind, int layer, AttentionTrace* vectors) const {
  // q, k, v (n, d) = x·Wᵀ + b
  std::vector<float> q(n * d_), k(n * d_), v(n * d_), concat(n * d_), weights(heads_ * n * n);
  q_.forward(n, x, d_, q.data(), d_);
  k_.forward(n, x, d_, k.data(), d_);
  v_.forward(n, x, d_, v.data(), d_);
  if (vectors) record_qk(*vectors, kind, layer, heads_, q.data(), n, k.data(), n, d_);
  // concat (n, d) = heads of softmax(q·kᵀ / √d_head)·v side by side;  weights (H, n, n)
  attention::attend_heads(d_, heads_, q.data(), n, k.data(), v.data(), n, concat.data(), weights.data());
  if (trace) record_heads(*trace, kind, layer, heads_, n, n, weights.data());
  // y (n, d) = out(concat)
  out_.forward(n, concat.data(), d_, y, d_);
}

FeedForward::FeedForward(const io::Bundle& b, const std::string& up, const std::string& down, std::size_t d,
                         std::size_t inner, Activation act)
    : up_(b, up + ".weight", inner, d, up + ".bias"),
      down_(b, down + ".weight", d, inner, down + ".bias"),
      d_(d),
      inner_(inner),
      act_(act) {}

void FeedForward::forward(const float* x, std::size_t n, float* y) const {
  // f (n, inner) = act(up(x));  y (n, d) = down(f)
  std::vector<float> f(n * inner_);
  up_.forward(n, x, d_, f.data(), inner_);
  activate(act_, f.data(), f.size());
  down_.forward(n, f.data(), inner_, y, d_);
}

}  // namespace attnlens::models::hf
