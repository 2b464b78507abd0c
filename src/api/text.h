// attnlens C++ API: the tokenizers (src/text) — the BPE of the translators and the SST-2 word tokenizer. Included
// by src/api.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common.h"

namespace attnlens::api {

// ---- text (src/text) ----

// The project's byte-safe BPE tokenizer (text/bpe.h: Sennrich 2016 with SentencePiece's "▁" marker), the same
// implementation the training recipes use through attnlens-cli.
struct BpeLearnParams {
  int num_merges = 10000;
  int min_frequency = 1;  // rarer characters are left out of the vocabulary (→ <unk>)
};

struct BpeEncoding {
  std::vector<int> ids;
  std::vector<std::string> pieces;  // same length as ids; "▁" marks a preceding space
};

class BpeTokenizer {
 public:
  // From the contents of PREFIX.vocab and PREFIX.merges (the WASM build gets bytes, not paths).
  static std::unique_ptr<BpeTokenizer> from_text(const std::string& vocab_text, const std::string& merges_text);
  // From the bundle JSON form {"type": "bpe", "vocab": [...], "merges": ["left right", ...]}.
  static std::unique_ptr<BpeTokenizer> from_json(const std::string& json_text);
  // Learns merges from lines of text.
  static std::unique_ptr<BpeTokenizer> learn(const std::vector<std::string>& lines, const BpeLearnParams& params);
  // Learns merges from text files read line by line (never held whole in memory); an Error names a file that
  // cannot be opened or read.
  static std::unique_ptr<BpeTokenizer> learn_files(const std::vector<std::string>& paths, const BpeLearnParams& params);
  // From PREFIX.vocab and PREFIX.merges on disk.
  static std::unique_ptr<BpeTokenizer> load(const std::string& prefix);
  ~BpeTokenizer();
  BpeTokenizer(const BpeTokenizer&) = delete;
  BpeTokenizer& operator=(const BpeTokenizer&) = delete;

  BpeEncoding encode(const std::string& text) const;
  // Throws Error naming the id when one is outside the vocabulary.
  std::string decode(const std::vector<int>& ids) const;
  // Pieces (as encode() gives them) back to text; an unknown piece is an Error naming it.
  std::string decode_pieces(const std::vector<std::string>& pieces) const;
  // Writes PREFIX.vocab and PREFIX.merges.
  void save(const std::string& prefix) const;
  std::size_t vocab_size() const;
  std::size_t num_merges() const;
  std::string to_json() const;

 private:
  struct Impl;
  explicit BpeTokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The sentiment models' word tokenizer (text/words.h): lowercased, Penn Treebank conventions as in SST-2
// ("It's fine." → it 's fine .). Any bytes are accepted (ill-formed UTF-8 becomes U+FFFD).
std::vector<std::string> tokenize_words(const std::string& text);

}  // namespace attnlens::api
