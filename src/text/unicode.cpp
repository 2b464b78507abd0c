#include "text/unicode.h"

#include <algorithm>
#include <cstddef>
#include <iterator>

#include "text/unicode_data.h"
#include "text/utf8.h"

namespace attnlens::text::unicode {

namespace ud = unicode_data;

namespace {

std::size_t utf8_size(char32_t cp) { return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4; }

// Hangul syllables (Unicode §3.12).
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

// The decomposition of `cp` from the table: {first, second} (second 0 for a singleton), or {0, 0} for none.
// `composable` says whether the pair may be composed back into cp.
struct Decomp {
  char32_t first = 0, second = 0;
  bool composable = false;
};

Decomp decomposition(char32_t cp) {
  if (cp < 0xC0 || cp >= 0x2000) return {};
  char32_t at = 0;
  for (std::size_t i = 0; i < std::size(ud::kDecompGap); ++i) {
    at += ud::kDecompGap[i];
    if (at < cp) continue;
    if (at > cp) break;
    const unsigned code = ud::kDecompSecond[i];
    Decomp d;
    d.first = ud::kDecompFirst[i];
    if ((code & 31) != 31) {
      d.second = ud::kComposeSecond[code & 31];
      d.composable = (code & 32) == 0;
    }
    return d;
  }
  return {};
}

// The character that `first` + `second` compose into, or 0.
char32_t compose(char32_t first, char32_t second) {
  if (first >= kLBase && first < kLBase + kLCount && second >= kVBase && second < kVBase + kVCount)
    return kSBase + ((first - kLBase) * kVCount + (second - kVBase)) * kTCount;
  if (first >= kSBase && first < kSBase + kSCount && (first - kSBase) % kTCount == 0 && second > kTBase &&
      second < kTBase + kTCount)
    return first + (second - kTBase);
  const auto* end = std::end(ud::kComposeSecond);
  const auto* it = std::find(std::begin(ud::kComposeSecond), end, second);
  if (it == end) return 0;
  const auto index = static_cast<unsigned>(it - std::begin(ud::kComposeSecond));
  char32_t at = 0;
  for (std::size_t i = 0; i < std::size(ud::kDecompGap); ++i) {
    at += ud::kDecompGap[i];
    if (ud::kDecompSecond[i] == index && ud::kDecompFirst[i] == first) return at;
  }
  return 0;
}

void decompose(char32_t cp, std::u32string& out) {
  if (cp >= kSBase && cp < kSBase + kSCount) {
    const char32_t s = cp - kSBase;
    out.push_back(kLBase + s / kNCount);
    out.push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount != 0) out.push_back(kTBase + s % kTCount);
    return;
  }
  const Decomp d = decomposition(cp);
  if (d.first == 0) {
    out.push_back(cp);
    return;
  }
  decompose(d.first, out);  // depth ≤ 3 in the table (e.g. U+1E08 → U+00C7 U+0301 → C U+0327 U+0301)
  if (d.second != 0) out.push_back(d.second);
}

}  // namespace

CharInfo info(char32_t cp) {
  CharInfo r;
  r.mapped = cp;
  unsigned attr = 15;  // a class outside the tables
  if (cp < 0x10000) {
    const auto* it = std::upper_bound(std::begin(ud::kClassStart), std::end(ud::kClassStart), cp);
    const auto i = static_cast<std::size_t>(it - std::begin(ud::kClassStart)) - 1;  // kClassStart[0] == 0
    attr = ud::kClassAttr[i];
    const unsigned kind = (attr >> 4) & 3;
    const unsigned code = attr >> 6;
    if (kind == 3) {  // alternating upper/lower pairs from the run's start
      const bool upper = ((cp - ud::kClassStart[i]) & 1) == code;
      r.case_kind = upper ? Case::kUpper : Case::kLower;
      r.mapped = upper ? cp + 1 : cp - 1;
      r.cat = upper ? Cat::kUpper : Cat::kLower;
      return r;
    }
    r.case_kind = static_cast<Case>(kind);
    if (kind != 0 && code != 0) r.mapped = static_cast<char32_t>(static_cast<int>(cp) + ud::kCaseDelta[code - 1]);
  }
  if ((attr & 15) == 15) {
    r.cat = classify(cp) == CharClass::kWord ? Cat::kLetter : Cat::kOther;
  } else {
    r.cat = static_cast<Cat>(attr & 15);
  }
  return r;
}

bool is_space(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
         cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000 || cp == 0xFEFF;
}

char32_t to_lower(char32_t cp) {
  const CharInfo i = info(cp);
  return i.case_kind == Case::kUpper && utf8_size(i.mapped) == utf8_size(cp) ? i.mapped : cp;
}

char32_t to_upper(char32_t cp) {
  const CharInfo i = info(cp);
  return i.case_kind == Case::kLower && utf8_size(i.mapped) == utf8_size(cp) ? i.mapped : cp;
}

int combining_class(char32_t cp) {
  for (std::size_t i = 0; i < std::size(ud::kCccRange); i += 3)
    if (cp >= ud::kCccRange[i] && cp < ud::kCccRange[i + 1]) return ud::kCccValue[ud::kCccRange[i + 2] + cp - ud::kCccRange[i]];
  return 0;
}

std::u32string nfc(std::u32string_view cps) {
  std::u32string d;
  d.reserve(cps.size() + 4);
  for (char32_t cp : cps) decompose(cp, d);
  // Canonical ordering: a stable sort by combining class of every run of non-starters.
  for (std::size_t i = 1; i < d.size(); ++i) {
    for (std::size_t j = i; j > 0; --j) {
      const int a = combining_class(d[j - 1]), b = combining_class(d[j]);
      if (b == 0 || a <= b) break;
      std::swap(d[j - 1], d[j]);
    }
  }
  // Canonical composition: each character joins the last starter unless blocked by one in between.
  std::u32string out;
  out.reserve(d.size());
  std::size_t starter = 0;
  bool have_starter = false;
  int last_class = -1;  // combining class of the last character kept after the starter (-1: none)
  for (char32_t cp : d) {
    const int cls = combining_class(cp);
    if (have_starter && (last_class < cls || (last_class == -1 && cls == 0))) {
      const char32_t c = compose(out[starter], cp);
      if (c != 0) {
        out[starter] = c;
        continue;
      }
    }
    if (cls == 0) {
      starter = out.size();
      have_starter = true;
      last_class = -1;
    } else {
      last_class = cls;
    }
    out.push_back(cp);
  }
  return out;
}

}  // namespace attnlens::text::unicode
