#include "models/hf_blocks.h"

#include <cmath>

#include "attention/trace_record.h"
#include "common.h"
#include "kernels/kernels.h"

namespace attnlens::models::hf {

HfConfig::HfConfig(const io::Bundle& bundle)
    : cfg_(bundle.config_object().object("hf_config")) {}

bool HfConfig::present(const std::string& key) const { return cfg_.has(key) && !cfg_.at(key).is_null(); }

std::int64_t HfConfig::integer(const std::string& key, std::int64_t fallback, std::int64_t lo,
                               std::int64_t hi) const {
  return present(key) ? cfg_.integer(key, lo, hi) : fallback;
}

double HfConfig::number(const std::string& key, double fallback) const {
  return present(key) ? cfg_.number(key) : fallback;
}

bool HfConfig::boolean(const std::string& key, bool fallback) const {
  return present(key) ? cfg_.boolean(key) : fallback;
}

std::string HfConfig::string(const std::string& key, const std::string& fallback) const {
  return present(key) ? cfg_.string(key) : fallback;
}

void HfConfig::unsupported(const std::string& key, const std::string& what) const {
  cfg_.fail(key, what + " (not implemented by the engine)");
}

LayerNorm::LayerNorm(const io::Bundle& b, const std::string& prefix, std::size_t d, float eps_)
    : weight(b.tensor(prefix + ".weight", {d})), bias(b.tensor(prefix + ".bias", {d})), eps(eps_) {}

void LayerNorm::apply(float* x, std::size_t rows) const {
  const std::size_t d = weight.size();
  for (std::size_t r = 0; r < rows; ++r) kernels::layer_norm(x + r * d, x + r * d, d, weight.data(), bias.data(), eps);
}

Activation activation(const HfConfig& config, const std::string& key, const std::string& fallback) {
  const std::string name = config.string(key, fallback);
  if (name == "gelu_new" || name == "gelu_pytorch_tanh") return Activation::gelu_new;
  if (name == "gelu") return Activation::gelu;
  if (name == "relu") return Activation::relu;
  if (name == "silu" || name == "swish") return Activation::silu;
  config.unsupported(key, "activation '" + name + "'; supported: gelu_new, gelu_pytorch_tanh, gelu, relu, silu, swish");
}

void activate(Activation act, float* x, std::size_t n) {
  switch (act) {
    case Activation::gelu:
      kernels::vgelu(x, n);
      return;
    case Activation::relu:
      kernels::vrelu(x, n);
      return;
    case Activation::gelu_new: {
      // ½x(1 + tanh(√(2/π)(x + 0.044715x³))), the tanh through the kernel (≤ 2e-7 relative).
      const float c = std::sqrt(2.0f / 3.14159265358979323846f);
      std::vector<float> t(x, x + n);
      for (float& v : t) v = c * (v + 0.044715f * v * v * v);
      kernels::vtanh(t.data(), n);
      for (std::size_t i = 0; i < n; ++i) x[i] = 0.5f * x[i] * (1.0f + t[i]);
      return;
    }
    case Activation::silu: {
      std::vector<float> s(x, x + n);
      kernels::vsigmoid(s.data(), n);
      for (std::size_t i = 0; i < n; ++i) x[i] *= s[i];
      return;
    }
  }
}

void record_heads(AttentionTrace& trace, const std::string& kind, int layer, std::size_t heads, std::size_t rows,
                  std::size_t columns, const float* weights) {
  for (std::size_t h = 0; h < heads; ++h)
    trace.record(kind, layer, static_cast<int>(h), -1, {rows, columns}, weights + h * rows * columns);
}

void record_qk(AttentionTrace& vectors, const std::string& kind, int layer, std::size_t heads, const float* q,
               std::size_t rows, const float* k, std::size_t columns, std::size_t d) {
  const std::size_t d_head = d / heads;
  const auto l = static_cast<std::size_t>(layer);
  for (std::size_t h = 0; h < heads; ++h) {
    attention::record_head_vectors(vectors, kind + ".query", l, h, q, rows, d, d_head);
    attention::record_head_vectors(vectors, kind + ".key", l, h, k, columns, d, d_head);
  }
}

}  // namespace attnlens::models::hf
