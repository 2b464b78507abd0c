#include "text/recase.h"

#include <vector>

#include "text/unicode.h"
#include "text/utf8.h"

namespace attnlens::text {

namespace {

using unicode::Cat;

bool is_word_char(char32_t c) {
  const Cat cat = unicode::info(c).cat;
  return unicode::is_letter(cat) || cat == Cat::kMark;
}

// The characters after which a word counts as starting a word (the "initial" test), and those that may precede a
// word in a match (the same plus '-').
bool is_initial_before(char32_t c) {
  const Cat cat = unicode::info(c).cat;
  return unicode::is_space(c) || cat == Cat::kOpen || cat == Cat::kInitial || cat == Cat::kFinal || c == '"' ||
         c == '\'' || c == 0x201E || c == 0x201A || c == 0xAB || c == 0xBB || c == 0xBF || c == 0xA1;
}

// Replaces the code point at [at[k], at[k+1]) of `s` by `to` (same UTF-8 length; ill-formed bytes are never mapped).
void put(std::string& s, const std::vector<std::size_t>& at, std::size_t k, char32_t from, char32_t to) {
  if (to == from) return;
  std::string bytes;
  append_utf8(bytes, to);
  s.replace(at[k], at[k + 1] - at[k], bytes);
}

}  // namespace

std::string restore_case(std::string_view sentence, const std::function<std::size_t(std::string_view)>& pieces) {
  std::vector<std::size_t> at;
  const std::u32string cps = decode_utf8(sentence, &at);
  std::size_t upper = 0, lower = 0;
  for (char32_t c : cps) {
    const unicode::Case k = unicode::info(c).case_kind;
    upper += k == unicode::Case::kUpper;
    lower += k == unicode::Case::kLower;
  }
  const bool all_caps = upper >= 2 && lower == 0;
  if (!all_caps && !(upper == 0 && lower > 0)) return std::string(sentence);
  // Only well-formed characters are mapped (a U+FFFD that stands for ill-formed bytes has no case).
  std::string out(sentence);
  std::u32string base = cps;
  if (all_caps) {
    for (std::size_t k = 0; k < base.size(); ++k) {
      base[k] = unicode::to_lower(cps[k]);
      put(out, at, k, cps[k], base[k]);
    }
  }
  const std::size_t n = base.size();
  bool first = true;
  std::string word_lower, word_capital;
  for (std::size_t p = 0; p < n;) {
    std::size_t q = p;
    while (q < n && (is_initial_before(base[q]) || base[q] == '-')) ++q;
    if (q == n || !is_word_char(base[q])) {
      p = q + 1;  // every start in [p, q] reaches the same q
      continue;
    }
    std::size_t e = q;
    while (e < n && is_word_char(base[e])) ++e;
    const bool initial = q == 0 || is_initial_before(base[q - 1]);
    const char32_t capital = unicode::to_upper(base[q]);
    bool capitalise = first;
    if (!first && initial && capital != base[q]) {
      bool is_lower = true;  // word === lower(word)
      for (std::size_t k = q; k < e && is_lower; ++k) is_lower = unicode::to_lower(base[k]) == base[k];
      if (is_lower) {
        const std::string_view word(out.data() + at[q], at[e] - at[q]);
        word_lower.assign(word);
        word_capital.assign(word);
        std::string head;
        append_utf8(head, capital);
        word_capital.replace(0, head.size(), head);
        capitalise = pieces(word_capital) < pieces(word_lower);
      }
    }
    if (capitalise) put(out, at, q, base[q], capital);
    first = false;
    p = e;
  }
  return out;
}

}  // namespace attnlens::text
