// SST-2 sentence classifiers; the maths, shapes and papers are in sentiment.h. Each step quotes the line of
// models/training/sentiment/common.py (the PyTorch model) it implements.
#include "models/sentiment.h"

#include <algorithm>
#include <string>
#include <utility>

#include "attention/scores.h"
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
  const std::size_t t = ids.size(), e = emb_dim_, e2 = 2 * e, h = rel_hidden_, da = att_hidden_;
  const std::vector<float> x = embed(ids);  // (T, E)
  using kernels::Activation;
  // W p_ij = W[:, :E] x_i + W[:, E:] x_j: the first layers run per word and are broadcast over the pairs.
  //   gi = x @ w1[:, :E].t() + b1 ; gj = x @ w1[:, E:].t()     (T, h)
  //   ai = x @ a1[:, :E].t() + ab1; aj = x @ a1[:, E:].t()     (T, d_a)
  std::vector<float> gi(t * h), gj(t * h), ai(t * da), aj(t * da);
  kernels::gemm_nt_bias_act(t, h, e, x.data(), e, g1_w_.data(), e2, gi.data(), h, g1_b_.data(), Activation::none);
  kernels::gemm_nt_bias_act(t, h, e, x.data(), e, g1_w_.data() + e, e2, gj.data(), h, nullptr, Activation::none);
  kernels::gemm_nt_bias_act(t, da, e, x.data(), e, a1_w_.data(), e2, ai.data(), da, a1_b_.data(),
                            Activation::none);
  kernels::gemm_nt_bias_act(t, da, e, x.data(), e, a1_w_.data() + e, e2, aj.data(), da, nullptr,
                            Activation::none);

  SentimentForward out;
  out.attention.name = attention_name();
  out.attention.dims = {t, t};
  out.attention.data.resize(t * t);
  float* alpha = out.attention.data.data();
  // s = self.att_fc2(torch.tanh(ai[:, :, None, :] + aj[:, None, :, :]))[..., 0]     (T, T)
  // (the catalogue's additive score with both sides projected: queries ai, keys aj)
  std::vector<float> hidden_a(t * da);
  attention::score_additive_hidden(a2_w_.data(), da, ai.data(), t, aj.data(), t, alpha, hidden_a.data());
  for (std::size_t k = 0; k < t * t; ++k) alpha[k] += a2_b_;
  // att = torch.softmax(torch.sigmoid(s), dim=2)
  kernels::vsigmoid(alpha, t * t);
  kernels::softmax_rows(alpha, t, t, t);

  // g = relu(g_fc2(relu(gi[:, :, None] + gj[:, None]))); r = (att[..., None] * g).sum(dim=2); sent = r.sum(1) / T
  // One word i at a time: its T pair features [T × h] are never stored for all i together.
  std::vector<float> f1(t * h), f2(t * h), r(h), sum(h, 0.0f);
  for (std::size_t i = 0; i < t; ++i) {
    for (std::size_t j = 0; j < t; ++j) {
      float* row = f1.data() + j * h;
      const float* left = gi.data() + i * h;
      const float* right = gj.data() + j * h;
      for (std::size_t k = 0; k < h; ++k) row[k] = left[k] + right[k];
    }
    kernels::vrelu(f1.data(), f1.size());
    g2_.forward(t, f1.data(), h, f2.data(), h, Activation::relu);  // (T, h); int8 codes with int8 weights
    kernels::gemv(h, t, alpha + i * t, f2.data(), h, r.data());  // r_i = Σ_j α_ij g_ij
    kernels::add(r.data(), sum.data(), h);
  }
  out.sentence_embedding = std::move(sum);
  kernels::scale(1.0f / static_cast<float>(t), out.sentence_embedding.data(), h);
  classify_head(out.sentence_embedding.data(), out);
  return out;
}

}  // namespace attnlens::models
