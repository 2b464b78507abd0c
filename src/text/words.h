// Word tokenizer for the sentiment models: turns raw user text into the form of the SST-2 GLUE data (Socher et al.
// 2013), which is lowercased and tokenized with Penn Treebank conventions (the PTB tokenizer sed script,
// R. MacIntyre 1995), e.g. "It's a charming, often affecting journey." → it 's a charming , often affecting journey .
//
// Rules, in order (each matches what train.tsv/dev.tsv contain):
//   1. ill-formed UTF-8 becomes U+FFFD; letters are lowercased (ASCII, Latin-1, Latin Extended-A, Greek,
//      Cyrillic — the engine carries no full Unicode case table);
//   2. typographic forms are mapped to the ASCII ones the data uses: ‘ ‛ → `, ’ ‚ ′ → ', “ ” „ ‟ ″ « » → ",
//      – — ― → " -- ", … → " ... ";
//   3. white space separates chunks; inside a chunk these become tokens of their own:
//      , and : (except between digits: "10,000", "2:30"), & (except between letters: "r&b"), runs of ? and !
//      ("?!?"), ; ( ) [ ] { } $ % # @ + = < > ^ | ~ \,
//      every other punctuation/symbol/emoji character (text/utf8.h classes), runs of "*" ("***"),
//      runs of three or more dots → "...", runs of two or more hyphens → "--", runs of backquotes ("`", "``");
//      a double quote becomes `` when it opens and '' when it closes (alternating through the text, PTB style);
//      two apostrophes '' are a closing double quote;
//   4. words keep hyphens, slashes, dots and apostrophes ("old-fashioned", "anti-", "and/or", "u.s.", "o'fallon");
//   5. a final period is split off ("journey." → journey .) unless the word is an abbreviation: it has an inner
//      dot ("u.s.", "e.t."), is a single letter ("j."), or is one of mr mrs ms dr jr sr st vs etc inc no co corp
//      ltd prof gen mt ft vol ave sept jan feb mar apr jun jul aug oct nov dec wash al bros;
//   6. clitics are split off the end: n't ('can't' → ca n't, "won't" → wo n't, "doesn't" → does n't), 's 'm 'd
//      'll 're 've; "cannot" → can not, "gonna" → gon na, "gotta" → got ta, "wanna" → wan na;
//   7. a leading apostrophe opens a quote (` + word) unless a digit follows ("'70s") or the word is 'em 'til 'n
//      'cause 'tis 'twas or a clitic standing alone ("it 's"); a trailing apostrophe is split off as ' ("actors'" → actors ') except in "ol'".
// Output tokens contain no white space. Empty or all-space input gives no tokens.
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace attnlens::text {

// Every step is linear in the text: no input (long runs of one character, apostrophes, combining marks) costs more.
// With `max_tokens`, tokenization stops once that many tokens are produced and returns exactly the first
// `max_tokens` tokens of the full result (callers that truncate anyway need not tokenize a whole book).
std::vector<std::string> tokenize_words(std::string_view text,
                                        std::size_t max_tokens = std::numeric_limits<std::size_t>::max());

// Lowercases the code points covered by rule 1 above; others are returned unchanged.
char32_t to_lower(char32_t cp);

// The captioners' word split (models/training/captioning/text.py tokenize: lowercase, then the regex \w+|[^\w\s]):
// ill-formed UTF-8 becomes U+FFFD, letters are lowercased as to_lower() does, then every run of word characters
// (class kWord of text/utf8.h, and '_') is one token and every other character that is not white space (kPunct) is
// a token of its own: "A dog's ball." → a dog ' s ball . Identical to Python's regex for ASCII text. At most
// `max_tokens` tokens are returned (the first ones).
std::vector<std::string> tokenize_caption(std::string_view text,
                                          std::size_t max_tokens = std::numeric_limits<std::size_t>::max());

// Word vocabulary: token → id, with an unknown token for everything else. File form: one token per line, line
// number = id (the same as the BPE .vocab files); the unknown token must be present.
class WordVocab {
 public:
  WordVocab() = default;
  static WordVocab from_tokens(std::vector<std::string> tokens, const std::string& unk_token = "<unk>",
                               const std::string& source = "word vocabulary");
  static WordVocab from_text(std::string_view text, const std::string& unk_token = "<unk>",
                             const std::string& source = "word vocabulary");
  static WordVocab load(const std::string& path, const std::string& unk_token = "<unk>");
  // {"type": "words", "tokens": [...], "unk": "<unk>"}.
  static WordVocab from_json(const nlohmann::json& j, const std::string& source = "vocabulary JSON");
  nlohmann::json to_json() const;

  int id_of(const std::string& token) const;  // unk_id() when absent
  std::vector<int> encode(const std::vector<std::string>& tokens) const;
  // The tokens as the model sees them: out-of-vocabulary ones replaced by the unknown token (visible to users).
  std::vector<std::string> visible_tokens(const std::vector<std::string>& tokens) const;
  const std::string& token(int id) const;  // throws Error when out of range
  int unk_id() const { return unk_id_; }
  std::size_t size() const { return tokens_.size(); }
  const std::vector<std::string>& tokens() const { return tokens_; }

 private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int> ids_;
  int unk_id_ = -1;
};

}  // namespace attnlens::text
