#include "models/hf_bert.h"

#include <cmath>
#include <string>

#include "common.h"

namespace attnlens::models {

namespace {
constexpr std::int64_t kMaxSize = 1 << 20;
}

HfBert::HfBert(const io::Bundle& b) : distil_(b.architecture() == "hf-distilbert") {
  require(distil_ || b.architecture() == "hf-bert",
          "HfBert: bundle " + b.name() + " is " + b.architecture() + ", not hf-bert or hf-distilbert");
  const hf::HfConfig cfg(b);
  // HF's names differ between the two; the structure does not.
  const std::string d_key = distil_ ? "dim" : "hidden_size",
                    layers_key = distil_ ? "n_layers" : "num_hidden_layers",
                    heads_key = distil_ ? "n_heads" : "num_attention_heads",
                    inner_key = distil_ ? "hidden_dim" : "intermediate_size",
                    act_key = distil_ ? "activation" : "hidden_act";
  vocab_ = static_cast<std::size_t>(cfg.integer("vocab_size", 30522, 1, kMaxSize));
  positions_ = static_cast<std::size_t>(cfg.integer("max_position_embeddings", 512, 1, kMaxSize));
  d_ = static_cast<std::size_t>(cfg.integer(d_key, 768, 1, kMaxSize));
  const auto n_layers = static_cast<std::size_t>(cfg.integer(layers_key, distil_ ? 6 : 12, 1, 1024));
  heads_ = static_cast<std::size_t>(cfg.integer(heads_key, 12, 1, kMaxSize));
  if (d_ % heads_ != 0) cfg.unsupported(heads_key, heads_key + " must divide " + d_key);
  const auto inner = static_cast<std::size_t>(cfg.integer(inner_key, 3072, 1, kMaxSize));
  const hf::Activation act = hf::activation(cfg, act_key, "gelu");
  const float eps = distil_ ? 1e-12f : static_cast<float>(cfg.number("layer_norm_eps", 1e-12));
  if (!distil_) {
    if (cfg.string("position_embedding_type", "absolute") != "absolute")
      cfg.unsupported("position_embedding_type", "relative position embeddings");
    if (cfg.boolean("is_decoder", false)) cfg.unsupported("is_decoder", "a BERT decoder");
  }

  const std::string p = distil_ ? "distilbert." : "bert.";
  word_ = b.tensor(p + "embeddings.word_embeddings.weight", {vocab_, d_});
  position_ = b.tensor(p + "embeddings.position_embeddings.weight", {positions_, d_});
  if (!distil_) {
    const auto types = static_cast<std::size_t>(cfg.integer("type_vocab_size", 2, 1, kMaxSize));
    token_type0_ = b.tensor(p + "embeddings.token_type_embeddings.weight", {types, d_});
    token_type0_.resize(d_);  // HF's default token_type_ids are all 0: row 0 only
  }
  embeddings_norm_ = hf::LayerNorm(b, p + "embeddings.LayerNorm", d_, eps);
  for (std::size_t l = 0; l < n_layers; ++l) {
    Block blk;
    if (distil_) {
      const std::string q = p + "transformer.layer." + std::to_string(l) + ".";
      blk.attention = hf::SelfAttention(b, q + "attention.q_lin", q + "attention.k_lin",
                                        q + "attention.v_lin", q + "attention.out_lin", d_, heads_);
      blk.attention_norm = hf::LayerNorm(b, q + "sa_layer_norm", d_, eps);
      blk.ffn = hf::FeedForward(b, q + "ffn.lin1", q + "ffn.lin2", d_, inner, act);
      blk.output_norm = hf::LayerNorm(b, q + "output_layer_norm", d_, eps);
    } else {
      const std::string q = p + "encoder.layer." + std::to_string(l) + ".";
      blk.attention = hf::SelfAttention(b, q + "attention.self.query", q + "attention.self.key",
                                        q + "attention.self.value", q + "attention.output.dense", d_, heads_);
      blk.attention_norm = hf::LayerNorm(b, q + "attention.output.LayerNorm", d_, eps);
      blk.ffn = hf::FeedForward(b, q + "intermediate.dense", q + "output.dense", d_, inner, act);
      blk.output_norm = hf::LayerNorm(b, q + "output.LayerNorm", d_, eps);
    }
    blocks_.push_back(std::move(blk));
  }
  const std::string pool = distil_ ? "pre_classifier" : p + "pooler.dense";
  if (b.has_tensor(pool + ".weight")) pool_ = nn::Linear(b, pool + ".weight", d_, d_, pool + ".bias");
  if (b.has_tensor("classifier.weight")) {
    require(pool_.out() != 0,
            "weights.safetensors in " + b.name() + ": classifier.weight without " + pool + ".weight");
    labels_ = b.weights().info("classifier.weight").shape.at(0);
    classifier_ = nn::Linear(b, "classifier.weight", labels_, d_, "classifier.bias");
  }
  b.check_all_tensors_used();
}

HfEncoderOutput HfBert::forward(const std::vector<int>& ids, AttentionTrace* trace,
                                std::vector<std::vector<float>>* hidden, AttentionTrace* vectors) const {
  const std::size_t n = ids.size();
  const char* what = distil_ ? "DistilBERT" : "BERT";
  require(n >= 1, std::string(what) + ": no input ids");
  require(n <= positions_, std::string(what) + ": " + std::to_string(n) +
                               " tokens exceed max_position_embeddings = " + std::to_string(positions_));
  // h (n, d) = LayerNorm(word[id] + position[t] (+ token_type[0]))
  std::vector<float> h(n * d_);
  for (std::size_t t = 0; t < n; ++t) {
    require(ids[t] >= 0 && static_cast<std::size_t>(ids[t]) < vocab_,
            std::string(what) + ": token id " + std::to_string(ids[t]) + " outside the vocabulary [0, " +
                std::to_string(vocab_) + ")");
    const float* w = word_.data() + static_cast<std::size_t>(ids[t]) * d_;
    const float* pos = position_.data() + t * d_;
    for (std::size_t j = 0; j < d_; ++j) h[t * d_ + j] = w[j] + pos[j] + (distil_ ? 0.0f : token_type0_[j]);
  }
  embeddings_norm_.apply(h.data(), n);
  std::vector<float> y(n * d_);
  for (std::size_t l = 0; l < blocks_.size(); ++l) {
    const Block& blk = blocks_[l];
    if (hidden) hidden->push_back(h);
    // h = LayerNorm(h + out(self-attention(h)));  maps (H, n, n)
    blk.attention.forward(h.data(), n, y.data(), trace, "self-attention", static_cast<int>(l), vectors);
    hf::add_in_place(h.data(), y.data(), h.size());
    blk.attention_norm.apply(h.data(), n);
    // h = LayerNorm(h + down(act(up(h))))
    blk.ffn.forward(h.data(), n, y.data());
    hf::add_in_place(h.data(), y.data(), h.size());
    blk.output_norm.apply(h.data(), n);
  }
  if (hidden) hidden->push_back(h);
  HfEncoderOutput out;
  if (pool_.out() != 0) {
    // pooled (d) = tanh(pooler.dense(h[0])) (BERT) or ReLU(pre_classifier(h[0])) (DistilBERT)
    out.pooled.resize(d_);
    pool_.forward(1, h.data(), d_, out.pooled.data(), d_,
                  distil_ ? kernels::Activation::relu : kernels::Activation::none);
    if (!distil_)
      for (float& v : out.pooled) v = std::tanh(v);
  }
  if (labels_ != 0) {
    // logits (labels) = classifier(pooled)
    out.logits.resize(labels_);
    classifier_.forward(1, out.pooled.data(), d_, out.logits.data(), labels_);
  }
  out.last_hidden_state = std::move(h);
  return out;
}

}  // namespace attnlens::models
