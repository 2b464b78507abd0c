#include "text/words.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common.h"
#include "text/utf8.h"

namespace attnlens::text {

char32_t to_lower(char32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 0x20 : c;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 0x20;  // Latin-1: À..Þ except ×
  if (c >= 0x100 && c <= 0x17F) {                              // Latin Extended-A: mostly upper/lower pairs
    if (c == 0x130) return U'i';                               // İ
    if (c == 0x178) return 0xFF;                               // Ÿ → ÿ
    if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) return (c % 2 == 1) ? c + 1 : c;
    if (c == 0x131 || c == 0x138 || c == 0x149 || c == 0x17F) return c;  // ı ĸ ŉ ſ have no upper/lower pair here
    return (c % 2 == 0) ? c + 1 : c;
  }
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 0x20;  // Greek capitals
  if (c >= 0x410 && c <= 0x42F) return c + 0x20;                // Cyrillic А..Я
  if (c >= 0x400 && c <= 0x40F) return c + 0x50;                // Cyrillic Ѐ..Џ
  return c;
}

namespace {

bool is_digit(char32_t c) { return c >= U'0' && c <= U'9'; }

// Step 2: typographic → ASCII forms; returns the replacement (possibly with spaces) or an empty string to keep c.
const char32_t* typographic(char32_t c) {
  switch (c) {
    case 0x2018: case 0x201B: return U"`";  // left single quote opens, as in PTB
    case 0x2019: case 0x201A: case 0x2032: return U"'";
    case 0x201C: case 0x201D: case 0x201E: case 0x201F: case 0x2033: case 0xAB: case 0xBB: return U"\"";
    case 0x2013: case 0x2014: case 0x2015: return U" -- ";
    case 0x2026: return U" ... ";
    default: return nullptr;
  }
}

bool always_separate(char32_t c) {
  switch (c) {
    case U';': case U'(': case U')': case U'[': case U']': case U'{': case U'}':
    case U'$': case U'%': case U'#': case U'@': case U'+': case U'=': case U'<': case U'>':
    case U'^': case U'|': case U'~': case U'\\':
      return true;
    default:
      break;
  }
  if (c < 0x80) return false;  // the remaining ASCII punctuation has its own rules below
  return classify(c) == CharClass::kPunct;
}

const std::vector<std::string>& abbreviations() {
  static const std::vector<std::string> list = {"mr", "mrs", "ms", "dr", "jr", "sr", "st", "vs", "etc", "inc",
                                                "no", "co", "corp", "ltd", "prof", "gen", "mt", "ft", "vol",
                                                "ave", "sept", "jan", "feb", "mar", "apr", "jun", "jul", "aug",
                                                "oct", "nov", "dec", "wash", "al", "bros"};
  return list;
}

bool contains(const std::vector<std::string>& list, const std::string& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

class Tokenizer {
 public:
  explicit Tokenizer(std::size_t max_tokens) : max_tokens_(max_tokens) {}

  std::vector<std::string> run(std::string_view text) {
    // Steps 1–2.
    std::u32string cps;
    for (char32_t c : decode_utf8(text)) {
      if (const char32_t* rep = typographic(c)) {
        cps += rep;
      } else {
        cps.push_back(to_lower(c));
      }
    }
    // Step 3: chunks separated by white space.
    std::size_t i = 0;
    while (i < cps.size() && !full()) {
      while (i < cps.size() && classify(cps[i]) == CharClass::kSpace) ++i;
      std::size_t j = i;
      while (j < cps.size() && classify(cps[j]) != CharClass::kSpace) ++j;
      if (j > i) chunk(std::u32string_view(cps).substr(i, j - i));
      i = j;
    }
    if (out_.size() > max_tokens_) out_.resize(max_tokens_);  // the last word may have split into several
    return std::move(out_);
  }

 private:
  bool full() const { return out_.size() >= max_tokens_; }

  void chunk(std::u32string_view c) {
    std::u32string current;
    auto flush = [&] {
      if (!current.empty()) emit_word(encode_utf8(current));
      current.clear();
    };
    // Only called where the run is then consumed whole, so every character is scanned O(1) times.
    auto run_length = [&](std::size_t i, char32_t ch) {
      std::size_t n = 0;
      while (i + n < c.size() && c[i + n] == ch) ++n;
      return n;
    };
    // '' (exactly two apostrophes from here on) is PTB's closing double quote; looks at three characters at most,
    // so a long run of apostrophes stays linear.
    auto closing_quote = [&](std::size_t i) {
      return i + 1 < c.size() && c[i + 1] == U'\'' && !(i + 2 < c.size() && c[i + 2] == U'\'');
    };
    std::size_t i = 0;
    while (i < c.size() && !full()) {
      const char32_t ch = c[i];
      const bool digit_before = i > 0 && is_digit(c[i - 1]);
      const bool digit_after = i + 1 < c.size() && is_digit(c[i + 1]);
      if ((ch == U',' || ch == U':') && !(digit_before && digit_after)) {
        flush();
        out_.push_back(ch == U',' ? "," : ":");
        ++i;
      } else if (ch == U'"') {
        flush();
        out_.push_back(quote_open_ ? "''" : "``");
        quote_open_ = !quote_open_;
        ++i;
      } else if (ch == U'\'' && closing_quote(i)) {
        flush();
        out_.push_back("''");
        quote_open_ = false;
        i += 2;
      } else if (ch == U'.' && i + 2 < c.size() && c[i + 1] == U'.' && c[i + 2] == U'.') {
        flush();
        out_.push_back("...");
        i += run_length(i, U'.');
      } else if (ch == U'-' && i + 1 < c.size() && c[i + 1] == U'-') {
        flush();
        out_.push_back("--");
        i += run_length(i, U'-');
      } else if (ch == U'*' || ch == U'`') {
        flush();
        const std::size_t n = run_length(i, ch);
        out_.push_back(std::string(n, static_cast<char>(ch)));
        i += n;
      } else if (ch == U'?' || ch == U'!') {  // "?!?" stays one token, as in the data
        flush();
        std::string run;
        for (; i < c.size() && (c[i] == U'?' || c[i] == U'!'); ++i) run += static_cast<char>(c[i]);
        out_.push_back(run);
      } else if (ch == U'&' && !(i > 0 && i + 1 < c.size() && classify(c[i - 1]) == CharClass::kWord &&
                                 classify(c[i + 1]) == CharClass::kWord)) {  // "r&b" stays a word
        flush();
        out_.push_back("&");
        ++i;
      } else if (always_separate(ch)) {
        flush();
        std::string s;
        append_utf8(s, ch);
        out_.push_back(s);
        ++i;
      } else {
        current.push_back(ch);
        ++i;
      }
    }
    flush();
  }

  // Steps 4–7 on one word (no white space, no separable punctuation; may hold ' . - / and letters/digits).
  void emit_word(std::string w) {
    if (w == "'") {  // a free-standing apostrophe closes a quote in PTB text
      out_.push_back("'");
      return;
    }
    std::vector<std::string> after;  // tokens split off the end, in reverse order
    // Step 7 (leading apostrophe) and step 4 (leading hyphen). The apostrophes are counted first and erased once:
    // erasing them one by one would make a word of n apostrophes cost O(n²).
    std::size_t lead = 0;
    while (lead < w.size() && w[lead] == '\'') {
      static const std::vector<std::string> kept = {"'em", "'til", "'n", "'cause", "'tis", "'twas", "'n'",
                                                    "'s", "'m", "'d", "'ll", "'re", "'ve"};
      const std::string_view rest = std::string_view(w).substr(lead);
      if (rest.size() > 1 && (is_digit(static_cast<unsigned char>(rest[1])) ||
                              std::find(kept.begin(), kept.end(), rest) != kept.end()))
        break;
      out_.push_back("`");
      ++lead;
    }
    w.erase(0, lead);
    // Trailing hyphen, apostrophe and period, in any order ("actors'." → actors ' .).
    bool changed = true;
    while (changed && !w.empty()) {
      changed = false;
      if (w == "-") {
        after.push_back("-");
        w.clear();
      } else if (w.back() == '\'' && w != "ol'" && w != "'n'" && w != "'") {
        after.push_back("'");
        w.pop_back();
        changed = true;
      } else if (w.back() == '.' && !is_abbreviation(w)) {
        after.push_back(".");
        w.pop_back();
        changed = true;
      }
    }
    if (w == "'") {
      out_.push_back("'");
      w.clear();
    }
    if (!w.empty()) split_clitics(w);
    for (auto it = after.rbegin(); it != after.rend(); ++it) out_.push_back(*it);
  }

  static bool is_abbreviation(const std::string& w) {
    const std::string stem = w.substr(0, w.size() - 1);  // without the final dot
    if (stem.empty()) return false;
    if (stem.find('.') != std::string::npos) return true;  // u.s. e.t. j.k.
    const std::u32string cps = decode_utf8(stem);
    if (cps.size() == 1 && !is_digit(cps[0])) return true;  // j. x.
    return contains(abbreviations(), stem);
  }

  void split_clitics(const std::string& w) {
    static const std::vector<std::pair<std::string, std::pair<std::string, std::string>>> whole = {
        {"cannot", {"can", "not"}}, {"gonna", {"gon", "na"}}, {"gotta", {"got", "ta"}},
        {"wanna", {"wan", "na"}},   {"gimme", {"gim", "me"}}, {"lemme", {"lem", "me"}}};
    for (const auto& [word, parts] : whole) {
      if (w == word) {
        out_.push_back(parts.first);
        out_.push_back(parts.second);
        return;
      }
    }
    if (w.size() > 3 && ends_with(w, "n't")) {
      out_.push_back(w.substr(0, w.size() - 3));
      out_.push_back("n't");
      return;
    }
    for (const char* suffix : {"'s", "'m", "'d", "'ll", "'re", "'ve"}) {
      const std::string s = suffix;
      if (w.size() > s.size() && ends_with(w, s)) {
        out_.push_back(w.substr(0, w.size() - s.size()));
        out_.push_back(s);
        return;
      }
    }
    out_.push_back(w);
  }

  std::size_t max_tokens_;
  std::vector<std::string> out_;
  bool quote_open_ = false;
};


}  // namespace

std::vector<std::string> tokenize_words(std::string_view text, std::size_t max_tokens) {
  return Tokenizer(max_tokens).run(text);
}

WordVocab WordVocab::from_tokens(std::vector<std::string> tokens, const std::string& unk_token,
                                 const std::string& source) {
  WordVocab v;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    require(!t.empty(), source + ": entry " + std::to_string(i) + " is empty");
    require(sanitize_utf8(t) == t, source + ": entry " + std::to_string(i) + " is not valid UTF-8");
    const bool inserted = v.ids_.emplace(t, static_cast<int>(i)).second;
    require(inserted, source + ": token '" + t + "' appears twice (ids " + std::to_string(v.ids_[t]) + " and " +
                          std::to_string(i) + ")");
  }
  auto it = v.ids_.find(unk_token);
  require(it != v.ids_.end(), source + ": the unknown token '" + unk_token + "' is missing");
  v.unk_id_ = it->second;
  v.tokens_ = std::move(tokens);
  return v;
}

WordVocab WordVocab::from_text(std::string_view text, const std::string& unk_token, const std::string& source) {
  const auto lines = split_lines(text);
  return from_tokens(std::vector<std::string>(lines.begin(), lines.end()), unk_token, source);
}

WordVocab WordVocab::load(const std::string& path, const std::string& unk_token) {
  std::ifstream in(path, std::ios::binary);
  require(static_cast<bool>(in), "cannot open '" + path + "' for reading (does it exist?)");
  std::ostringstream ss;
  ss << in.rdbuf();
  return from_text(ss.str(), unk_token, "word vocabulary '" + path + "'");
}

WordVocab WordVocab::from_json(const nlohmann::json& j, const std::string& source) {
  require(j.is_object() && j.contains("type") && j["type"] == "words",
          source + ": expected {\"type\": \"words\", \"tokens\": [...], \"unk\": \"<unk>\"}");
  require(j.contains("tokens") && j["tokens"].is_array(), source + ": \"tokens\" must be an array of strings");
  std::vector<std::string> tokens;
  for (const auto& t : j["tokens"]) {
    require(t.is_string(), source + ": \"tokens\" entry " + std::to_string(tokens.size()) + " is not a string");
    tokens.push_back(t.get<std::string>());
  }
  std::string unk = "<unk>";
  if (j.contains("unk")) {
    require(j["unk"].is_string(), source + ": \"unk\" must be a string");
    unk = j["unk"].get<std::string>();
  }
  return from_tokens(std::move(tokens), unk, source);
}

nlohmann::json WordVocab::to_json() const {
  return nlohmann::json{{"type", "words"}, {"tokens", tokens_}, {"unk", tokens_.at(unk_id_)}};
}

int WordVocab::id_of(const std::string& t) const {
  auto it = ids_.find(t);
  return it == ids_.end() ? unk_id_ : it->second;
}

std::vector<int> WordVocab::encode(const std::vector<std::string>& tokens) const {
  std::vector<int> ids;
  ids.reserve(tokens.size());
  for (const auto& t : tokens) ids.push_back(id_of(t));
  return ids;
}

std::vector<std::string> WordVocab::visible_tokens(const std::vector<std::string>& tokens) const {
  std::vector<std::string> out;
  out.reserve(tokens.size());
  for (const auto& t : tokens) out.push_back(ids_.count(t) ? t : tokens_.at(unk_id_));
  return out;
}

const std::string& WordVocab::token(int id) const {
  require(id >= 0 && static_cast<std::size_t>(id) < tokens_.size(),
          "token id " + std::to_string(id) + " is outside the word vocabulary (size " +
              std::to_string(tokens_.size()) + ")");
  return tokens_[id];
}

std::vector<std::string> tokenize_caption(std::string_view text, std::size_t max_tokens) {
  std::vector<std::string> out;
  std::string word;
  auto flush = [&] {
    if (!word.empty() && out.size() < max_tokens) out.push_back(word);
    word.clear();
  };
  for (const char32_t cp : decode_utf8(text)) {
    if (out.size() >= max_tokens) break;
    const CharClass k = cp == U'_' ? CharClass::kWord : classify(cp);
    if (k == CharClass::kWord) {
      append_utf8(word, to_lower(cp));
      continue;
    }
    flush();
    if (k == CharClass::kPunct && out.size() < max_tokens) {
      std::string p;
      append_utf8(p, cp);
      out.push_back(std::move(p));
    }
  }
  flush();
  return out;
}

}  // namespace attnlens::text
