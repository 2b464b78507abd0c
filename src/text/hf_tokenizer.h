// The Hugging Face tokenizers of converted checkpoints (docs/DESIGN.md §7.4): WordPiece (BERT, DistilBERT),
// byte-level BPE (GPT-2) and SentencePiece unigram (MarianMT), written here and run from a TokenizerSpec that
// api/hf_tokenizer_file.h fills from a tokenizer.json.
//
// encode() follows the pipeline of the `tokenizers` library as Tokenizers.js (@huggingface/tokenizers, the
// reference of the tests) runs it:
//   1. bytes → code points (ill-formed UTF-8 becomes U+FFFD, text/utf8.h); every character keeps the input bytes it
//      came from (hf_unicode.h AlignedText), so tokens get byte offsets into the caller's string;
//   2. added tokens whose `normalized` is false are cut out of the raw text (longest match, left to right); each
//      piece between them is normalised (NormalizerStep, in order), then added tokens with `normalized` true are
//      cut out of the normalised text;
//   3. the rest is pre-tokenised (PreTokenizerStep) into words and each word goes through the model:
//      WordPiece — greedy longest match from the left, continuation pieces with "##", a word longer than
//        max_input_chars_per_word characters or with an unmatched rest becomes the unknown token;
//      BPE — the word's characters (for ByteLevel: one character per UTF-8 byte, GPT-2's byte → character map)
//        merged pair by pair, lowest merge rank first, leftmost first among equal ranks;
//      Unigram — the best segmentation by the sum of piece scores (Viterbi over the UTF-8 bytes, as SentencePiece:
//        the first of equal scores kept; a character no piece covers is the unknown piece with score
//        min score − 10; consecutive unknown characters fuse into one unknown token);
//   4. tokens → ids (added tokens first, then the model's vocabulary, else the unknown id); with `piece_ids`
//      (MarianMT) the pieces map through that vocabulary (vocab.json) instead;
//   5. with add_special_tokens, the template's ids go around the sequence ([CLS] A [SEP]; A </s> for MarianMT).
//
// Normalisers: BertNormalizer (clean_text, handle_chinese_chars, strip_accents, lowercase), Lowercase,
// StripAccents, NFD, Strip, Replace (a literal, or one character repeated: "c{n,}", "c+"), Prepend, Precompiled
// (SentencePiece's charsmap: a double-array trie over UTF-8 bytes, longest prefix replaced, as spm's normalizer).
// Pre-tokenisers: BertPreTokenizer, ByteLevel (GPT-2's pattern over Unicode letters, numbers and JavaScript's white
// space), Metaspace, WhitespaceSplit. Decoders: WordPiece, ByteLevel, Metaspace.
//
// Limits: encode() accepts texts of up to kMaxInputBytes bytes (longer: Error), time O(n · longest piece) and
// memory O(n) for every model (BPE merges with a heap, WordPiece stops at max_input_chars_per_word).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "text/hf_unicode.h"

namespace attnlens::text {

inline constexpr std::size_t kMaxInputBytes = std::size_t{8} << 20;

struct HfAddedToken {
  int id = -1;
  std::string content;
  bool special = false, normalized = false, lstrip = false, rstrip = false;
};

struct NormalizerStep {
  enum class Kind { kBert, kLowercase, kStripAccents, kNfd, kStrip, kReplace, kPrepend, kPrecompiled };
  Kind kind = Kind::kBert;
  bool clean_text = true, handle_chinese_chars = true, lowercase = true;
  int strip_accents = -1;        // BertNormalizer: -1 null (follows lowercase), 0 false, 1 true
  bool left = false, right = false;  // Strip
  std::string pattern;           // Replace: the literal, or the repeated character when min_repeat > 0
  int min_repeat = 0;
  std::string content;           // Replace's replacement, Prepend's text
  std::string charsmap;          // Precompiled: the decoded precompiled_charsmap bytes
};

struct PreTokenizerStep {
  enum class Kind { kBert, kByteLevel, kMetaspace, kWhitespaceSplit };
  Kind kind = Kind::kBert;
  bool add_prefix_space = false, use_regex = true;  // ByteLevel
  std::string replacement = "\xE2\x96\x81";         // Metaspace
  enum class Prepend { kAlways, kFirst, kNever };
  Prepend prepend = Prepend::kAlways;               // Metaspace's prepend_scheme (first: the first section only)
};

struct ModelSpec {
  enum class Kind { kWordPiece, kBpe, kUnigram };
  Kind kind = Kind::kWordPiece;
  std::vector<std::pair<std::string, int>> vocab;  // token, id
  std::vector<float> scores;                       // Unigram: per vocab entry
  std::vector<bool> control;                       // Unigram: pieces never matched in text (SentencePiece's
                                                   // control and unknown symbols: tokenizer.json's special tokens)
  std::string unk_token;                           // WordPiece, BPE ("" none)
  int unk_id = -1;                                 // Unigram
  std::string continuing_subword_prefix = "##";
  std::size_t max_input_chars_per_word = 100;
  std::vector<std::pair<std::string, std::string>> merges;  // BPE, in rank order
  std::string end_of_word_suffix;
  bool byte_fallback = false, ignore_merges = false, fuse_unk = false;
};

struct DecoderStep {
  enum class Kind { kWordPiece, kByteLevel, kMetaspace };
  Kind kind = Kind::kWordPiece;
  std::string prefix = "##";
  bool cleanup = true;
  std::string replacement = "\xE2\x96\x81";
};

// Everything parsed from tokenizer.json (api/hf_tokenizer_file.h).
struct TokenizerSpec {
  std::string name = "tokenizer.json";  // for messages
  std::vector<HfAddedToken> added_tokens;
  std::vector<NormalizerStep> normalizers;
  std::vector<PreTokenizerStep> pre_tokenizers;
  ModelSpec model;
  std::vector<int> template_before, template_after;  // special ids around sequence A
  std::vector<DecoderStep> decoders;
  bool clean_up_tokenization_spaces = true;
  // MarianTokenizer: the model's pieces → ids through vocab.json; a piece not in it gets piece_unk_id.
  std::vector<std::pair<std::string, int>> piece_ids;
  int piece_unk_id = -1;
};

struct Encoding {
  std::vector<int> ids;
  std::vector<std::string> tokens;
  std::vector<std::pair<std::size_t, std::size_t>> offsets;  // bytes of the input; specials (0,0)
};

class HfTokenizer {
 public:
  explicit HfTokenizer(TokenizerSpec spec);
  Encoding encode(std::string_view text, bool add_special_tokens = true) const;
  std::string decode(const std::vector<int>& ids, bool skip_special_tokens = true) const;
  int token_to_id(std::string_view token) const;  // -1: none
  std::string id_to_token(int id) const;          // "" for an id outside the vocabulary
  std::size_t vocab_size() const;

 private:
  struct Piece {
    std::string token;
    std::uint32_t begin = 0, end = 0;
  };
  using Text = hf_unicode::AlignedText;
  std::vector<Text> split_added(const Text& text, bool normalized, std::vector<int>* added) const;
  Text normalize(Text text) const;
  std::vector<Text> pre_tokenize(const Text& text, bool first_section) const;
  void run_model(const Text& word, std::vector<Piece>& out) const;
  void wordpiece(const Text& word, std::vector<Piece>& out) const;
  void bpe(const Text& word, std::vector<Piece>& out) const;
  void unigram(const Text& word, std::vector<Piece>& out) const;
  int piece_id(const std::string& token) const;

  TokenizerSpec spec_;
  std::unordered_map<std::string, int> vocab_;   // model token → id (added tokens included)
  std::unordered_map<int, std::string> by_id_;   // id → token (model and added; for MarianMT the vocab.json side)
  std::unordered_map<std::string, int> added_;   // added token content → index in spec_.added_tokens
  std::unordered_map<std::string, int> ranks_;   // BPE: "<len>:<left><right>" → rank
  std::unordered_map<std::string, int> pieces_;  // MarianMT: vocab.json
  std::unordered_map<std::string, int> unigram_; // Unigram candidates: piece → index into spec_.model.vocab
  std::size_t max_piece_bytes_ = 0;
  float unk_score_ = 0;
  int unk_id_ = -1;
};

}  // namespace attnlens::text
