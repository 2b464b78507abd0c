// What api::Translator takes from a bundle, by architecture: a small registry of architecture → (model loader,
// tokenizer loader, decoder shape for the alignment defaults). "transformer-seq2seq" and "rnn-seq2seq" are always
// there (the project's BPE); register_hf_architectures() adds "hf-marian" (MarianMT through its converted
// tokenizer.json + vocab.json), so that only callers that ask for it — the CLI, the tests, the Hugging Face WASM
// module — link the Hugging Face models: the two shipped WASM modules never call it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/bundle.h"
#include "models/seq2seq.h"

namespace attnlens::api {

// A translator's text ↔ ids, whatever the tokenizer: the project's BPE or a Hugging Face tokenizer.
class TranslationTokenizer {
 public:
  virtual ~TranslationTokenizer() = default;
  // The source pieces' ids, without the final </s> (the translator appends eos_id()).
  virtual std::vector<int> encode(std::string_view text) const = 0;
  virtual std::string piece(int id) const = 0;
  // Ids (without </s>) → text.
  virtual std::string decode(const std::vector<int>& ids) const = 0;
  virtual std::size_t vocab_size() const = 0;
  int bos_id() const { return bos_; }  // the decoder's first input (<s>; Marian: decoder_start_token_id)
  int eos_id() const { return eos_; }  // ends a source and a translation

 protected:
  TranslationTokenizer(int bos, int eos) : bos_(bos), eos_(eos) {}

 private:
  int bos_, eos_;
};

struct TranslationArchitecture {
  std::unique_ptr<models::Seq2SeqModel> (*model)(const io::Bundle&) = nullptr;
  std::unique_ptr<TranslationTokenizer> (*tokenizer)(const io::Bundle&) = nullptr;
  // Decoder layers and cross-attention heads (the alignment's layer/head ranges); null: one map (the RNNs).
  std::pair<int, int> (*cross_maps)(const io::Bundle&) = nullptr;
};

// Adds (or replaces) an architecture. Not thread-safe against a concurrent load: register first.
void register_translation_architecture(const std::string& name, const TranslationArchitecture& arch);
// The registered architecture, or an Error naming the registered ones.
const TranslationArchitecture& translation_architecture(const io::Bundle& bundle);
// Registers "hf-marian" (api/hf_translation.cpp). Idempotent.
void register_hf_architectures();

}  // namespace attnlens::api
