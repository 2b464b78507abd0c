// Pieces the Hugging Face generating models share (models/hf_gpt2.h, models/hf_marian.h): reading hf_config with
// Hugging Face's defaults, torch.nn.LayerNorm with the config's eps, the activations of transformers' ACT2FN that
// these checkpoints name, and recording one [heads × rows × columns] block of softmax weights as one map per head
// (and the query and key vectors behind them).
//   LayerNorm(x) = (x − mean)/√(var + eps)·weight + bias   (biased variance)
//   gelu_new(x) = gelu_pytorch_tanh(x) = ½x(1 + tanh(√(2/π)(x + 0.044715x³)));  gelu(x) = ½x(1 + erf(x/√2));
//   silu(x) = swish(x) = x·σ(x);  relu(x) = max(x, 0)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/bundle.h"
#include "trace/trace.h"

namespace attnlens::models::hf {

// The checkpoint's config.json as the converter stored it (bundle config "hf_config"), read with HF's defaults: a
// key that is missing or null takes the default; any other value must have the right type and range.
class HfConfig {
 public:
  explicit HfConfig(const io::Bundle& bundle);
  std::int64_t integer(const std::string& key, std::int64_t fallback, std::int64_t lo, std::int64_t hi) const;
  double number(const std::string& key, double fallback) const;
  bool boolean(const std::string& key, bool fallback) const;
  std::string string(const std::string& key, const std::string& fallback) const;
  // Error naming the key: a configuration the engine does not implement.
  [[noreturn]] void unsupported(const std::string& key, const std::string& what) const;

 private:
  bool present(const std::string& key) const;
  io::ConfigObject cfg_;
};

struct LayerNorm {
  std::vector<float> weight, bias;  // (d)
  float eps = 1e-5f;
  LayerNorm() = default;
  // <prefix>.weight and <prefix>.bias, both (d).
  LayerNorm(const io::Bundle& b, const std::string& prefix, std::size_t d, float eps);
  // In place on rows × d (row stride d).
  void apply(float* x, std::size_t rows) const;
};

enum class Activation : std::uint8_t { gelu_new, gelu, relu, silu };
// The ACT2FN name under `key` (fallback when absent): gelu_new and gelu_pytorch_tanh → gelu_new; gelu; relu; silu and
// swish → silu. Any other name fails through config.unsupported().
Activation activation(const HfConfig& config, const std::string& key, const std::string& fallback);
void activate(Activation act, float* x, std::size_t n);

// The neuron view's vectors (`qk`): records, per head h, "<kind>.query" [rows, d_head] from q [rows × d] and
// "<kind>.key" [columns, d_head] from k [columns × d] (head h's columns [h·d_head, (h+1)·d_head)), at (layer, h).
// q and k must be the ones the map was computed from — map row i = softmax_j(q[i]·k[j] / √d_head) (+ mask) — so a
// model that scales its queries otherwise (GPT-2 without scale_attn_weights, by 1/(layer + 1)) records them scaled.
void record_qk(AttentionTrace& vectors, const std::string& kind, int layer, std::size_t heads, const float* q,
               std::size_t rows, const float* k, std::size_t columns, std::size_t d);

// Records weights [heads × rows × columns] as `heads` maps (kind, layer, head h, dims {rows, columns}).
void record_heads(AttentionTrace& trace, const std::string& kind, int layer, std::size_t heads, std::size_t rows,
                  std::size_t columns, const float* weights);

}  // namespace attnlens::models::hf
