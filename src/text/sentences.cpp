#include "text/sentences.h"

#include <algorithm>
#include <iterator>
#include <string>

#include "text/unicode.h"
#include "text/utf8.h"

namespace attnlens::text {

namespace {

using unicode::Cat;

// Words that end with a full stop without ending a sentence (compared lower-case, without the stop); sorted.
constexpr std::string_view kAbbreviations[] = {
    "abb", "abs", "aug", "bd",  "bspw", "bzw", "ca",  "dez",  "dr",  "etc", "evtl", "feb", "fr",  "frl",
    "geb", "gest", "ggf", "hr", "hrn",  "inkl", "jan", "jh",  "jhd", "jr",  "kap",  "max", "min", "mio",
    "mr",  "mrd", "mrs", "ms",  "nov",  "nr",  "okt", "prof", "sep", "sept", "sr",  "st",   "std", "str",
    "tel", "usw", "vgl", "vs",  "zzgl"};

bool is_stop(char32_t c) { return c == '.' || c == '!' || c == '?' || c == 0x2026; }
bool is_closer(char32_t c) {
  return c == '"' || c == '\'' || c == 0x201C || c == 0x201D || c == 0x2018 || c == 0x2019 || c == 0xBB ||
         c == 0xAB || c == ')' || c == ']';
}
bool starts_sentence(char32_t c) {
  return unicode::info(c).cat == Cat::kUpper || c == 0x201E || c == 0x201C || c == '"' || c == 0x201A ||
         c == 0x2018 || c == '\'' || c == 0xAB || c == 0xBB;
}
bool is_opening(char32_t c) {
  const Cat cat = unicode::info(c).cat;
  return cat == Cat::kOpen || cat == Cat::kInitial || c == '"' || c == '\'' || c == 0x201E || c == 0x201A;
}

// Whether a single "." after cps[w, e) (the word before it) does not end a sentence.
bool keeps_sentence(const std::u32string& cps, std::size_t w, std::size_t e) {
  while (w < e && is_opening(cps[w])) ++w;
  if (w == e) return false;
  bool number = true;
  std::string lower;
  for (std::size_t k = w; k < e; ++k) {
    const char32_t c = cps[k];
    if (c == '.') return true;
    number = number && unicode::info(c).cat == Cat::kNumber;
    const char32_t l = unicode::to_lower(c);
    lower.push_back(l < 0x80 ? static_cast<char>(l) : '\x7F');  // no abbreviation has a non-ASCII letter
  }
  if (number) return true;
  if (e - w == 1 && unicode::is_letter(unicode::info(cps[w]).cat)) return true;
  return std::binary_search(std::begin(kAbbreviations), std::end(kAbbreviations), std::string_view(lower));
}

struct Cut {
  std::size_t end, next;  // code point indices: end of the sentence before, start of the next
};

// Cuts after sentence-final punctuation, in order.
std::vector<Cut> stop_cuts(const std::u32string& cps) {
  std::vector<Cut> cuts;
  const std::size_t n = cps.size();
  for (std::size_t i = 0; i < n;) {
    if (!is_stop(cps[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < n && is_stop(cps[j])) ++j;
    std::size_t k = j;
    while (k < n && is_closer(cps[k])) ++k;
    std::size_t s = k;
    while (s < n && unicode::is_space(cps[s])) ++s;
    if (s == k || s == n || !starts_sentence(cps[s])) {
      i = j;
      continue;
    }
    std::size_t w = i;
    while (w > 0 && !unicode::is_space(cps[w - 1])) --w;
    if (!(j == i + 1 && cps[i] == '.' && keeps_sentence(cps, w, i))) cuts.push_back({k, s});
    i = s;
  }
  return cuts;
}

// Cuts at blank lines (\r?\n, white space other than \r \n, \r?\n), in order.
std::vector<Cut> blank_line_cuts(const std::u32string& cps) {
  std::vector<Cut> cuts;
  const std::size_t n = cps.size();
  auto line_break = [&](std::size_t p) -> std::size_t {  // length of \r?\n at p, or 0
    if (p < n && cps[p] == '\n') return 1;
    if (p + 1 < n && cps[p] == '\r' && cps[p + 1] == '\n') return 2;
    return 0;
  };
  for (std::size_t p = 0; p < n;) {
    const std::size_t a = line_break(p);
    if (a == 0) {
      ++p;
      continue;
    }
    std::size_t q = p + a;
    while (q < n && unicode::is_space(cps[q]) && cps[q] != '\r' && cps[q] != '\n') ++q;
    const std::size_t b = line_break(q);
    if (b == 0) {
      ++p;
      continue;
    }
    cuts.push_back({p, q + b});
    p = q + b;
  }
  return cuts;
}

}  // namespace

std::vector<TextSpan> split_sentences(std::string_view text) {
  std::vector<std::size_t> at;
  const std::u32string cps = decode_utf8(text, &at);
  const std::vector<Cut> stops = stop_cuts(cps), blanks = blank_line_cuts(cps);
  std::vector<Cut> cuts;
  cuts.reserve(stops.size() + blanks.size());
  // Ordered by end; on a tie the stop's cut first.
  std::merge(stops.begin(), stops.end(), blanks.begin(), blanks.end(), std::back_inserter(cuts),
             [](const Cut& x, const Cut& y) { return x.end < y.end; });
  std::vector<TextSpan> spans;
  auto push = [&](std::size_t a, std::size_t b) {
    while (a < b && unicode::is_space(cps[a])) ++a;
    while (b > a && unicode::is_space(cps[b - 1])) --b;
    if (b > a) spans.push_back({at[a], at[b]});
  };
  std::size_t from = 0;
  for (const Cut& c : cuts) {
    if (c.end < from) continue;
    push(from, c.end);
    from = c.next;
  }
  push(from, cps.size());
  return spans;
}

}  // namespace attnlens::text
