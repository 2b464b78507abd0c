// attnlens C++ API: text generation with a converted GPT-2 bundle (config "architecture": "hf-gpt2", task
// "text-generation"), as transformers' generate(do_sample=False, num_beams=1) and transformers.js's
// pipeline('text-generation') with greedy decoding:
//
//   auto gen = attnlens::api::TextGenerator::load("tests/fixtures/hf/gpt2-tiny/bundle");
//   auto r = gen->generate("Hello", gen->params(R"({"max_new_tokens": 8})"));
//   // r.generated_text = prompt + continuation, r.new_ids, r.attentions: "self-attention" [N, N] per layer × head
//
// Text → ids: the bundle's tokenizer.json (api/hf_tokenizer_file.h). Greedy: each new id is the argmax of the last
// position's logits (the lowest id on a tie), fed back through the KV cache (models/hf_gpt2.h), until eos_token_id
// (kept) or max_new_tokens. Limits, chosen and documented:
//   - An empty prompt starts from bos_token_id, as generate() does without input ids.
//   - The context is n_positions: a prompt longer than n_positions − 1 is an Error; generation stops when the
//     context is full (`stopped` says "length" either way).
//   - do_sample true is an Error (sampling is not implemented; the option exists so that callers learn that clearly).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/contract.h"
#include "trace/trace.h"

namespace attnlens::api {

struct TextGenerationParams {
  int max_new_tokens = 20;        // 1 … 4096
  bool output_attentions = true;  // false: `attentions` stays empty
  bool output_qk = false;         // also `qk` (whatever output_attentions says)
};
const Contract& text_generation_contract();
// Parses {"max_new_tokens": N, "do_sample": false, "output_attentions": b, "output_qk": b} as the contract declares it.
TextGenerationParams text_generation_params(const std::string& params_json);

struct TextGenerationResult {
  std::string generated_text;      // the prompt's text followed by the decoded new ids
  std::string new_text;            // the decoded new ids alone (special tokens skipped)
  std::vector<int> prompt_ids;     // the ids the model was given (bos_token_id for an empty prompt)
  std::vector<int> new_ids;        // the generated ids, eos_token_id included when produced
  std::vector<std::string> tokens;  // the tokens of prompt_ids then new_ids
  std::string stopped;             // "eos" or "length"
  // "self-attention" maps, one per layer × head, dims [N, N] over the N positions the model was fed (the prompt and
  // every new id but the last), row i being the attention of position i when it was fed; zero above the diagonal.
  AttentionTrace attentions;
  // With output_qk: the vectors behind those maps, "self-attention.query" and "self-attention.key" [N, d_head] per
  // layer × head, from one teacher-forced forward over the same N ids after generation (row i of a map =
  // softmax_j≤i(query[i]·key[j]/√d_head)).
  AttentionTrace qk;

  template <class F>
  void fields(F&& f) const {
    f("generated_text", generated_text), f("new_text", new_text), f("prompt_ids", prompt_ids);
    f("new_ids", new_ids), f("tokens", tokens), f("stopped", stopped), f("attentions", attentions);
    f("qk", present_if(!qk.empty(), qk));
  }
};

class TextGenerator {
 public:
  static std::unique_ptr<TextGenerator> load(const std::string& dir);
  static std::unique_ptr<TextGenerator> from_memory(const std::string& config_json, std::vector<std::uint8_t> weights,
                                                    std::map<std::string, std::string> files,
                                                    const std::string& name = "<memory>");
  ~TextGenerator();
  TextGenerator(const TextGenerator&) = delete;
  TextGenerator& operator=(const TextGenerator&) = delete;

  TextGenerationResult generate(const std::string& prompt, const TextGenerationParams& params = {}) const;
  // Already-tokenized prompt (ids in the vocabulary; empty: bos_token_id).
  TextGenerationResult generate_ids(const std::vector<int>& prompt_ids, const TextGenerationParams& params = {}) const;

 private:
  struct Impl;
  explicit TextGenerator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnlens::api
