// attnlens C++ API: sentence sentiment (SST-2) with the attention map the model computes. Included by src/api.h.
//
//   auto clf = attnlens::api::SentimentClassifier::load("models/sst2-selfattn");
//   auto r = clf->classify("It's a charming, often affecting journey.");
//   // r.label "POSITIVE", r.score 0.99…, r.tokens {it 's a charming , often affecting journey .},
//   // r.attentions[0]: "self-attention" dims {4, 9} (hops × tokens; sst2-relation: "pair-attention" T × T)
//
// Text → tokens: the SST-2 tokenizer (text/words.h): lowercased; punctuation split off; clitics split ("don't" →
// do n't, "it's" → it 's); typographic quotes and dashes mapped to the ASCII forms of the data; any bytes are
// accepted (ill-formed UTF-8 becomes U+FFFD). Tokens not in the model's vocabulary are shown as "<unk>" in
// `tokens` (that is what the model sees), with the unknown id in `ids`.
//
// Limits, chosen and documented:
//   - Empty input — no tokens after tokenization (an empty string, only white space) — throws
//     Error("sentiment: empty input ..."): there is nothing to classify, and a made-up neutral answer would be
//     indistinguishable from a real one. A text of only punctuation or emoji has tokens and gets a result.
//   - Long input: only the first `max_tokens` tokens (default 256) are classified and `truncated` is set.
//     classify() stops tokenizing one token past the limit, so for a truncated text `num_input_tokens` is
//     max_tokens + 1 ("more than max_tokens"); classify_tokens() gets all tokens and reports their count.
//     The relation model's attention is T × T (and its cost O(T²)), so 10,000 words would need a 400 MB map;
//     256 tokens are far beyond any SST-2 sentence (≤ 47 tokens in dev) and keep the map at 256 KB.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/contract.h"
#include "trace/trace.h"

namespace attnlens::api {

struct SentimentParams {
  std::size_t max_tokens = 256;  // 1 … 1024
};
// The task's contract (api/contract.h): its options and result fields.
const Contract& sentiment_contract();
// Parses {"max_tokens": N} as the contract declares it (unknown keys are an error) over the defaults above; ""
// means the defaults.
SentimentParams sentiment_params(const std::string& params_json);

struct SentimentResult {
  std::string label;                 // e.g. "POSITIVE" (config.json "labels")
  int label_index = -1;              // index of `label` in labels(); the first on a tie
  float score = 0.0f;                // probabilities[label_index]
  std::vector<float> probabilities;  // softmax(logits), one per label
  std::vector<float> logits;
  std::vector<std::string> tokens;   // the tokens the model saw, out-of-vocabulary ones as "<unk>"
  std::vector<int> ids;              // their vocabulary ids
  // The one map the model attends with, as every task returns its maps (trace/trace.h): "self-attention" (dims
  // [hops, T]) or "pair-attention" (dims [T, T]), layer and head −1; row-major, every row sums to 1.
  AttentionTrace attentions;
  bool truncated = false;            // the text had more than max_tokens tokens; only the first were used
  std::size_t num_input_tokens = 0;  // tokens before truncation (classify(): at most max_tokens + 1, see above)

  template <class F>
  void fields(F&& f) const {
    f("label", label), f("label_index", label_index), f("score", score), f("probabilities", probabilities);
    f("logits", logits), f("tokens", tokens), f("ids", ids), f("attentions", attentions);
    f("truncated", truncated), f("num_input_tokens", num_input_tokens);
  }
};

class SentimentClassifier {
 public:
  // From a bundle directory (config.json, weights.safetensors, the vocabulary file config.tokenizer.vocab).
  static std::unique_ptr<SentimentClassifier> load(const std::string& dir, const SentimentParams& params = {});
  // From the same files as bytes (the WASM build): config.json text, the weights file, other files by name.
  static std::unique_ptr<SentimentClassifier> from_memory(const std::string& config_json,
                                                          std::vector<std::uint8_t> weights,
                                                          std::map<std::string, std::string> files,
                                                          const SentimentParams& params = {},
                                                          const std::string& name = "<memory>");
  ~SentimentClassifier();
  SentimentClassifier(const SentimentClassifier&) = delete;
  SentimentClassifier& operator=(const SentimentClassifier&) = delete;

  // Raw text → result (tokenized as described above). Throws Error for empty input.
  SentimentResult classify(const std::string& text) const;
  // classify() of each text, shared out among kernels::threads() threads (kernels/parallel.h); the results equal
  // classify()'s for any thread count; the first error is rethrown.
  std::vector<SentimentResult> classify_many(const std::vector<std::string>& texts) const;
  // Already-tokenized input (SST-2 form, e.g. a line of dev.tsv split on spaces); same limits.
  SentimentResult classify_tokens(const std::vector<std::string>& tokens) const;

  const std::vector<std::string>& labels() const;
  const std::string& architecture() const;  // "selfattn-classifier" or "relation-classifier"
  const std::string& name() const;          // the bundle directory or the name given to from_memory
  std::size_t vocab_size() const;
  std::size_t max_tokens() const;

 private:
  struct Impl;
  explicit SentimentClassifier(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnlens::api
