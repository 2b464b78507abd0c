#include "models/hf_vit.h"

#include <cmath>
#include <string>
#include <utility>

#include "common.h"
#include "kernels/kernels.h"

namespace attnlens::models {

namespace {

constexpr std::int64_t kMaxSize = 1 << 16;
constexpr std::size_t kChannels = 3;

// image_size / patch_size: a number or [height, width], as HF's ViTConfig allows.
std::pair<std::size_t, std::size_t> size_pair(const io::Bundle& b, const hf::HfConfig& cfg,
                                              const std::string& key, std::int64_t fallback) {
  const auto& hc = b.config().at("hf_config");
  const auto it = hc.find(key);
  if (it != hc.end() && it->is_array()) {
    if (it->size() != 2 || !(*it)[0].is_number_integer() || !(*it)[1].is_number_integer() || (*it)[0] < 1 ||
        (*it)[1] < 1 || (*it)[0] > kMaxSize || (*it)[1] > kMaxSize)
      cfg.unsupported(key, key + " must be a positive integer or [height, width]");
    return {(*it)[0].get<std::size_t>(), (*it)[1].get<std::size_t>()};
  }
  const auto v = static_cast<std::size_t>(cfg.integer(key, fallback, 1, kMaxSize));
  return {v, v};
}

}  // namespace

HfVit::HfVit(const io::Bundle& b) {
  require(b.architecture() == "hf-vit",
          "HfVit: bundle " + b.name() + " is " + b.architecture() + ", not hf-vit");
  const hf::HfConfig cfg(b);
  d_ = static_cast<std::size_t>(cfg.integer("hidden_size", 768, 1, 1 << 20));
  const auto n_layers = static_cast<std::size_t>(cfg.integer("num_hidden_layers", 12, 1, 1024));
  heads_ = static_cast<std::size_t>(cfg.integer("num_attention_heads", 12, 1, 1 << 20));
  if (d_ % heads_ != 0) cfg.unsupported("num_attention_heads", "num_attention_heads must divide hidden_size");
  const auto inner = static_cast<std::size_t>(cfg.integer("intermediate_size", 3072, 1, 1 << 20));
  const hf::Activation act = hf::activation(cfg, "hidden_act", "gelu");
  const auto eps = static_cast<float>(cfg.number("layer_norm_eps", 1e-12));
  if (cfg.integer("num_channels", 3, 1, 1 << 20) != 3)
    cfg.unsupported("num_channels", "only 3 channels (RGB)");
  if (!cfg.boolean("qkv_bias", true)) cfg.unsupported("qkv_bias", "attention without biases");
  std::tie(image_h_, image_w_) = size_pair(b, cfg, "image_size", 224);
  std::tie(patch_h_, patch_w_) = size_pair(b, cfg, "patch_size", 16);
  if (image_h_ % patch_h_ != 0 || image_w_ % patch_w_ != 0)
    cfg.unsupported("image_size", "an image_size that is not a whole number of patches");
  grid_h_ = image_h_ / patch_h_;
  grid_w_ = image_w_ / patch_w_;
  const std::size_t n = patches() + 1;

  const std::string e = "vit.embeddings.";
  cls_ = b.tensor(e + "cls_token", {1, 1, d_});
  positions_ = b.tensor(e + "position_embeddings", {1, n, d_});
  patch_weight_ = b.tensor(e + "patch_embeddings.projection.weight", {d_, kChannels, patch_h_, patch_w_});
  patch_bias_ = b.tensor(e + "patch_embeddings.projection.bias", {d_});
  for (std::size_t l = 0; l < n_layers; ++l) {
    const std::string p = "vit.encoder.layer." + std::to_string(l) + ".";
    Block blk;
    blk.before = hf::LayerNorm(b, p + "layernorm_before", d_, eps);
    blk.attention =
        hf::SelfAttention(b, p + "attention.attention.query", p + "attention.attention.key",
                          p + "attention.attention.value", p + "attention.output.dense", d_, heads_);
    blk.after = hf::LayerNorm(b, p + "layernorm_after", d_, eps);
    blk.mlp = hf::FeedForward(b, p + "intermediate.dense", p + "output.dense", d_, inner, act);
    blocks_.push_back(std::move(blk));
  }
  final_norm_ = hf::LayerNorm(b, "vit.layernorm", d_, eps);
  if (b.has_tensor("vit.pooler.dense.weight"))
    pooler_ = nn::Linear(b, "vit.pooler.dense.weight", d_, d_, "vit.pooler.dense.bias");
  if (b.has_tensor("classifier.weight")) {
    labels_ = b.weights().info("classifier.weight").shape.at(0);
    classifier_ = nn::Linear(b, "classifier.weight", labels_, d_, "classifier.bias");
  }
  b.check_all_tensors_used();
}

HfEncoderOutput HfVit::forward(const std::vector<float>& pixels, std::size_t height, std::size_t width,
                               AttentionTrace* trace, std::vector<std::vector<float>>* hidden,
                               AttentionTrace* vectors) const {
  require(height == image_h_ && width == image_w_,
          "ViT: the image is " + std::to_string(height) + "x" + std::to_string(width) + ", the model takes " +
              std::to_string(image_h_) + "x" + std::to_string(image_w_) +
              " (image_size; interpolate_pos_encoding is not supported)");
  require(pixels.size() == kChannels * height * width, "ViT: " + std::to_string(pixels.size()) +
                                                           " pixel values for a 3x" + std::to_string(height) +
                                                           "x" + std::to_string(width) + " image");
  const std::size_t np = patches(), n = np + 1, k = kChannels * patch_h_ * patch_w_;
  // cols (N, 3·p_h·p_w): patch (gy, gx)'s values in the conv weight's order (channel, row, column)
  std::vector<float> cols(np * k);
  for (std::size_t gy = 0; gy < grid_h_; ++gy)
    for (std::size_t gx = 0; gx < grid_w_; ++gx) {
      float* row = cols.data() + (gy * grid_w_ + gx) * k;
      for (std::size_t c = 0; c < kChannels; ++c)
        for (std::size_t y = 0; y < patch_h_; ++y) {
          const float* src = pixels.data() + (c * height + gy * patch_h_ + y) * width + gx * patch_w_;
          std::copy(src, src + patch_w_, row + (c * patch_h_ + y) * patch_w_);
        }
    }
  // h (N + 1, d): row 0 = cls_token, rows 1.. = cols·Wᵀ + b (the convolution); then + position_embeddings
  std::vector<float> h(n * d_);
  std::copy(cls_.begin(), cls_.end(), h.begin());
  kernels::gemm_nt_bias_act(np, d_, k, cols.data(), k, patch_weight_.data(), k, h.data() + d_, d_,
                            patch_bias_.data(), kernels::Activation::none);
  hf::add_in_place(h.data(), positions_.data(), h.size());
  std::vector<float> a(n * d_), y(n * d_);
  for (std::size_t l = 0; l < blocks_.size(); ++l) {
    const Block& blk = blocks_[l];
    if (hidden) hidden->push_back(h);
    // h += out(self-attention(layernorm_before(h)));  maps (H, N + 1, N + 1)
    a = h;
    blk.before.apply(a.data(), n);
    blk.attention.forward(a.data(), n, y.data(), trace, "self-attention", static_cast<int>(l), vectors);
    hf::add_in_place(h.data(), y.data(), h.size());
    // h += down(act(up(layernorm_after(h))))
    a = h;
    blk.after.apply(a.data(), n);
    blk.mlp.forward(a.data(), n, y.data());
    hf::add_in_place(h.data(), y.data(), h.size());
  }
  if (hidden) hidden->push_back(h);
  // h = vit.layernorm(h)
  final_norm_.apply(h.data(), n);
  HfEncoderOutput out;
  if (pooler_.out() != 0) {
    // pooled (d) = tanh(pooler.dense(h[0]))
    out.pooled.resize(d_);
    pooler_.forward(1, h.data(), d_, out.pooled.data(), d_);
    for (float& v : out.pooled) v = std::tanh(v);
  }
  if (labels_ != 0) {
    // logits (labels) = classifier(h[0])
    out.logits.resize(labels_);
    classifier_.forward(1, h.data(), d_, out.logits.data(), labels_);
  }
  out.last_hidden_state = std::move(h);
  return out;
}

}  // namespace attnlens::models
