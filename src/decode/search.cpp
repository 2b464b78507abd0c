// Greedy and beam search: models/training/translation/decoding.py ported rule for rule (see search.h).
#include "decode/search.h"

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
}

struct Hypothesis {
  std::vector<int> tokens;
  float score = 0;
  std::vector<float> coverage;  // Σ_t a_t over source positions
};

// The candidate walk's order: higher value first, equal values by ascending flat index.
struct Candidate {
  float value;
  std::size_t flat;
};

inline bool before(const Candidate& a, const Candidate& b) {
  return a.value > b.value || (a.value == b.value && a.flat < b.flat);
}

double coverage_penalty(const std::vector<float>& coverage, double beta) {
  if (beta == 0.0) return 0.0;
  float sum = 0;
  for (float c : coverage) sum += std::log(c < 1.0f ? c : 1.0f);
  return beta * static_cast<double>(sum);
}

}  // namespace

SearchResult greedy_search(StepModel& model, const SearchParams& params) {
  check_start(model, params);
  const std::size_t vocab = model.vocab_size();
  std::vector<float> logits(vocab);
  SearchResult result;
  int prev = params.bos_id;
  for (int t = 0; t < params.max_new_tokens; ++t) {
    model.step(&prev, logits.data(), nullptr);
    std::size_t best = 0;
    for (std::size_t w = 1; w < vocab; ++w)
      if (logits[w] > logits[best]) best = w;  // strict: ties keep the lowest id, as torch.argmax
    kernels::log_softmax(logits.data(), vocab);
    result.score += logits[best];
    prev = static_cast<int>(best);
    result.tokens.push_back(prev);
    if (prev == params.eos_id) {
      result.finished = true;
      break;
    }
  }
  result.normalised = result.score;
  return result;
}

SearchResult beam_search(StepModel& model, const SearchParams& params) {
  check_start(model, params);
  require(params.num_beams >= 1, "search: num_beams must be >= 1, got " + std::to_string(params.num_beams));
  const std::size_t k = static_cast<std::size_t>(params.num_beams);
  const std::size_t vocab = model.vocab_size();
  const std::size_t src = model.source_length();
  const int limit = params.max_new_tokens;
  const bool want_coverage = params.coverage_beta != 0.0;

  std::vector<Hypothesis> alive(1), next;
  alive[0].coverage.assign(src, 0.0f);
  std::vector<Hypothesis> finished;
  std::vector<int> prev(1, params.bos_id), parents;
  std::vector<float> logits, attention;
  std::vector<Candidate> top;
  top.reserve(2 * k + 1);

  for (int t = 1; t <= limit; ++t) {
    const std::size_t rows = alive.size();
    logits.resize(rows * vocab);
    attention.assign(rows * src, 0.0f);
    model.step(prev.data(), logits.data(), want_coverage ? attention.data() : nullptr);

    // The 2k best candidates in walk order are all the walk can use: it stops after k of either kind.
    top.clear();
    const std::size_t keep = 2 * k;
    for (std::size_t i = 0; i < rows; ++i) {
      float* row = logits.data() + i * vocab;
      kernels::log_softmax(row, vocab);
      const float base = alive[i].score;
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
    next.clear();
    parents.clear();
    for (const Candidate& c : top) {
      const std::size_t i = c.flat / vocab;
      const int w = static_cast<int>(c.flat % vocab);
      Hypothesis h;
      h.tokens = alive[i].tokens;
      h.tokens.push_back(w);
      h.score = c.value;
      if (want_coverage) {
        h.coverage = alive[i].coverage;
        const float* a = attention.data() + i * src;
        for (std::size_t s = 0; s < src; ++s) h.coverage[s] += a[s];
      }
      if (w == params.eos_id || last) {
        finished.push_back(std::move(h));
        if (finished.size() == k) break;
      } else {
        next.push_back(std::move(h));
        parents.push_back(static_cast<int>(i));
        if (next.size() == k) break;
      }
    }
    if (finished.size() >= k || last || next.empty()) break;
    model.reorder(parents);
    alive.swap(next);
    prev.resize(alive.size());
    for (std::size_t r = 0; r < alive.size(); ++r) prev[r] = alive[r].tokens.back();
  }

  SearchResult result;
  if (finished.empty()) return result;  // max_new_tokens == 0
  std::size_t best = 0;
  double best_value = 0;
  for (std::size_t j = 0; j < finished.size(); ++j) {
    const Hypothesis& h = finished[j];
    const double lp = std::pow((5.0 + static_cast<double>(h.tokens.size())) / 6.0, params.alpha);
    const double value = static_cast<double>(h.score) / lp + coverage_penalty(h.coverage, params.coverage_beta);
    if (j == 0 || value > best_value) {
      best = j;
      best_value = value;
    }
  }
  result.tokens = finished[best].tokens;
  result.score = finished[best].score;
  result.normalised = best_value;
  result.finished = !result.tokens.empty() && result.tokens.back() == params.eos_id;
  result.hypotheses = static_cast<int>(finished.size());
  return result;
}

SearchResult search(StepModel& model, const SearchParams& params) {
  return params.num_beams <= 1 ? greedy_search(model, params) : beam_search(model, params);
}

}  // namespace attnlens::decode
