// SST-2 sentence classifiers; the maths, shapes and papers are in sentiment.h. Each step quotes the line of
// models/training/sentiment/common.py (the PyTorch model) it implements.
#include "models/sentiment.h"

#include <algorithm>
#include <string>
#include <utility>

#include "attention/self_attention.h"
#include "common.h"
#include "kernels/kernels.h"

namespace attnlens::models {

namespace {

// A model dimension from config.json: a positive integer, bounded so that no product of two dims overflows.
std::size_t config_dim(const io::Bundle& b, const std::string& key) {
  const int v = b.config_int(key);
  require(v > 0 && v <= (1 << 20), "config.json in " + b.name() + ": \"" + key +
                                       "\" must be a positive integer of at most 1048576, got " + std::to_string(v));
  return static_cast<std::size_t>(v);
}

std::size_t config_labels(const io::Bundle& b) {
  const auto& cfg = b.config();
  if (!cfg.contains("labels")) return 2;
  const auto& labels = cfg["labels"];
  require(labels.is_array() && labels.size() >= 2 && labels.size() <= 1000,
          "config.json in " + b.name() + ": \"labels\" must be an array of at least 2 label names");
  return labels.size();
}

}  // namespace

std::unique_ptr<SentimentModel> SentimentModel::from_bundle(const io::Bundle& bundle,
                                                           std::size_t projection_cache_bytes) {
  const std::string& arch = bundle.architecture();
  std::unique_ptr<SentimentModel> model;
  if (arch == "selfattn-classifier") {
    model = std::make_unique<SelfAttnClassifier>(bundle, projection_cache_bytes);
  } else if (arch == "relation-classifier") {
    model = std::make_unique<RelationClassifier>(bundle);
  } else {
    throw Error("model bundle " + bundle.name() + ": architecture '" + arch +
                "' is not a sentiment classifier (expected selfattn-classifier or relation-classifier)");
  }
  bundle.check_all_tensors_used();
  return model;
}

void SentimentModel::load_common(const io::Bundle& b, std::size_t head_in) {
  vocab_size_ = config_dim(b, "vocab_size");
  emb_dim_ = config_dim(b, "emb_dim");
  mlp_hidden_ = config_dim(b, "mlp_hidden");
  num_labels_ = config_labels(b);
  embedding_ = b.tensor("embedding.weight", {vocab_size_, emb_dim_});
  fc_ = nn::Linear(b, "fc.weight", mlp_hidden_, head_in, "fc.bias", nn::Linear::Rows::few);
  out_ = nn::Linear(b, "out.weight", num_labels_, mlp_hidden_, "out.bias", nn::Linear::Rows::few);
}

void SentimentModel::check_ids(const std::vector<int>& ids) const {
  require(!ids.empty(), "sentiment: empty input (no tokens to classify)");
  for (std::size_t t = 0; t < ids.size(); ++t) {
    const int id = ids[t];
    require(id >= 0 && static_cast<std::size_t>(id) < vocab_size_,
            "sentiment: token id " + std::to_string(id) + " at position " + std::to_string(t) +
                " is outside the vocabulary (0.." + std::to_string(vocab_size_ - 1) + ")");
  }
}

std::vector<float> SentimentModel::embed(const std::vector<int>& ids) const {
  check_ids(ids);
  std::vector<float> x(ids.size() * emb_dim_);
  for (std::size_t t = 0; t < ids.size(); ++t)
    std::copy_n(embedding_.data() + static_cast<std::size_t>(ids[t]) * emb_dim_, emb_dim_, x.data() + t * emb_dim_);
  return x;
}

void SentimentModel::classify_head(const float* v, SentimentForward& out) const {
  // z = torch.relu(self.fc(m)); logits = self.out(z)   (dropout is training-only)
  // One row: the packed product (a GEMM would repack the 360k-float fc weight for every sentence).
  std::vector<float> z(mlp_hidden_);
  fc_.forward(1, v, fc_.in(), z.data(), mlp_hidden_, kernels::Activation::relu);
  out.logits.assign(num_labels_, 0.0f);
  out_.forward(1, z.data(), mlp_hidden_, out.logits.data(), num_labels_);
  out.probabilities = out.logits;
  kernels::softmax(out.probabilities.data(), out.probabilities.size());
}

// ---------------------------------------------------------------------------------------------- selfattn

SelfAttnClassifier::SelfAttnClassifier(const io::Bundle& b, std::size_t projection_cache_bytes) {
  lstm_hidden_ = config_dim(b, "lstm_hidden");
  att_hidden_ = config_dim(b, "att_hidden");
  hops_ = config_dim(b, "hops");
  const auto& cfg = b.config();
  const std::string where = "config.json in " + b.name();
  if (cfg.contains("lstm_layers"))
    require(cfg["lstm_layers"] == 1, where + ": only \"lstm_layers\": 1 is supported, got " + cfg["lstm_layers"].dump());
  if (cfg.contains("bidirectional"))
    require(cfg["bidirectional"] == true, where + ": only a bidirectional LSTM (\"bidirectional\": true) is supported");
  const std::size_t u = lstm_hidden_, d_h = 2 * u;
  load_common(b, hops_ * d_h);
  std::vector<nn::Lstm::Direction> dirs(2);
  for (std::size_t d = 0; d < 2; ++d) {
    const std::string suffix = d == 0 ? "" : "_reverse";
    dirs[d].weight_ih = b.tensor("lstm.weight_ih_l0" + suffix, {4 * u, emb_dim_});
    dirs[d].weight_hh = b.tensor("lstm.weight_hh_l0" + suffix, {4 * u, u});
    dirs[d].bias_ih = b.tensor("lstm.bias_ih_l0" + suffix, {4 * u});
    dirs[d].bias_hh = b.tensor("lstm.bias_hh_l0" + suffix, {4 * u});
  }
  lstm_ = nn::Lstm(emb_dim_, u, std::move(dirs), b.weight_precision());
  std::vector<nn::EmbeddingProjection::Block> blocks;
  for (std::size_t d = 0; d < 2; ++d) blocks.push_back({4 * u, lstm_.cell(d).weight_ih, lstm_.cell(d).bias});
  projection_ = std::make_unique<nn::EmbeddingProjection>(embedding_.data(), vocab_size_, emb_dim_,
                                                          std::move(blocks), projection_cache_bytes);
  ws1_ = b.tensor("ws1.weight", {att_hidden_, d_h});
  ws2_ = b.tensor("ws2.weight", {hops_, att_hidden_});
}

SentimentForward SelfAttnClassifier::forward(const std::vector<int>& ids) const {
  const std::size_t t = ids.size(), d_h = 2 * lstm_hidden_;
  check_ids(ids);
  // x = self.embedding(ids); the LSTM's input projections W_ih x + b of both directions, per word
  // (kept across sentences: nn/embedding_projection.h)                           (T, 2·4u)
  std::vector<const float*> proj;
  std::vector<float> scratch;
  projection_->rows(ids.data(), t, proj, scratch);
  SentimentForward out;
  out.hidden.resize(t * d_h);  // h, _ = self.lstm(packed)                        (T, 2u)
  lstm_.forward_projected(proj.data(), t, out.hidden.data());
  // scores = self.ws2(torch.tanh(self.ws1(h))).transpose(1, 2); att = softmax(scores, dim=2); m = bmm(att, h)
  attention::StructuredSelfAttentionWeights w;
  w.d_h = d_h;
  w.d_a = att_hidden_;
  w.r = hops_;
  w.w_s1 = ws1_.data();
  w.w_s2 = ws2_.data();
  out.attention.name = attention_name();
  out.attention.dims = {hops_, t};
  out.attention.data.resize(hops_ * t);
  out.sentence_embedding.resize(hops_ * d_h);  // M (r, 2u) row-major = flatten, hop 0 first
  attention::structured_self_attention(w, out.hidden.data(), t, out.attention.data.data(),
                                       out.sentence_embedding.data());
  classify_head(out.sentence_embedding.data(), out);
  return out;
}

// ---------------------------------------------------------------------------------------------- relation

RelationClassifier::RelationClassifier(const io::Bundle& b) {
  rel_hidden_ = config_dim(b, "rel_hidden");
  att_hidden_ = config_dim(b, "att_hidden");
  load_common(b, rel_hidden_);
  const std::size_t e2 = 2 * emb_dim_;
  g1_w_ = b.tensor("g_fc1.weight", {rel_hidden_, e2});  // kept whole: [h × 2E], halves read with ldb = 2E
  g1_b_ = b.tensor("g_fc1.bias", {rel_hidden_});
  g2_ = nn::Linear(b, "g_fc2.weight", rel_hidden_, rel_hidden_, "g_fc2.bias");
  a1_w_ = b.tensor("att_fc1.weight", {att_hidden_, e2});
  a1_b_ = b.tensor("att_fc1.bias", {att_hidden_});
  a2_w_ = b.tensor("att_fc2.weight", {1, att_hidden_});
  a2_b_ = b.tensor("att_fc2.bias", {1})[0];
}

SentimentForward RelationClassifier::forward(const std::vector<int>& ids) const {
  const std::size_t t = ids.size();
  const std::vector<float> x = embed(ids);  // (T, E)
  // The catalogue's relation self-attention with its MLP pair score (attention/self_attention.h):
  //   s = self.att_fc2(torch.tanh(self.att_fc1(pairs)))[..., 0]; att = torch.softmax(torch.sigmoid(s), dim=2)
  //   g = relu(g_fc2(relu(g_fc1(pairs)))); r = (att[..., None] * g).sum(dim=2); sent = r.sum(1) / T
  attention::RelationAttentionWeights w;
  w.d = emb_dim_;
  w.d_f = rel_hidden_;
  w.w_f1 = g1_w_.data();
  w.b_f1 = g1_b_.data();
  w.d_a = att_hidden_;
  w.w_a1 = a1_w_.data();
  w.b_a1 = a1_b_.data();
  w.w_a2 = a2_w_.data();
  w.b_a2 = a2_b_;
  // g_fc2 through the model's own layer (int8 codes with int8 weights).
  w.feature_layer = [this](std::size_t n, const float* f1, float* f2) {
    g2_.forward(n, f1, rel_hidden_, f2, rel_hidden_, kernels::Activation::relu);
  };
  SentimentForward out;
  out.attention.name = attention_name();
  out.attention.dims = {t, t};
  out.attention.data.resize(t * t);
  out.sentence_embedding.resize(rel_hidden_);
  attention::relation_self_attention(w, x.data(), t, out.attention.data.data(), nullptr,
                                     out.sentence_embedding.data());
  classify_head(out.sentence_embedding.data(), out);
  return out;
}

}  // namespace attnlens::models
