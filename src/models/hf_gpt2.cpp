#include "models/hf_gpt2.h"

#include <cmath>
#include <string>

#include "common.h"
#include "kernels/kernels.h"

namespace attnlens::models {

namespace {
constexpr std::int64_t kMaxSize = 1 << 20;
}

HfGpt2::HfGpt2(const io::Bundle& b) {
  const hf::HfConfig cfg(b);
  vocab_ = static_cast<std::size_t>(cfg.integer("vocab_size", 50257, 1, kMaxSize));
  positions_ = static_cast<std::size_t>(cfg.integer("n_positions", 1024, 1, kMaxSize));
  d_ = static_cast<std::size_t>(cfg.integer("n_embd", 768, 1, kMaxSize));
  const auto n_layer = static_cast<std::size_t>(cfg.integer("n_layer", 12, 1, 1024));
  heads_ = static_cast<std::size_t>(cfg.integer("n_head", 12, 1, kMaxSize));
  if (d_ % heads_ != 0) cfg.unsupported("n_head", "n_head must divide n_embd");
  d_head_ = d_ / heads_;
  inner_ = static_cast<std::size_t>(cfg.integer("n_inner", static_cast<std::int64_t>(4 * d_), 1, kMaxSize));
  eos_ = static_cast<int>(cfg.integer("eos_token_id", 50256, -1, kMaxSize));
  act_ = hf::activation(cfg, "activation_function", "gelu_new");
  const auto eps = static_cast<float>(cfg.number("layer_norm_epsilon", 1e-5));
  if (!cfg.boolean("scale_attn_weights", true)) q_scale_ = std::sqrt(static_cast<float>(d_head_));
  scale_by_layer_ = cfg.boolean("scale_attn_by_inverse_layer_idx", false);
  if (cfg.boolean("add_cross_attention", false)) cfg.unsupported("add_cross_attention", "cross-attention");
  if (cfg.boolean("reorder_and_upcast_attn", false)) cfg.unsupported("reorder_and_upcast_attn", "upcast attention");

  wte_ = b.tensor("transformer.wte.weight", {vocab_, d_});
  wpe_ = b.tensor("transformer.wpe.weight", {positions_, d_});
  if (b.has_tensor("lm_head.weight")) lm_head_ = b.tensor("lm_head.weight", {vocab_, d_});
  using Rows = nn::Linear::Rows;
  for (std::size_t l = 0; l < n_layer; ++l) {
    const std::string p = "transformer.h." + std::to_string(l) + ".";
    Block blk;
    blk.ln_1 = hf::LayerNorm(b, p + "ln_1", d_, eps);
    blk.ln_2 = hf::LayerNorm(b, p + "ln_2", d_, eps);
    blk.c_attn = nn::Linear::conv1d(b, p + "attn.c_attn.weight", d_, 3 * d_, p + "attn.c_attn.bias", Rows::any);
    blk.c_proj = nn::Linear::conv1d(b, p + "attn.c_proj.weight", d_, d_, p + "attn.c_proj.bias", Rows::any);
    blk.c_fc = nn::Linear::conv1d(b, p + "mlp.c_fc.weight", d_, inner_, p + "mlp.c_fc.bias", Rows::any);
    blk.mlp_proj = nn::Linear::conv1d(b, p + "mlp.c_proj.weight", inner_, d_, p + "mlp.c_proj.bias", Rows::any);
    blocks_.push_back(std::move(blk));
  }
  ln_f_ = hf::LayerNorm(b, "transformer.ln_f", d_, eps);
  b.check_all_tensors_used();
}

HfGpt2::State HfGpt2::start() const {
  State s;
  s.layers.reserve(blocks_.size());
  for (std::size_t l = 0; l < blocks_.size(); ++l) s.layers.emplace_back(d_, heads_, positions_);
  return s;
}

void HfGpt2::feed(State& state, const int* ids, std::size_t n, float* logits, AttentionTrace* trace,
                  std::vector<std::vector<float>>* hidden, AttentionTrace* vectors) const {
  require(state.layers.size() == blocks_.size(), "HfGpt2::feed: the state belongs to another model");
  const std::size_t p0 = state.length();
  require(n <= positions_ - p0, "GPT-2: " + std::to_string(p0 + n) + " positions exceed n_positions = " +
                                    std::to_string(positions_));
  // h (n, d) = wte[id] + wpe[position]
  std::vector<float> h(n * d_);
  for (std::size_t i = 0; i < n; ++i) {
    require(ids[i] >= 0 && static_cast<std::size_t>(ids[i]) < vocab_,
            "GPT-2: token id " + std::to_string(ids[i]) + " outside the vocabulary [0, " + std::to_string(vocab_) + ")");
    const float* e = wte_.data() + static_cast<std::size_t>(ids[i]) * d_;
    const float* p = wpe_.data() + (p0 + i) * d_;
    for (std::size_t j = 0; j < d_; ++j) h[i * d_ + j] = e[j] + p[j];
  }
  const std::size_t total = p0 + n;  // positions attended by the last row
  std::vector<float> a(n * d_), qkv(n * 3 * d_), q(n * d_), k(n * d_), v(n * d_), concat(n * d_), out(n * d_),
      f(n * inner_), weights(heads_ * n * total);
  for (std::size_t l = 0; l < blocks_.size(); ++l) {
    const Block& blk = blocks_[l];
    if (hidden) hidden->push_back(h);
    // a (n, d) = ln_1(h);  qkv (n, 3d) = c_attn(a): q | k | v
    a = h;
    blk.ln_1.apply(a.data(), n);
    blk.c_attn.forward(n, a.data(), d_, qkv.data(), 3 * d_);
    const float qs = q_scale_ / (scale_by_layer_ ? static_cast<float>(l + 1) : 1.0f);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < d_; ++j) {
        q[i * d_ + j] = qkv[i * 3 * d_ + j] * qs;
        k[i * d_ + j] = qkv[i * 3 * d_ + d_ + j];
        v[i * d_ + j] = qkv[i * 3 * d_ + 2 * d_ + j];
      }
    // past_key_values[l] += (k, v);  concat (n, d) = heads of softmax(q·kᵀ/√d_head, causal)·v;  weights (H, n, total)
    if (vectors)
      hf::record_qk(*vectors, "self-attention", static_cast<int>(l), heads_, q.data(), n, k.data(), n, d_);
    state.layers[l].append_projected(k.data(), v.data(), n);
    state.layers[l].attend_heads(0, q.data(), n, concat.data(), weights.data(), /*causal=*/true);
    if (trace) hf::record_heads(*trace, "self-attention", static_cast<int>(l), heads_, n, total, weights.data());
    // h += c_proj(concat)
    blk.c_proj.forward(n, concat.data(), d_, out.data(), d_);
    for (std::size_t i = 0; i < n * d_; ++i) h[i] += out[i];
    // h += mlp.c_proj(act(c_fc(ln_2(h))))
    a = h;
    blk.ln_2.apply(a.data(), n);
    blk.c_fc.forward(n, a.data(), d_, f.data(), inner_);
    hf::activate(act_, f.data(), f.size());
    blk.mlp_proj.forward(n, f.data(), inner_, out.data(), d_);
    for (std::size_t i = 0; i < n * d_; ++i) h[i] += out[i];
  }
  // logits (n, V) = ln_f(h)·wteᵀ
  ln_f_.apply(h.data(), n);
  if (hidden) hidden->push_back(h);
  const std::vector<float>& head = lm_head_.empty() ? wte_ : lm_head_;
  kernels::gemm_nt_bias_act(n, vocab_, d_, h.data(), d_, head.data(), d_, logits, vocab_, nullptr,
                            kernels::Activation::none);
}

std::vector<float> HfGpt2::forward(const std::vector<int>& ids, AttentionTrace* trace,
                                   std::vector<std::vector<float>>* hidden, AttentionTrace* vectors) const {
  State s = start();
  std::vector<float> logits(ids.size() * vocab_);
  feed(s, ids.data(), ids.size(), logits.data(), trace, hidden, vectors);
  return logits;
}

}  // namespace attnlens::models
