#include "models/show_attend_tell.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common.h"
#include "kernels/kernels.h"

namespace attnlens::models {

namespace {

std::size_t decoder_size(const io::Bundle& b, const char* key) {
  return static_cast<std::size_t>(b.config_object().object("decoder").integer(key, 1, 1 << 20));
}

}  // namespace

ShowAttendTell ShowAttendTell::from_bundle(const io::Bundle& b, const std::string& prefix) {
  ShowAttendTell m;
  SatConfig& c = m.cfg_;
  c.vocab_size = decoder_size(b, "vocab_size");
  c.proj_dim = decoder_size(b, "proj_dim");
  c.embed_dim = decoder_size(b, "embed_dim");
  c.hidden_dim = decoder_size(b, "hidden_dim");
  c.att_dim = decoder_size(b, "att_dim");
  c.max_len = decoder_size(b, "max_len");
  const io::ConfigObject cfg = b.config_object();
  const std::string where = "config.json in " + b.name();
  c.feat_dim = static_cast<std::size_t>(cfg.object("encoder").integer("feat_dim", 1, 1 << 20));
  if (cfg.has("tokenizer")) {
    const io::ConfigObject t = cfg.object("tokenizer");
    c.start_id = static_cast<int>(t.integer_or("start_id", c.start_id, 0, 1 << 30));
    c.end_id = static_cast<int>(t.integer_or("end_id", c.end_id, 0, 1 << 30));
  }
  require(c.start_id >= 0 && static_cast<std::size_t>(c.start_id) < c.vocab_size && c.end_id >= 0 &&
              static_cast<std::size_t>(c.end_id) < c.vocab_size,
          where + ": tokenizer start_id/end_id must be ids inside the vocabulary");
  const std::size_t P = c.proj_dim, H = c.hidden_dim, A = c.att_dim, V = c.vocab_size, M = c.embed_dim;
  auto t = [&](const std::string& name, std::vector<std::size_t> shape) { return b.tensor(prefix + name, shape); };
  m.proj_w_ = t("feat_proj.weight", {P, c.feat_dim});
  m.proj_b_ = t("feat_proj.bias", {P});
  m.init_h_w_ = t("init_h.weight", {H, P});
  m.init_h_b_ = t("init_h.bias", {H});
  m.init_c_w_ = t("init_c.weight", {H, P});
  m.init_c_b_ = t("init_c.bias", {H});
  m.att_feat_w_ = t("att_feat.weight", {A, P});
  m.att_feat_b_ = t("att_feat.bias", {A});
  m.att_hidden_w_ = t("att_hidden.weight", {A, H});
  m.att_hidden_b_ = t("att_hidden.bias", {A});
  m.att_score_w_ = t("att_score.weight", {1, A});
  m.att_score_b_ = t("att_score.bias", {1})[0];
  m.gate_w_ = t("gate.weight", {1, H});
  m.gate_b_ = t("gate.bias", {1})[0];
  m.embed_ = t("embed.weight", {V, M});
  m.lstm_w_ih_ = t("lstm.weight_ih", {4 * H, M + P});
  m.lstm_w_hh_ = t("lstm.weight_hh", {4 * H, H});
  m.lstm_bias_ = t("lstm.bias_ih", {4 * H});
  const std::vector<float> bias_hh = t("lstm.bias_hh", {4 * H});
  kernels::add(bias_hh.data(), m.lstm_bias_.data(), 4 * H);
  m.fc_w_ = t("fc.weight", {V, H});
  m.fc_b_ = t("fc.bias", {V});
  return m;
}

ShowAttendTell::Encoded ShowAttendTell::encode(const float* grid, std::size_t cells) const {
  require(cells >= 1, "show-attend-tell: the feature grid is empty");
  require(!fc_b_.empty(), "show-attend-tell: the model is not loaded");
  const std::size_t bad = first_non_finite(grid, cells * cfg_.feat_dim);
  require(bad == cells * cfg_.feat_dim, "show-attend-tell: the feature grid holds a non-finite value (NaN or Inf) at "
                                        "cell " + std::to_string(bad / cfg_.feat_dim) + ", channel " +
                                            std::to_string(bad % cfg_.feat_dim));
  const std::size_t P = cfg_.proj_dim, H = cfg_.hidden_dim, A = cfg_.att_dim;
  Encoded e;
  e.cells = cells;
  e.p.resize(cells * P);
  // p = a W_pᵀ + b_p
  kernels::gemm_nt_bias_act(cells, P, cfg_.feat_dim, grid, cfg_.feat_dim, proj_w_.data(), cfg_.feat_dim, e.p.data(),
                            P, proj_b_.data(), kernels::Activation::none);
  std::vector<float> mean(P, 0.0f);
  for (std::size_t i = 0; i < cells; ++i) kernels::add(e.p.data() + i * P, mean.data(), P);
  kernels::scale(1.0f / static_cast<float>(cells), mean.data(), P);
  e.h0 = init_h_b_;
  kernels::gemv_nt(H, P, mean.data(), init_h_w_.data(), P, e.h0.data(), true);
  kernels::vtanh(e.h0.data(), H);
  e.c0 = init_c_b_;
  kernels::gemv_nt(H, P, mean.data(), init_c_w_.data(), P, e.c0.data(), true);
  kernels::vtanh(e.c0.data(), H);
  e.keys.resize(cells * A);
  kernels::gemm_nt_bias_act(cells, A, P, e.p.data(), P, att_feat_w_.data(), P, e.keys.data(), A, att_feat_b_.data(),
                            kernels::Activation::none);
  return e;
}

void ShowAttendTell::step(const Encoded& enc, int prev_word, float* h, float* c, float* logits, float* alpha,
                          float* beta) const {
  const std::size_t P = cfg_.proj_dim, H = cfg_.hidden_dim, A = cfg_.att_dim, M = cfg_.embed_dim;
  const std::size_t L = enc.cells;
  require(prev_word >= 0 && static_cast<std::size_t>(prev_word) < cfg_.vocab_size,
          "show-attend-tell: word id " + std::to_string(prev_word) + " is outside the vocabulary");
  // e_i = wᵀ tanh(keys_i + W_q h + b_q) + b_w
  std::vector<float> q(att_hidden_b_);
  kernels::gemv_nt(A, H, h, att_hidden_w_.data(), H, q.data(), true);
  std::vector<float> tmp(A);
  for (std::size_t i = 0; i < L; ++i) {
    const float* k = enc.keys.data() + i * A;
    for (std::size_t j = 0; j < A; ++j) tmp[j] = k[j] + q[j];
    kernels::vtanh(tmp.data(), A);
    alpha[i] = kernels::dot(att_score_w_.data(), tmp.data(), A) + att_score_b_;
  }
  kernels::softmax(alpha, L);
  // x = [E[y] ; β·z],  z = Σ α_i p_i,  β = σ(w_bᵀ h + b_b)  (β from h_{t−1}, before the LSTM updates it)
  std::vector<float> x(M + P);
  std::copy_n(embed_.data() + static_cast<std::size_t>(prev_word) * M, M, x.data());
  float* z = x.data() + M;
  kernels::gemv(P, L, alpha, enc.p.data(), P, z);
  float b = kernels::dot(gate_w_.data(), h, H) + gate_b_;
  kernels::vsigmoid(&b, 1);
  *beta = b;
  kernels::scale(b, z, P);
  nn::LstmCellWeights w;
  w.input_size = M + P;
  w.hidden_size = H;
  w.weight_ih = lstm_w_ih_.data();
  w.weight_hh = lstm_w_hh_.data();
  w.bias = lstm_bias_.data();
  std::vector<float> gates(4 * H);
  nn::lstm_cell_step(w, x.data(), h, c, gates.data());
  // logits = W_o h + b_o
  std::copy(fc_b_.begin(), fc_b_.end(), logits);
  kernels::gemv_nt(cfg_.vocab_size, H, h, fc_w_.data(), H, logits, true);
  // A NaN would make argmax pick word 0 (<pad>) and the beam keep NaN scores: fail instead of captioning garbage.
  require(first_non_finite(logits, cfg_.vocab_size) == cfg_.vocab_size,
          "show-attend-tell: the decoder produced a non-finite logit (NaN or Inf); are the weights or the input "
          "features corrupt?");
}

SatDecodeResult ShowAttendTell::greedy(const Encoded& enc, std::size_t max_len) const {
  if (max_len == 0) max_len = cfg_.max_len;
  const std::size_t V = cfg_.vocab_size, L = enc.cells;
  SatDecodeResult r;
  std::vector<float> h = enc.h0, c = enc.c0, logits(V), alpha(L), logp(V);
  int prev = cfg_.start_id;
  for (std::size_t t = 0; t < max_len; ++t) {
    float beta = 0;
    step(enc, prev, h.data(), c.data(), logits.data(), alpha.data(), &beta);
    // argmax, first maximum wins (torch.argmax)
    const int next = static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    r.alphas.insert(r.alphas.end(), alpha.begin(), alpha.end());
    r.logits.insert(r.logits.end(), logits.begin(), logits.end());
    r.betas.push_back(beta);
    ++r.steps;
    logp = logits;
    kernels::log_softmax(logp.data(), V);
    r.score += logp[static_cast<std::size_t>(next)];
    if (next == cfg_.end_id) {
      r.finished = true;
      break;
    }
    r.tokens.push_back(next);
    prev = next;
  }
  return r;
}

SatDecodeResult ShowAttendTell::beam(const Encoded& enc, std::size_t beam, std::size_t max_len,
                                     double length_norm) const {
  require(beam >= 1, "show-attend-tell: num_beams must be at least 1");
  if (max_len == 0) max_len = cfg_.max_len;
  const std::size_t V = cfg_.vocab_size, L = enc.cells, H = cfg_.hidden_dim;
  struct Hyp {
    std::vector<int> tokens;     // includes a final <end> when finished
    std::vector<float> alphas;   // [steps × L]
    std::vector<float> betas;
    float score = 0;
    std::vector<float> h, c;
  };
  std::vector<Hyp> hyps(1);
  hyps[0].h = enc.h0;
  hyps[0].c = enc.c0;
  std::vector<Hyp> finished;
  std::vector<float> cand, alpha_all, beta_all, h_all, c_all, logits(V);
  std::vector<std::size_t> order;
  for (std::size_t t = 0; t < max_len; ++t) {
    const std::size_t k = hyps.size();
    cand.resize(k * V);
    alpha_all.resize(k * L);
    beta_all.resize(k);
    h_all.resize(k * H);
    c_all.resize(k * H);
    for (std::size_t i = 0; i < k; ++i) {
      std::copy(hyps[i].h.begin(), hyps[i].h.end(), h_all.begin() + static_cast<std::ptrdiff_t>(i * H));
      std::copy(hyps[i].c.begin(), hyps[i].c.end(), c_all.begin() + static_cast<std::ptrdiff_t>(i * H));
      const int prev = hyps[i].tokens.empty() ? cfg_.start_id : hyps[i].tokens.back();
      float* lp = cand.data() + i * V;
      step(enc, prev, h_all.data() + i * H, c_all.data() + i * H, lp, alpha_all.data() + i * L, &beta_all[i]);
      kernels::log_softmax(lp, V);
      for (std::size_t w = 0; w < V; ++w) lp[w] = lp[w] + hyps[i].score;  // float32, as torch adds them
    }
    // the `beam` best of the k·V candidates: descending score, ties → lower flat index
    const std::size_t n_keep = std::min(beam, k * V);
    order.resize(k * V);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n_keep), order.end(),
                      [&](std::size_t a, std::size_t b) { return cand[a] > cand[b] || (cand[a] == cand[b] && a < b); });
    std::vector<Hyp> next;
    for (std::size_t j = 0; j < n_keep; ++j) {
      const std::size_t src = order[j] / V;
      const int w = static_cast<int>(order[j] % V);
      Hyp nh;
      nh.tokens = hyps[src].tokens;
      nh.tokens.push_back(w);
      nh.alphas = hyps[src].alphas;
      nh.alphas.insert(nh.alphas.end(), alpha_all.begin() + static_cast<std::ptrdiff_t>(src * L),
                       alpha_all.begin() + static_cast<std::ptrdiff_t>((src + 1) * L));
      nh.betas = hyps[src].betas;
      nh.betas.push_back(beta_all[src]);
      nh.score = cand[order[j]];
      nh.h.assign(h_all.begin() + static_cast<std::ptrdiff_t>(src * H),
                  h_all.begin() + static_cast<std::ptrdiff_t>((src + 1) * H));
      nh.c.assign(c_all.begin() + static_cast<std::ptrdiff_t>(src * H),
                  c_all.begin() + static_cast<std::ptrdiff_t>((src + 1) * H));
      if (w == cfg_.end_id) {
        finished.push_back(std::move(nh));
      } else {
        next.push_back(std::move(nh));
      }
    }
    if (finished.size() >= beam || next.empty()) break;
    hyps = std::move(next);
  }
  const std::vector<Hyp>& pool = finished.empty() ? hyps : finished;
  auto norm = [&](const Hyp& x) {
    return length_norm != 0 ? static_cast<double>(x.score) / std::pow(static_cast<double>(x.tokens.size()), length_norm)
                            : static_cast<double>(x.score);
  };
  std::size_t best = 0;
  for (std::size_t i = 1; i < pool.size(); ++i)
    if (norm(pool[i]) > norm(pool[best])) best = i;  // max(): the first of equal scores wins
  const Hyp& b = pool[best];
  SatDecodeResult r;
  r.tokens = b.tokens;
  if (!r.tokens.empty() && r.tokens.back() == cfg_.end_id) {
    r.tokens.pop_back();
    r.finished = true;
  }
  r.alphas = b.alphas;
  r.betas = b.betas;
  r.steps = b.betas.size();
  r.score = b.score;
  return r;
}

}  // namespace attnlens::models
