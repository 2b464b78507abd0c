// Greedy and beam search: models/training/translation/decoding.py ported rule for rule (see search.h).
#include "decode/search.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "common.h"
#include "kernels/kernels.h"

namespace attnlens::decode {

namespace {

void check_start(const StepModel& model, const SearchParams& params) {
  require(model.vocab_size() > 0, "search: the model has an empty vocabulary");
  require(model.rows() == 1, "search: the model must start with exactly one row, it holds " +
                                 std::to_string(model.rows()));
  require(params.max_new_tokens >= 0, "search: max_new_tokens must be >= 0, got " +
                                          std::to_string(params.max_new_tokens));
  require(params.eos_id >= 0 && static_cast<std::size_t>(params.eos_id) < model.vocab_size(),
          "search: eos id " + std::to_string(params.eos_id) + " is outside the vocabulary");
  require(std::isfinite(params.alpha) && std::isfinite(params.coverage_beta),
          "search: alpha and coverage_beta must be finite numbers");
  static_assert(kMaxCandidatesPerBeam == 8, "the message below names the bound");
  require(params.candidates_per_beam >= 1 && params.candidates_per_beam <= kMaxCandidatesPerBeam,
          "search: candidates_per_beam must be in [1, 8]");
}

// The candidate walk's order: higher value first, equal values by ascending flat index.
struct Candidate {
  float value;
  std::size_t flat;
};

inline bool before(const Candidate& a, const Candidate& b) {
  return a.value > b.value || (a.value == b.value && a.flat < b.flat);
}

// The greedy choice from one row of logits: the arg max (ties → the lowest id, as torch.argmax); the row is left
// holding its log-softmax, so row[choice] is the choice's log-probability.
std::size_t greedy_choice(float* row, std::size_t vocab) {
  std::size_t best = 0;
  for (std::size_t w = 1; w < vocab; ++w)
    if (row[w] > row[best]) best = w;  // strict: ties keep the lowest id
  kernels::log_softmax(row, vocab);
  return best;
}

double coverage_penalty(const float* coverage, std::size_t n, double beta) {
  if (beta == 0.0) return 0.0;
  float sum = 0;
  for (std::size_t s = 0; s < n; ++s) sum += std::log(coverage[s] < 1.0f ? coverage[s] : 1.0f);
  return beta * static_cast<double>(sum);
}

}  // namespace

SearchResult greedy_search(StepModel& model, const SearchParams& params) {
  check_start(model, params);
  const std::size_t vocab = model.vocab_size();
  std::vector<float> logits(vocab);
  SearchResult result;
  result.tokens.reserve(static_cast<std::size_t>(std::min(params.max_new_tokens, 1024)));
  int prev = params.bos_id;
  for (int t = 0; t < params.max_new_tokens; ++t) {
    model.step(&prev, logits.data(), nullptr);
    const std::size_t best = greedy_choice(logits.data(), vocab);
    result.score += logits[best];
    prev = static_cast<int>(best);
    result.tokens.push_back(prev);
    result.rows.push_back(0);
    if (prev == params.eos_id) {
      result.finished = true;
      break;
    }
  }
  result.normalised = result.score;
  return result;
}

std::vector<SearchResult> greedy_search_many(StepModel& model, const std::vector<int>& max_new_tokens, int bos_id,
                                             int eos_id) {
  const std::size_t n = max_new_tokens.size();
  require(model.rows() == n, "search: greedy_search_many needs one model row per hypothesis, the model holds " +
                                 std::to_string(model.rows()) + " for " + std::to_string(n));
  const std::size_t vocab = model.vocab_size();
  require(vocab > 0, "search: the model has an empty vocabulary");
  require(eos_id >= 0 && static_cast<std::size_t>(eos_id) < vocab,
          "search: eos id " + std::to_string(eos_id) + " is outside the vocabulary");
  std::vector<SearchResult> out(n);
  // Row r of the current step decodes hypothesis live[r]; prev[r] is what it is fed.
  std::vector<int> live(n), prev(n, bos_id), parents, next_live, next_prev;
  parents.reserve(n);
  next_live.reserve(n);
  next_prev.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    require(max_new_tokens[i] >= 0, "search: max_new_tokens must be >= 0, got " + std::to_string(max_new_tokens[i]));
    live[i] = static_cast<int>(i);
    out[i].tokens.reserve(static_cast<std::size_t>(std::min(max_new_tokens[i], 1024)));
    out[i].rows.reserve(out[i].tokens.capacity());
  }
  // Hypotheses allowed no token at all never run.
  if (std::any_of(max_new_tokens.begin(), max_new_tokens.end(), [](int m) { return m == 0; })) {
    for (std::size_t r = 0; r < n; ++r)
      if (max_new_tokens[r] > 0) {
        parents.push_back(static_cast<int>(r));
        next_live.push_back(static_cast<int>(r));
      }
    if (parents.empty()) return out;
    model.reorder(parents);
    live.swap(next_live);
    prev.assign(live.size(), bos_id);
  }
  std::vector<float> logits(live.size() * vocab);
  while (!live.empty()) {
    model.step(prev.data(), logits.data(), nullptr);
    parents.clear();
    next_live.clear();
    next_prev.clear();
    for (std::size_t r = 0; r < live.size(); ++r) {
      SearchResult& h = out[static_cast<std::size_t>(live[r])];
      float* row = logits.data() + r * vocab;
      const std::size_t best = greedy_choice(row, vocab);
      h.score += row[best];
      h.tokens.push_back(static_cast<int>(best));
      h.rows.push_back(static_cast<int>(r));
      if (static_cast<int>(best) == eos_id) {
        h.finished = true;
      } else if (h.tokens.size() < static_cast<std::size_t>(max_new_tokens[static_cast<std::size_t>(live[r])])) {
        parents.push_back(static_cast<int>(r));
        next_live.push_back(live[r]);
        next_prev.push_back(static_cast<int>(best));
      }
    }
    if (parents.empty()) break;
    if (parents.size() < live.size()) model.reorder(parents);
    live.swap(next_live);
    prev.swap(next_prev);
  }
  for (auto& h : out) h.normalised = h.score;
  return out;
}

SearchResult beam_search(StepModel& model, const SearchParams& params) {
  check_start(model, params);
  require(params.num_beams >= 1, "search: num_beams must be >= 1, got " + std::to_string(params.num_beams));
  const std::size_t k = static_cast<std::size_t>(params.num_beams);
  const std::size_t pool = k * static_cast<std::size_t>(params.candidates_per_beam);  // finished ones to collect
  const std::size_t vocab = model.vocab_size();
  const std::size_t src = model.source_length();
  const int limit = params.max_new_tokens;
  const bool want_coverage = params.coverage_beta != 0.0;

  // Everything is sized once per call; the steps only reuse it (the history grows by k ints a step, amortised).
  // Live rows of the current step: score and coverage (Σ_t a_t over source positions), double-buffered.
  std::vector<float> score(k), next_score(k), cov(want_coverage ? k * src : 0), next_cov(cov.size());
  std::vector<int> prev(k), next_token(k), parents(k);
  std::vector<float> logits(k * vocab), attention(want_coverage ? k * src : 0);
  // History, one entry per row that ran at step s (entries [begin[s], begin[s + 1])): the row's parent at step s − 1
  // (−1 at the first step) and the token it was fed.
  std::vector<std::size_t> begin;
  std::vector<int> parent_of, fed;
  const std::size_t expected = static_cast<std::size_t>(std::min(limit, 256));
  begin.reserve(expected + 1);
  parent_of.reserve(expected * k);
  fed.reserve(expected * k);
  // Finished hypotheses (at most pool): the step and row that produced their last token, that token, score, coverage.
  struct Finished {
    int step, row, token;
    float score;
  };
  std::vector<Finished> finished;
  finished.reserve(pool);
  std::vector<float> finished_cov(want_coverage ? pool * src : 0);
  std::vector<Candidate> top;
  top.reserve(2 * k + 1);
  // The choice so far: the finished hypothesis with the highest score / lp(L) + cp, ties → the earliest finished
  // (each one is considered once, in order of finishing, after its coverage is complete).
  const auto lp = [&](double length) { return std::pow((5.0 + length) / 6.0, params.alpha); };
  const double lp_limit = lp(static_cast<double>(limit));  // the longest length a hypothesis can reach
  std::size_t best = 0;
  double best_value = 0;
  const auto consider = [&](std::size_t j) {
    const double value = static_cast<double>(finished[j].score) / lp(static_cast<double>(finished[j].step + 1)) +
                         coverage_penalty(want_coverage ? finished_cov.data() + j * src : nullptr,
                                          want_coverage ? src : 0, params.coverage_beta);
    if (j == 0 || value > best_value) {
      best = j;
      best_value = value;
    }
  };

  std::size_t rows = 1;
  score[0] = 0;
  prev[0] = params.bos_id;
  for (int t = 1; t <= limit; ++t) {
    const int s = t - 1;  // 0-based step
    begin.push_back(fed.size());
    for (std::size_t r = 0; r < rows; ++r) {
      parent_of.push_back(s == 0 ? -1 : parents[r]);
      fed.push_back(prev[r]);
    }
    if (want_coverage) std::fill(attention.begin(), attention.begin() + static_cast<std::ptrdiff_t>(rows * src), 0.0f);
    model.step(prev.data(), logits.data(), want_coverage ? attention.data() : nullptr);

    // The walk reads the 2k best candidates (decoding.py's rule): k of them are enough to fill either kind when
    // candidates_per_beam is 1; with a larger pool the walk may run out first, and the step keeps what it found.
    top.clear();
    const std::size_t keep = 2 * k;
    for (std::size_t i = 0; i < rows; ++i) {
      float* row = logits.data() + i * vocab;
      kernels::log_softmax(row, vocab);
      const float base = score[i];
      for (std::size_t w = 0; w < vocab; ++w) {
        const Candidate c{base + row[w], i * vocab + w};
        if (top.size() == keep && !before(c, top.back())) continue;
        std::size_t pos = top.size();
        if (pos < keep) top.push_back(c);
        else pos = keep - 1;
        while (pos > 0 && before(c, top[pos - 1])) {
          top[pos] = top[pos - 1];
          --pos;
        }
        top[pos] = c;
      }
    }

    const bool last = t == limit;
    std::size_t n_next = 0;
    for (const Candidate& c : top) {
      const std::size_t i = c.flat / vocab;
      const int w = static_cast<int>(c.flat % vocab);
      float* into = nullptr;  // the candidate's coverage: its row's plus this step's signal
      const bool ends = w == params.eos_id || last;
      if (ends) {
        finished.push_back({s, static_cast<int>(i), w, c.value});
        into = want_coverage ? finished_cov.data() + (finished.size() - 1) * src : nullptr;
      } else {
        next_score[n_next] = c.value;
        next_token[n_next] = w;
        parents[n_next] = static_cast<int>(i);
        into = want_coverage ? next_cov.data() + n_next * src : nullptr;
        ++n_next;
      }
      if (into != nullptr) {
        std::copy_n(cov.data() + i * src, src, into);
        const float* a = attention.data() + i * src;
        for (std::size_t p = 0; p < src; ++p) into[p] += a[p];
      }
      if (ends) consider(finished.size() - 1);
      if (finished.size() == pool || n_next == k) break;
    }
    if (finished.size() >= pool || last || n_next == 0) break;
    // Stop as soon as no live row can still win (the choice is then already made; see search.h): a row of score S
    // ends at a length L in [t + 1, limit] with a score S' <= S (log-probabilities are <= 0), hence a value
    // S'/lp(L) + cp <= S / lp_max when S <= 0 and cp <= 0 (beta >= 0). Ties keep the earlier hypothesis, so a
    // bound equal to the best value cannot win either; a NaN anywhere keeps the search going.
    if (!finished.empty() && params.coverage_beta >= 0) {
      const double lp_a = lp(static_cast<double>(t + 1)), lp_b = lp_limit;
      bool can_win = false;
      for (std::size_t r = 0; r < n_next && !can_win; ++r) {
        const double score_r = static_cast<double>(next_score[r]);
        const double bound = score_r / (score_r <= 0 ? std::max(lp_a, lp_b) : std::min(lp_a, lp_b));
        can_win = !(bound <= best_value);
      }
      if (!can_win) break;
    }
    parents.resize(n_next);  // within the capacity reserved above: no allocation
    model.reorder(parents);
    parents.resize(k);
    rows = n_next;
    score.swap(next_score);
    cov.swap(next_cov);
    std::copy_n(next_token.data(), rows, prev.data());
  }

  SearchResult result;
  if (finished.empty()) return result;  // max_new_tokens == 0
  // Backtrack: row i at step s was fed fed[s][i] (the token its parent chose at step s − 1).
  const Finished& f = finished[best];
  const std::size_t n = static_cast<std::size_t>(f.step) + 1;
  result.tokens.assign(n, 0);
  result.rows.assign(n, 0);
  result.tokens[n - 1] = f.token;
  int row = f.row;
  for (std::size_t s = n - 1;; --s) {
    result.rows[s] = row;
    if (s == 0) break;
    const std::size_t e = begin[s] + static_cast<std::size_t>(row);
    result.tokens[s - 1] = fed[e];
    row = parent_of[e];
  }
  result.score = f.score;
  result.normalised = best_value;
  result.finished = result.tokens.back() == params.eos_id;
  result.hypotheses = static_cast<int>(finished.size());
  return result;
}

SearchResult search(StepModel& model, const SearchParams& params) {
  return params.num_beams <= 1 ? greedy_search(model, params) : beam_search(model, params);
}

}  // namespace attnlens::decode
