// Forward passes of the two VQA models; equations and tensor names in vqa.h and models/training/vqa/model.py.
#include "models/vqa.h"

#include <algorithm>
#include <cmath>

#include "attention/attention_over_attention.h"
#include "attention/co_attention.h"
#include "common.h"
#include "kernels/kernels.h"

namespace attnlens::models {

namespace {

std::size_t config_size(const io::ConfigObject& c, const std::string& key, std::int64_t hi = 1 << 20) {
  return static_cast<std::size_t>(c.integer(key, 1, hi));
}

// Row-major [rows × cols] → [cols × rows].
std::vector<float> transposed(const std::vector<float>& a, std::size_t rows, std::size_t cols) {
  std::vector<float> t(a.size());
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) t[j * rows + i] = a[i * cols + j];
  return t;
}

// x̂ [d] = Σ_i a_i X_i for X [n × d].
std::vector<float> weighted_sum(const std::vector<float>& a, const std::vector<float>& x, std::size_t d) {
  std::vector<float> out(d, 0.0f);
  for (std::size_t i = 0; i < a.size(); ++i) kernels::axpy(a[i], x.data() + i * d, out.data(), d);
  return out;
}

}  // namespace

VqaModel VqaModel::from_bundle(const io::Bundle& b) {
  require(b.architecture() == "vqa", "model bundle " + b.name() + " is a '" + b.architecture() +
                                         "' bundle, not a visual question answering model (architecture \"vqa\")");
  const io::ConfigObject c = b.config_object().object("vqa");
  VqaModel m;
  VqaConfig& cfg = m.cfg_;
  cfg.attention = c.string("attention");
  require(cfg.attention == "parallel-co-attention" || cfg.attention == "attention-over-attention",
          "config.json in " + b.name() + ": vqa.attention must be \"parallel-co-attention\" or "
          "\"attention-over-attention\", got \"" + cfg.attention + "\"");
  cfg.grid_dim = config_size(c, "grid_dim");
  cfg.d = config_size(c, "d", 4096);
  cfg.k = config_size(c, "k", 4096);
  cfg.hidden = config_size(c, "hidden", 4096);
  cfg.vocab_size = config_size(c, "vocab_size");
  cfg.num_answers = config_size(c, "num_answers");
  if (c.has("relation_units")) cfg.relation_units = config_size(c, "relation_units", 4096);
  const std::size_t d = cfg.d, k = cfg.k, h = cfg.hidden;
  m.region_ = nn::Linear(b, "region.weight", d, cfg.grid_dim, "region.bias");
  m.embedding_ = b.tensor("embedding.weight", {cfg.vocab_size, d});
  std::vector<nn::Lstm::Direction> dirs(1);
  dirs[0].weight_ih = b.tensor("lstm.weight_ih_l0", {4 * d, d});
  dirs[0].weight_hh = b.tensor("lstm.weight_hh_l0", {4 * d, d});
  dirs[0].bias_ih = b.tensor("lstm.bias_ih_l0", {4 * d});
  dirs[0].bias_hh = b.tensor("lstm.bias_hh_l0", {4 * d});
  m.lstm_ = nn::Lstm(d, d, std::move(dirs), b.weight_precision());
  if (cfg.co_attention()) {
    const char* names[2] = {"co_w.", "co_s."};
    for (int l = 0; l < 2; ++l) {
      const std::string p = names[l];
      m.co_[l].w_b = b.tensor(p + "w_b", {d, d});
      m.co_[l].w_v = b.tensor(p + "w_v", {k, d});
      m.co_[l].w_q = b.tensor(p + "w_q", {k, d});
      m.co_[l].w_hv = b.tensor(p + "w_hv", {k});
      m.co_[l].w_hq = b.tensor(p + "w_hq", {k});
    }
  }
  m.fc_w_ = nn::Linear(b, "fc_w.weight", h, d, "fc_w.bias");
  m.fc_s_ = nn::Linear(b, "fc_s.weight", h, d + h + 1, "fc_s.bias");
  const std::size_t r = cfg.relation_units;
  if (r > 0) {
    m.relation_ = nn::Linear(b, "relation.weight", r, 2 + d, "relation.bias");
  }
  m.out_ = nn::Linear(b, "out.weight", cfg.num_answers, h + r, "out.bias");
  b.check_all_tensors_used();
  return m;
}

void VqaModel::trunk(const float* grid, std::size_t cells, const std::vector<int>& ids, std::vector<float>& v,
                     std::vector<float>& q_w, std::vector<float>& q_s) const {
  const std::size_t d = cfg_.d, t = ids.size();
  require(t >= 1, "vqa: the question has no words");
  // v = torch.tanh(self.region(grid))                                   [N, d]
  v.assign(cells * d, 0.0f);
  region_.forward(cells, grid, cfg_.grid_dim, v.data(), d);
  kernels::vtanh(v.data(), v.size());
  // q_w = self.embedding(ids)                                          [T, d]
  q_w.assign(t * d, 0.0f);
  for (std::size_t i = 0; i < t; ++i) {
    const int id = ids[i];
    require(id >= 0 && static_cast<std::size_t>(id) < cfg_.vocab_size,
            "vqa: word id " + std::to_string(id) + " at position " + std::to_string(i) + " is outside the vocabulary");
    std::copy_n(embedding_.data() + static_cast<std::size_t>(id) * d, d, q_w.data() + i * d);
  }
  // q_s, _ = self.lstm(q_w)                                            [T, d]
  q_s.assign(t * d, 0.0f);
  lstm_.forward(q_w.data(), t, q_s.data());
}

VqaForward VqaModel::classify(const std::vector<float>& sum_w, const std::vector<float>& sum_s, float count,
                              const std::vector<float>& a_w, const std::vector<float>& a_s, std::size_t side,
                              const std::vector<float>& q_w) const {
  const std::size_t d = cfg_.d, h = cfg_.hidden, r = cfg_.relation_units;
  // h_w = torch.tanh(self.fc_w(q_w_hat + v_w))
  std::vector<float> h_w(h);
  fc_w_.forward(1, sum_w.data(), d, h_w.data(), h);
  kernels::vtanh(h_w.data(), h);
  // h_s = torch.tanh(self.fc_s(torch.cat([q_s_hat + v_s, h_w, count], 1)))
  std::vector<float> in(d + h + 1);
  std::copy(sum_s.begin(), sum_s.end(), in.begin());
  std::copy(h_w.begin(), h_w.end(), in.begin() + static_cast<std::ptrdiff_t>(d));
  in[d + h] = count;
  std::vector<float> h_s(h + r);
  fc_s_.forward(1, in.data(), d + h + 1, h_s.data(), h);
  kernels::vtanh(h_s.data(), h);
  VqaForward out;
  out.count = count;
  if (r > 0) {
    // where = s/region @ centres − w/region @ centres                                       [2]
    float cs[2] = {0.0f, 0.0f}, cw[2] = {0.0f, 0.0f};  // the two centroids
    for (std::size_t i = 0; i < side * side; ++i) {
      const float x = static_cast<float>(i % side) + 0.5f, y = static_cast<float>(i / side) + 0.5f;
      cs[0] += a_s[i] * x;
      cs[1] += a_s[i] * y;
      cw[0] += a_w[i] * x;
      cw[1] += a_w[i] * y;
    }
    out.where = {cs[0] - cw[0], cs[1] - cw[1]};
    // r = torch.tanh(self.relation(torch.cat([where, q_w.mean(1)], 1)));  h_s = cat([h_s, r])
    std::vector<float> rel_in(2 + d, 0.0f);
    rel_in[0] = out.where[0];
    rel_in[1] = out.where[1];
    const std::size_t t = q_w.size() / d;
    for (std::size_t i = 0; i < t; ++i) kernels::add(q_w.data() + i * d, rel_in.data() + 2, d);
    kernels::scale(1.0f / static_cast<float>(t), rel_in.data() + 2, d);
    relation_.forward(1, rel_in.data(), 2 + d, h_s.data() + h, r);
    kernels::vtanh(h_s.data() + h, r);
  }
  // logits = self.out(h_s)
  out.logits.assign(cfg_.num_answers, 0.0f);
  out_.forward(1, h_s.data(), h + r, out.logits.data(), cfg_.num_answers);
  return out;
}

VqaForward VqaModel::forward(const float* grid, std::size_t side, const std::vector<int>& ids,
                             AttentionTrace& trace) const {
  require(grid != nullptr && side >= 1, "vqa: empty grid");
  return cfg_.co_attention() ? forward_co_attention(grid, side, ids, trace)
                             : forward_attention_over_attention(grid, side, ids, trace);
}

VqaForward VqaModel::forward_co_attention(const float* grid, std::size_t side, const std::vector<int>& ids,
                                          AttentionTrace& trace) const {
  const std::size_t n = side * side, t = ids.size(), d = cfg_.d;
  std::vector<float> v, q_w, q_s;
  trunk(grid, n, ids, v, q_w, q_s);
  std::vector<float> sums[2], regions[2], affinity_s, a_q_s;
  for (int level = 0; level < 2; ++level) {
    const std::vector<float>& q = level == 0 ? q_w : q_s;
    // C = tanh(Q W_b Vᵀ) [T, N]; a^v [N], a^q [T]; v̂ = a^v V, q̂ = a^q Q   (Lu 2016 eq. 3-4)
    attention::ParallelCoAttentionWeights w;
    w.d = d;
    w.k = cfg_.k;
    w.w_b = co_[level].w_b.data();
    w.w_v = co_[level].w_v.data();
    w.w_q = co_[level].w_q.data();
    w.w_hv = co_[level].w_hv.data();
    w.w_hq = co_[level].w_hq.data();
    std::vector<float> affinity(t * n), a_v(n), a_q(t), v_hat(d), q_hat(d);
    attention::parallel_co_attention(w, v.data(), n, q.data(), t, affinity.data(), a_v.data(), a_q.data(),
                                     v_hat.data(), q_hat.data());
    trace.record("affinity", level, -1, -1, {t, n}, affinity.data());
    trace.record("region_attention", level, -1, -1, {side, side}, a_v.data());
    trace.record("word_attention", level, -1, -1, {t}, a_q.data());
    kernels::add(v_hat.data(), q_hat.data(), d);  // q̂ + v̂
    sums[level] = std::move(q_hat);
    regions[level] = std::move(a_v);
    if (level == 1) {
      affinity_s = std::move(affinity);
      a_q_s = std::move(a_q);
    }
  }
  // dens = (F.relu(C_s) * a_q_s[:, None]).sum(0): m_n = Σ_t a^q_t relu(C_tn)   [N]
  std::vector<float> density(n, 0.0f);
  for (std::size_t i = 0; i < t; ++i)
    for (std::size_t j = 0; j < n; ++j) density[j] += a_q_s[i] * std::max(affinity_s[i * n + j], 0.0f);
  trace.record("count_density", 1, -1, -1, {side, side}, density.data());
  return classify(sums[0], sums[1], kernels::vsum(density.data(), n), regions[0], regions[1], side, q_w);
}

VqaForward VqaModel::forward_attention_over_attention(const float* grid, std::size_t side,
                                                      const std::vector<int>& ids, AttentionTrace& trace) const {
  const std::size_t n = side * side, t = ids.size(), d = cfg_.d;
  std::vector<float> v, q_w, q_s;
  trunk(grid, n, ids, v, q_w, q_s);
  std::vector<float> sums[2], regions[2], matching_s, beta_avg_s;
  for (int level = 0; level < 2; ++level) {
    const std::vector<float>& q = level == 0 ? q_w : q_s;
    // M = V Qᵀ [N, T]; α = softmax over N; β = softmax over T; β̄ = mean_N β; s = α β̄   (Cui 2017 §3)
    std::vector<float> matching(n * t), alpha(n * t), beta(n * t), beta_avg(t), s(n);
    attention::attention_over_attention(v.data(), n, q.data(), t, d, alpha.data(), beta.data(), beta_avg.data(),
                                        s.data(), matching.data());
    trace.record("aoa_matching", level, -1, -1, {t, n}, transposed(matching, n, t).data());
    trace.record("aoa_alpha", level, -1, -1, {t, n}, transposed(alpha, n, t).data());
    trace.record("aoa_beta", level, -1, -1, {t, n}, transposed(beta, n, t).data());
    trace.record("region_attention", level, -1, -1, {side, side}, s.data());
    trace.record("word_attention", level, -1, -1, {t}, beta_avg.data());
    // v̂ = s V, q̂ = β̄ Q; the classifier reads q̂ + v̂
    std::vector<float> sum = weighted_sum(s, v, d);
    const std::vector<float> q_hat = weighted_sum(beta_avg, q, d);
    kernels::add(q_hat.data(), sum.data(), d);
    sums[level] = std::move(sum);
    regions[level] = std::move(s);
    if (level == 1) {
      matching_s = std::move(matching);
      beta_avg_s = std::move(beta_avg);
    }
  }
  // dens = (F.relu(torch.tanh(M_s)) * beta_avg_s[None, :]).sum(1): m_n = Σ_t β̄_t relu(tanh(M_nt))   [N]
  std::vector<float> density(n, 0.0f);
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t i = 0; i < t; ++i) density[j] += beta_avg_s[i] * std::max(std::tanh(matching_s[j * t + i]), 0.0f);
  trace.record("count_density", 1, -1, -1, {side, side}, density.data());
  return classify(sums[0], sums[1], kernels::vsum(density.data(), n), regions[0], regions[1], side, q_w);
}

}  // namespace attnlens::models
