#include "models/show_attend_tell.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "attention/context.h"
#include "attention/scores.h"
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
  c.score_smoothing = static_cast<std::size_t>(cfg.object("decoder").integer_or("score_smoothing", 0, 0, 15));
  require(c.score_smoothing % 2 == 1 || c.score_smoothing == 0,
          where + ": decoder.score_smoothing must be 0 (off) or an odd window side, got " +
              std::to_string(c.score_smoothing));
  const std::string context = cfg.object("decoder").string_or("context", "lstm");
  require(context == "lstm" || context == "output",
          where + ": decoder.context must be \"lstm\" (the context is an LSTM input) or \"output\" (it feeds the "
                  "output layer), got \"" + context + "\"");
  c.context_output = context == "output";
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
  // The step's products read packed weights (nn::Linear::Rows::few; kernels.h).
  m.att_hidden_ =
      nn::Linear(b, prefix + "att_hidden.weight", A, H, prefix + "att_hidden.bias", nn::Linear::Rows::few);
  m.att_score_w_ = t("att_score.weight", {1, A});
  m.att_score_b_ = t("att_score.bias", {1})[0];
  m.gate_w_ = t("gate.weight", {1, H});
  m.gate_b_ = t("gate.bias", {1})[0];
  m.embed_ = t("embed.weight", {V, M});
  {
    const std::size_t X = c.context_output ? M : M + P;  // the LSTM's input: [E[y]] or [E[y] ; β·z]
    const std::vector<float> ih = t("lstm.weight_ih", {4 * H, X}), hh = t("lstm.weight_hh", {4 * H, H});
    m.lstm_p_ih_ = kernels::pack_rows(4 * H, X, ih.data(), X, b.weight_precision());
    m.lstm_p_hh_ = kernels::pack_rows(4 * H, H, hh.data(), H, b.weight_precision());
  }
  m.lstm_bias_ = t("lstm.bias_ih", {4 * H});
  const std::vector<float> bias_hh = t("lstm.bias_hh", {4 * H});
  kernels::add(bias_hh.data(), m.lstm_bias_.data(), 4 * H);
  const std::size_t O = c.context_output ? H + P : H;  // the output layer reads h or [h ; β·z]
  m.fc_ = nn::Linear(b, prefix + "fc.weight", V, O, prefix + "fc.bias", nn::Linear::Rows::few);
  return m;
}

ShowAttendTell::Encoded ShowAttendTell::encode(const float* grid, std::size_t cells) const {
  require(cells >= 1, "show-attend-tell: the feature grid is empty");
  require(fc_.out() != 0, "show-attend-tell: the model is not loaded");
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
  StepScratch scratch;
  step(enc, prev_word, h, c, logits, alpha, beta, scratch);
}

void ShowAttendTell::step(const Encoded& enc, int prev_word, float* h, float* c, float* logits, float* alpha,
                          float* beta, StepScratch& scratch) const {
  step_rows(enc, 1, &prev_word, h, c, logits, alpha, beta, scratch);
}

void ShowAttendTell::step_rows(const Encoded& enc, std::size_t k, const int* words, float* h, float* c,
                               float* logits, float* alpha, float* beta, StepScratch& scratch) const {
  scratch.encs.assign(k, &enc);  // no allocation once the scratch has held k rows
  step_rows(scratch.encs.data(), k, words, h, c, logits, alpha, beta, scratch);
}

void ShowAttendTell::attend_rows(const Encoded* const* encs, std::size_t k, const float* h, float* alpha, float* zs,
                                 std::size_t z_stride, float* beta, StepScratch& scratch) const {
  const std::size_t P = cfg_.proj_dim, H = cfg_.hidden_dim, A = cfg_.att_dim;
  const std::size_t L = k > 0 ? encs[0]->cells : 0;
  // q (k, A) = W_q h + b_q
  std::vector<float>& q = scratch.q;
  q.resize(k * A);
  att_hidden_.forward(k, h, H, q.data(), A);
  std::vector<float>& tmp = scratch.tmp;
  tmp.resize(L * A);
  std::size_t side = 0;  // the grid's side, when the scores are smoothed over it
  if (cfg_.score_smoothing > 0) {
    side = static_cast<std::size_t>(std::lround(std::sqrt(static_cast<double>(L))));
    if (side * side != L) throw Error("show-attend-tell: score_smoothing needs a square grid, got " +
                                      std::to_string(L) + " cells");
    scratch.smooth.resize(L);
  }
  for (std::size_t r = 0; r < k; ++r) {
    // e_i = wᵀ tanh(keys_i + q) + b_w; α = softmax(e)   (the catalogue's additive score and soft alignment)
    float* al = alpha + r * L;
    const Encoded& enc = *encs[r];
    attention::score_additive_hidden(att_score_w_.data(), A, q.data() + r * A, 1, enc.keys.data(), L, al, tmp.data());
    for (std::size_t i = 0; i < L; ++i) al[i] += att_score_b_;
    if (side > 0) attention::smooth_grid_scores(al, side, cfg_.score_smoothing, scratch.smooth.data());
    attention::align_soft(al, 1, L);
    // β·z,  z = Σ α_i p_i,  β = σ(w_bᵀ h + b_b)
    float* z = zs + r * z_stride;
    attention::soft_context(al, 1, L, enc.p.data(), P, z);
    float b = kernels::dot(gate_w_.data(), h + r * H, H) + gate_b_;
    kernels::vsigmoid(&b, 1);
    beta[r] = b;
    kernels::scale(b, z, P);
  }
}

void ShowAttendTell::step_rows(const Encoded* const* encs, std::size_t k, const int* words, float* h, float* c,
                               float* logits, float* alpha, float* beta, StepScratch& scratch) const {
  const std::size_t P = cfg_.proj_dim, H = cfg_.hidden_dim, M = cfg_.embed_dim;
  const std::size_t L = k > 0 ? encs[0]->cells : 0, V = cfg_.vocab_size;
  for (std::size_t r = 1; r < k; ++r)
    if (encs[r]->cells != L) throw Error("show-attend-tell: the images of one step have different grid sizes");
  // (if/throw rather than require(): messages are built only on failure, no allocation per step)
  for (std::size_t r = 0; r < k; ++r)
    if (words[r] < 0 || static_cast<std::size_t>(words[r]) >= V)
      throw Error("show-attend-tell: word id " + std::to_string(words[r]) + " is outside the vocabulary");
  const bool after = cfg_.context_output;
  const std::size_t X = after ? M : M + P;  // the LSTM's input row: [E[y]] or [E[y] ; β·z]
  std::vector<float>& x = scratch.x;
  x.resize(k * X);
  for (std::size_t r = 0; r < k; ++r)
    std::copy_n(embed_.data() + static_cast<std::size_t>(words[r]) * M, M, x.data() + r * X);
  // the paper's order: α, β and z from h_{t−1}, before the LSTM updates it; z is the LSTM input's second part
  if (!after) attend_rows(encs, k, h, alpha, x.data() + M, X, beta, scratch);
  nn::LstmCellWeights w;
  w.input_size = X;
  w.hidden_size = H;
  w.packed_ih = &lstm_p_ih_;
  w.packed_hh = &lstm_p_hh_;
  w.bias = lstm_bias_.data();
  std::vector<float>& gates = scratch.gates;
  gates.resize(k * 8 * H);
  nn::lstm_cell_step_rows(w, k, x.data(), X, h, H, c, H, gates.data());
  if (!after) {
    // logits (k, V) = W_o h + b_o
    fc_.forward(k, h, H, logits, V);
  } else {
    // context "output": α, β and z from the new h; logits (k, V) = W_o [h ; β·z] + b_o
    std::vector<float>& out = scratch.out;
    out.resize(k * (H + P));
    for (std::size_t r = 0; r < k; ++r) std::copy_n(h + r * H, H, out.data() + r * (H + P));
    attend_rows(encs, k, h, alpha, out.data() + H, H + P, beta, scratch);
    fc_.forward(k, out.data(), H + P, logits, V);
  }
  // A NaN would make argmax pick word 0 (<pad>) and the beam keep NaN scores: fail instead of captioning garbage.
  if (first_non_finite(logits, k * V) != k * V)
    throw Error("show-attend-tell: the decoder produced a non-finite logit (NaN or Inf); are the weights or the "
                "input features corrupt?");
}

// [V] flags of the banned words; an id outside the vocabulary, or the end id, is an Error.
std::vector<char> ShowAttendTell::ban_mask(const std::vector<int>& banned) const {
  std::vector<char> mask(cfg_.vocab_size, 0);
  for (int id : banned) {
    if (id < 0 || static_cast<std::size_t>(id) >= cfg_.vocab_size)
      throw Error("show-attend-tell: banned word id " + std::to_string(id) + " is outside the vocabulary");
    if (id == cfg_.end_id) throw Error("show-attend-tell: the end word cannot be banned");
    mask[static_cast<std::size_t>(id)] = 1;
  }
  return mask;
}

namespace {

// Greedy's choice after one step of one row: argmax over the words not banned, first maximum wins (torch.argmax;
// <end> is never banned, so one exists); the step's α, β and logits appended to r. Returns the chosen word.
int greedy_choose(SatDecodeResult& r, const float* logits, const float* alpha, std::size_t L, float beta,
                  const std::vector<char>& ban, std::vector<float>& logp) {
  const std::size_t V = ban.size();
  std::size_t best = V;
  for (std::size_t w = 0; w < V; ++w)
    if (!ban[w] && (best == V || logits[w] > logits[best])) best = w;
  r.alphas.insert(r.alphas.end(), alpha, alpha + L);
  r.logits.insert(r.logits.end(), logits, logits + V);
  r.betas.push_back(beta);
  ++r.steps;
  logp.assign(logits, logits + V);
  kernels::log_softmax(logp.data(), V);
  r.score += logp[best];
  return static_cast<int>(best);
}

}  // namespace

SatDecodeResult ShowAttendTell::greedy(const Encoded& enc, std::size_t max_len, const std::vector<int>& banned) const {
  return std::move(greedy_many({&enc}, max_len, banned)[0]);
}

std::vector<SatDecodeResult> ShowAttendTell::greedy_many(const std::vector<const Encoded*>& encs, std::size_t max_len,
                                                         const std::vector<int>& banned) const {
  if (max_len == 0) max_len = cfg_.max_len;
  const std::size_t n = encs.size(), V = cfg_.vocab_size, H = cfg_.hidden_dim;
  const std::size_t L = n > 0 ? encs[0]->cells : 0;
  const std::vector<char> ban = ban_mask(banned);
  std::vector<SatDecodeResult> out(n);
  for (SatDecodeResult& r : out) {
    r.alphas.reserve(max_len * L);
    r.logits.reserve(max_len * V);
    r.betas.reserve(max_len);
  }
  // The unfinished images' rows, in list order: live[j] is the image of row j; h, c [rows × H].
  std::vector<std::size_t> live(n);
  std::vector<const Encoded*> row_encs(n);  // encs[live[j]], contiguous for step_rows
  std::vector<int> prev(n, cfg_.start_id);
  std::vector<float> h(n * H), c(n * H), logits(n * V), alpha(n * L), beta(n), logp(V);
  for (std::size_t i = 0; i < n; ++i) {
    live[i] = i;
    std::copy_n(encs[i]->h0.data(), H, h.data() + i * H);
    std::copy_n(encs[i]->c0.data(), H, c.data() + i * H);
  }
  StepScratch scratch;
  for (std::size_t t = 0; t < max_len && !live.empty(); ++t) {
    const std::size_t k = live.size();
    for (std::size_t j = 0; j < k; ++j) row_encs[j] = encs[live[j]];
    step_rows(row_encs.data(), k, prev.data(), h.data(), c.data(), logits.data(), alpha.data(), beta.data(), scratch);
    std::size_t kept = 0;  // rows still decoding move down over the finished ones (state, image, last word)
    for (std::size_t j = 0; j < k; ++j) {
      const int next = greedy_choose(out[live[j]], logits.data() + j * V, alpha.data() + j * L, L, beta[j], ban, logp);
      if (next == cfg_.end_id) {
        out[live[j]].finished = true;
        continue;
      }
      out[live[j]].tokens.push_back(next);
      if (kept != j) {
        live[kept] = live[j];
        std::copy_n(h.data() + j * H, H, h.data() + kept * H);
        std::copy_n(c.data() + j * H, H, c.data() + kept * H);
      }
      prev[kept] = next;
      ++kept;
    }
    live.resize(kept);
  }
  return out;
}

SatDecodeResult ShowAttendTell::force(const Encoded& enc, const std::vector<int>& words) const {
  const std::size_t V = cfg_.vocab_size, L = enc.cells, n = words.size();
  SatDecodeResult r;
  r.tokens = words;
  r.finished = true;
  r.steps = n + 1;
  r.alphas.resize(r.steps * L);
  r.betas.resize(r.steps);
  r.logprobs.resize(r.steps);
  std::vector<float> h = enc.h0, c = enc.c0, logits(V);  // state [H], logits [V]
  StepScratch scratch;
  int prev = cfg_.start_id;
  for (std::size_t t = 0; t <= n; ++t) {
    // step t is fed the word before it (<start> first) and scores words[t] (<end> after the last word)
    const int target = t < n ? words[t] : cfg_.end_id;
    if (target < 0 || static_cast<std::size_t>(target) >= V)
      throw Error("show-attend-tell: word id " + std::to_string(target) + " is outside the vocabulary");
    step(enc, prev, h.data(), c.data(), logits.data(), r.alphas.data() + t * L, &r.betas[t], scratch);
    kernels::log_softmax(logits.data(), V);
    r.logprobs[t] = logits[static_cast<std::size_t>(target)];
    r.score += r.logprobs[t];
    prev = target;
  }
  return r;
}

SatDecodeResult ShowAttendTell::beam(const Encoded& enc, std::size_t beam, std::size_t max_len,
                                     double length_norm, const std::vector<int>& banned) const {
  require(beam >= 1, "show-attend-tell: num_beams must be at least 1");
  if (max_len == 0) max_len = cfg_.max_len;
  const std::size_t V = cfg_.vocab_size, L = enc.cells, H = cfg_.hidden_dim;
  const std::vector<char> ban = ban_mask(banned);
  constexpr float kBanned = -std::numeric_limits<float>::infinity();
  // Sized once per call. Live rows of the current step: state (h, c), score, the word they are fed; the `next_`
  // buffers receive the kept extensions and are swapped in.
  std::vector<float> h(beam * H), c(beam * H), next_h(beam * H), next_c(beam * H);
  std::vector<float> score(beam), next_score(beam);
  std::vector<int> word(beam), next_word(beam), parents(beam);
  std::copy(enc.h0.begin(), enc.h0.end(), h.begin());
  std::copy(enc.c0.begin(), enc.c0.end(), c.begin());
  score[0] = 0;
  word[0] = cfg_.start_id;
  // History, one entry per row that ran at step s (entries [begin[s], begin[s + 1])): α [L] and β written by the
  // step itself, the row's parent at step s − 1 (−1 at the first step) and the word it was fed.
  std::vector<std::size_t> begin;
  std::vector<int> parent_of, fed;
  std::vector<float> alphas, betas;
  begin.reserve(max_len);
  parent_of.reserve(max_len * beam);
  fed.reserve(max_len * beam);
  alphas.reserve(max_len * beam * L);
  betas.reserve(max_len * beam);
  // A hypothesis = its last word, chosen at `step` from row `row`; `length` words, a final <end> included.
  struct Ended {
    std::size_t step;
    int row, word;
    float score;
  };
  std::vector<Ended> finished;
  finished.reserve(2 * beam);
  std::vector<float> cand(beam * V);
  std::vector<std::size_t> order(beam * V);
  StepScratch scratch;
  std::size_t k = 1, last_step = 0;
  for (std::size_t t = 0; t < max_len; ++t) {
    last_step = t;
    begin.push_back(fed.size());
    for (std::size_t i = 0; i < k; ++i) {
      parent_of.push_back(t == 0 ? -1 : parents[i]);
      fed.push_back(word[i]);
    }
    alphas.resize(fed.size() * L);
    betas.resize(fed.size());
    float* alpha_t = alphas.data() + begin.back() * L;
    float* beta_t = betas.data() + begin.back();
    step_rows(enc, k, word.data(), h.data(), c.data(), cand.data(), alpha_t, beta_t, scratch);  // the k live rows
    for (std::size_t i = 0; i < k; ++i) {
      float* lp = cand.data() + i * V;
      kernels::log_softmax(lp, V);
      for (std::size_t w = 0; w < V; ++w) lp[w] = ban[w] ? kBanned : lp[w] + score[i];  // float32, as torch adds
    }
    // the `beam` best of the k·V candidates: descending score, ties → lower flat index
    const std::size_t n_keep = std::min(beam, k * V);
    order.resize(k * V);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n_keep), order.end(),
                      [&](std::size_t a, std::size_t b) { return cand[a] > cand[b] || (cand[a] == cand[b] && a < b); });
    std::size_t n_next = 0;
    for (std::size_t j = 0; j < n_keep; ++j) {
      if (cand[order[j]] == kBanned) break;  // banned words sort last (log-softmax of finite logits is finite)
      const std::size_t src = order[j] / V;
      const int w = static_cast<int>(order[j] % V);
      if (w == cfg_.end_id) {
        finished.push_back({t, static_cast<int>(src), w, cand[order[j]]});
        continue;
      }
      next_score[n_next] = cand[order[j]];
      next_word[n_next] = w;
      parents[n_next] = static_cast<int>(src);
      std::copy_n(h.data() + src * H, H, next_h.data() + n_next * H);
      std::copy_n(c.data() + src * H, H, next_c.data() + n_next * H);
      ++n_next;
    }
    if (finished.size() >= beam || n_next == 0) break;
    k = n_next;
    h.swap(next_h);
    c.swap(next_c);
    score.swap(next_score);
    word.swap(next_word);
  }
  if (begin.empty()) return SatDecodeResult{};  // no step ran
  // No hypothesis finished (max_len reached): the live ones, each the extension chosen at the last step.
  std::vector<Ended> live;
  if (finished.empty())
    for (std::size_t i = 0; i < k; ++i) live.push_back({last_step, parents[i], word[i], score[i]});
  const std::vector<Ended>& pool = finished.empty() ? live : finished;
  auto norm = [&](const Ended& x) {
    return length_norm != 0
               ? static_cast<double>(x.score) / std::pow(static_cast<double>(x.step + 1), length_norm)
               : static_cast<double>(x.score);
  };
  std::size_t best = 0;
  for (std::size_t i = 1; i < pool.size(); ++i)
    if (norm(pool[i]) > norm(pool[best])) best = i;  // max(): the first of equal scores wins
  // Backtrack: row i at step s was fed fed[s][i] (the word its parent chose at step s − 1).
  const Ended& b = pool[best];
  const std::size_t n = b.step + 1;
  SatDecodeResult r;
  r.tokens.assign(n, 0);
  r.alphas.resize(n * L);
  r.betas.resize(n);
  r.tokens[n - 1] = b.word;
  int row = b.row;
  for (std::size_t s = n; s-- > 0;) {
    const std::size_t e = begin[s] + static_cast<std::size_t>(row);
    std::copy_n(alphas.data() + e * L, L, r.alphas.data() + s * L);
    r.betas[s] = betas[e];
    if (s > 0) r.tokens[s - 1] = fed[e];
    row = parent_of[e];
  }
  if (r.tokens.back() == cfg_.end_id) {
    r.tokens.pop_back();
    r.finished = true;
  }
  r.steps = n;
  r.score = b.score;
  return r;
}

}  // namespace attnlens::models
