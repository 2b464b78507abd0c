// Byte-safe BPE tokenizer (Sennrich et al. 2016, "Neural Machine Translation of Rare Words with Subword Units"),
// with SentencePiece's whitespace marker (Kudo & Richardson 2018) so that decoding restores spacing exactly.
// One implementation serves training (through attnlens-cli) and inference (native and WASM).
//
// Pipeline for a text:
//   1. bytes → code points; ill-formed UTF-8 becomes U+FFFD (text/utf8.h), so any byte string is accepted;
//   2. normalise: every run of white space/control characters becomes one space, leading and trailing runs are
//      dropped; a literal U+2581 in the input is reserved as the marker and is replaced by '_';
//   3. pre-tokenise: runs of word characters (letters of any script incl. umlauts/ß, digits, marks) form one
//      pre-token, every punctuation/symbol character is a pre-token of its own; a pre-token that follows a space —
//      and the first one of the text (SentencePiece's "dummy prefix", so "Hund" is the same token at the start
//      and in the middle of a sentence) — starts with "▁" (U+2581);
//   4. each pre-token is split into characters and the learned merges are applied by rank (lowest rank first,
//      leftmost first among equal ranks — the standard BPE application); characters outside the vocabulary
//      become <unk> (id 1, piece string "<unk>");
//   5. decode: concatenate pieces, "▁" → space, drop the one leading space; <pad>, <s>, </s> decode to nothing
//      and <unk> to the visible text "<unk>".
// For whitespace-normalised text without unknown characters, decode(encode(t)) == t exactly.
//
// Learning: count pre-tokens over the corpus; the initial vocabulary is the set of characters occurring at least
// min_frequency times (ordered by frequency desc, then code point), after the special tokens <pad>=0, <unk>=1,
// <s>=2, </s>=3. Then repeatedly merge the most frequent adjacent pair (ties: the lexicographically smallest
// (left, right) pair of UTF-8 strings), counting pairs incrementally: only words that contain the merged pair are
// re-counted. Learning stops after `num_merges` merges or when no pair occurs at least twice.
//
// Files: PREFIX.vocab holds one piece per line (line number = id); PREFIX.merges holds one "left right" merge per
// line in rank order. Pieces never contain white space, control characters or any other character that Python's
// str.splitlines() treats as a line break (U+001C..U+001F, U+0085, U+2028, U+2029): step 2 normalises them away.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace attnlens::text {

inline constexpr const char* kSpaceMarker = "\xE2\x96\x81";  // U+2581 LOWER ONE EIGHTH BLOCK "▁"
inline constexpr int kPadId = 0;
inline constexpr int kUnkId = 1;
inline constexpr int kBosId = 2;
inline constexpr int kEosId = 3;
inline constexpr int kNumSpecialTokens = 4;
inline const char* const kSpecialTokens[kNumSpecialTokens] = {"<pad>", "<unk>", "<s>", "</s>"};

// Steps 1–3 above: the pre-tokens of `text` as UTF-8 strings, markers included.
std::vector<std::string> bpe_pretokenize(std::string_view text);

struct BpeLearnOptions {
  int num_merges = 10000;
  int min_frequency = 1;  // characters seen fewer times are left out of the vocabulary (→ <unk>)
};

class BpeTokenizer {
 public:
  BpeTokenizer() = default;

  // Learns from lines of text (each element is one sentence/line).
  static BpeTokenizer learn(const std::vector<std::string>& lines, const BpeLearnOptions& options);
  // Learns from streams read line by line (the CLI passes files).
  static BpeTokenizer learn(std::vector<std::istream*> inputs, const BpeLearnOptions& options);

  // Builds a tokenizer from its vocabulary (id order) and merges (rank order). Checks that the specials come
  // first, that pieces are unique and non-empty, that every merge's parts and result are in the vocabulary, and
  // that the merges fit the vocabulary: every piece longer than one character is the result of some merge (as in
  // every learned model), so an empty or foreign merges file is refused instead of encoding into characters.
  // `source` names where the data came from in error messages; `merges_source`, when given, names the merges
  // file in the last check.
  static BpeTokenizer from_pieces(std::vector<std::string> vocab, std::vector<std::pair<std::string, std::string>> merges,
                                  const std::string& source = "BPE model", const std::string& merges_source = "");
  // The file format above, given as the files' contents (the WASM build receives bytes, not paths).
  static BpeTokenizer from_text(std::string_view vocab_text, std::string_view merges_text,
                                const std::string& source = "BPE model", const std::string& merges_source = "");
  // PREFIX.vocab + PREFIX.merges.
  static BpeTokenizer load(const std::string& prefix);
  // JSON form, for bundles: {"type": "bpe", "vocab": [piece, ...], "merges": ["left right", ...]}.
  static BpeTokenizer from_json(const nlohmann::json& j, const std::string& source = "tokenizer JSON");
  nlohmann::json to_json() const;

  void save(const std::string& prefix) const;
  std::string vocab_text() const;   // contents of PREFIX.vocab
  std::string merges_text() const;  // contents of PREFIX.merges

  std::vector<int> encode(std::string_view text) const;
  std::vector<std::string> encode_pieces(std::string_view text) const;
  // ids → text; throws Error for an id outside the vocabulary.
  std::string decode(const std::vector<int>& ids) const;
  // pieces → text; any string is accepted (pieces outside the vocabulary are copied as they are).
  std::string decode_pieces(const std::vector<std::string>& pieces) const;

  std::size_t vocab_size() const { return vocab_.size(); }
  std::size_t num_merges() const { return merges_.size(); }
  const std::string& piece(int id) const;  // throws Error when out of range
  int id_of(const std::string& piece) const;  // kUnkId when absent
  const std::vector<std::string>& vocab() const { return vocab_; }
  const std::vector<std::pair<std::string, std::string>>& merges() const { return merges_; }

 private:
  struct MergeRule {
    int rank;
    int result;
  };
  static std::uint64_t pair_key(int left, int right) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) | static_cast<std::uint32_t>(right);
  }
  void encode_pretoken(std::u32string_view pretoken, std::vector<int>& out) const;

  std::vector<std::string> vocab_;
  std::unordered_map<std::string, int> piece_to_id_;
  std::vector<std::pair<std::string, std::string>> merges_;
  std::unordered_map<std::uint64_t, MergeRule> merge_rules_;  // (left id, right id) → rank, result id
  std::unordered_map<char32_t, int> char_to_id_;               // single-character pieces
};

}  // namespace attnlens::text
